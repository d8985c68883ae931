// Whether a policy or binding's match resources select a request: rules, exclusions, namespace and object selectors.

import type { ResourceDefinition } from '../../schema/types.js'
import { upstreamGroup } from '../../schema/builtin/upstream-groups.js'
import { labelSelectorMatches } from '../../registry/label-selector.js'
import type { MatchResources, NamedRule } from './types.js'

export interface MatchRequest {
  definition: ResourceDefinition
  operation: string
  subresource: string
  name: string
  /** Labels of the object (the old one too: either matching selects, as Kubernetes does). */
  labels: Array<Record<string, string>>
  /** Labels of the request's namespace; undefined for cluster-scoped kinds. */
  namespaceLabels?: Record<string, string>
}

/** The names a rule's apiGroups may give the kind's group: orch's, the upstream `*.k8s.io`, and the bare one. */
function groupNames (group: string): string[] {
  const up = upstreamGroup(group)
  return up === undefined ? [group] : [group, up, group.slice(0, -'.orch.io'.length)]
}

const any = (list: string[] | undefined, value: string): boolean => (list ?? []).some(x => x === '*' || x === value)

function resourceMatches (patterns: string[] | undefined, resource: string, sub: string): boolean {
  const full = sub === '' ? resource : `${resource}/${sub}`
  return (patterns ?? []).some(p => {
    if (p === '*') return sub === ''
    if (p === '*/*') return true
    if (p === full) return true
    const [r, s] = p.split('/')
    return s !== undefined && ((r === '*' && s === sub) || (r === resource && s === '*' && sub !== ''))
  })
}

/** One rule against a request (matchPolicy Equivalent: the version need not match, as every version is the same object here). */
export function ruleMatches (rule: NamedRule, r: MatchRequest, equivalent: boolean): boolean {
  const d = r.definition
  if (!(rule.operations ?? []).some(o => o === '*' || o === r.operation)) return false
  if (!groupNames(d.group).some(g => any(rule.apiGroups, g))) return false
  if (!equivalent && !any(rule.apiVersions, d.version)) return false
  if (!resourceMatches(rule.resources, d.plural, r.subresource)) return false
  const scope = rule.scope ?? '*'
  if (scope === 'Cluster' && d.namespaced) return false
  if (scope === 'Namespaced' && !d.namespaced) return false
  if ((rule.resourceNames ?? []).length > 0 && !rule.resourceNames!.includes(r.name)) return false
  return true
}

/**
 * Kubernetes' order: namespace selector, object selector, then rules and exclusions. `rulesOnly` skips the selectors
 * (a first cheap pass before the namespace is read).
 */
export function matches (m: MatchResources | undefined, r: MatchRequest, requireRules: boolean, rulesOnly = false): boolean {
  if (m === undefined) return !requireRules
  if (!rulesOnly && !selectorsMatch(m, r)) return false
  const equivalent = (m.matchPolicy ?? 'Equivalent') === 'Equivalent'
  const rules = m.resourceRules ?? []
  if ((requireRules || rules.length > 0) && !rules.some(rule => ruleMatches(rule, r, equivalent))) return false
  return !(m.excludeResourceRules ?? []).some(rule => ruleMatches(rule, r, equivalent))
}

const everything = Object.freeze({})

/** The namespace and object selectors alone (the second pass, once the rules are known to match). */
export function selectorsMatch (m: MatchResources | undefined, r: MatchRequest): boolean {
  if (m === undefined) return true
  if (r.namespaceLabels !== undefined && !labelSelectorMatches(m.namespaceSelector ?? everything, r.namespaceLabels)) return false
  return r.labels.some(l => labelSelectorMatches(m.objectSelector ?? everything, l))
}
