// Which webhooks a write goes to: rules (with matchPolicy Equivalent), namespaceSelector and objectSelector.

import { labelSelectorMatches, type LabelSelectorObject } from '../../registry/label-selector.js'
import { upstreamGroup } from '../../schema/builtin/upstream-groups.js'
import type { ResourceDefinition } from '../../schema/types.js'

export interface Rule { operations?: string[]; apiGroups?: string[]; apiVersions?: string[]; resources?: string[]; scope?: string }

/** The group/version/resource a request is about, and what a rule is checked against. */
export interface RequestTarget { group: string; version: string; resource: string; subresource: string; kind: string }

export interface MatchInput extends RequestTarget { operation: string; namespace: string }

const hasOrStar = (list: string[] | undefined, v: string): boolean => (list ?? []).some(x => x === '*' || x === v)

function resourceMatches (resources: string[] | undefined, resource: string, subresource: string): boolean {
  for (const r of resources ?? []) {
    const i = r.indexOf('/')
    const [res, sub] = i < 0 ? [r, ''] : [r.slice(0, i), r.slice(i + 1)]
    if ((res === '*' || res === resource) && (sub === '*' || sub === subresource)) return true
  }
  return false
}

function scopeMatches (scope: string | undefined, namespace: string): boolean {
  if (scope === 'Cluster') return namespace === ''
  if (scope === 'Namespaced') return namespace !== ''
  return true
}

/** Kubernetes' rule matcher; DELETE and CONNECT of namespaces count as namespaced only through their name. */
export function ruleMatches (r: Rule, m: MatchInput): boolean {
  const namespace = m.group === '' && m.resource === 'namespaces' ? '' : m.namespace
  return hasOrStar(r.operations, m.operation) && hasOrStar(r.apiGroups, m.group) && hasOrStar(r.apiVersions, m.version) &&
    resourceMatches(r.resources, m.resource, m.subresource) && scopeMatches(r.scope, namespace)
}

/** The other spelling of a group (`apps.orch.io` <-> `apps.k8s.io`), if it has one. */
function groupSpellings (group: string): string[] {
  const up = upstreamGroup(group)
  if (up !== undefined) return [group, up]
  if (group.endsWith('.k8s.io')) return [group, group.slice(0, -'.k8s.io'.length) + '.orch.io']
  return [group]
}

/**
 * The target a webhook sees: the request's own when a rule matches it; with matchPolicy Equivalent, else the first
 * equivalent one (the other spelling of the group, another served version of the same kind) a rule matches.
 */
export function matchedTarget (rules: Rule[], matchPolicy: string | undefined, m: MatchInput, served: () => ResourceDefinition[]): RequestTarget | undefined {
  if (rules.some(r => ruleMatches(r, m))) return m
  if (matchPolicy === 'Exact') return undefined
  const groups = groupSpellings(m.group)
  for (const d of served()) {
    if (d.plural !== m.resource || !groups.includes(d.group) || (d.group === m.group && d.version === m.version)) continue
    const t = { ...m, group: d.group, version: d.version, kind: d.kind }
    if (rules.some(r => ruleMatches(r, t))) return t
  }
  return undefined
}

const labelsOf = (o: Record<string, any> | undefined): Record<string, string> | undefined => o?.metadata?.labels

/** objectSelector: the new or the old object's labels match (an absent object never does, as in Kubernetes). */
export function objectSelectorMatches (selector: LabelSelectorObject | undefined, object: Record<string, any> | undefined, oldObject: Record<string, any> | undefined): boolean {
  if (selector === undefined || isEmpty(selector)) return true
  return (object !== undefined && labelSelectorMatches(selector, labelsOf(object) ?? {})) ||
    (oldObject !== undefined && labelSelectorMatches(selector, labelsOf(oldObject) ?? {}))
}

export function isEmpty (s: LabelSelectorObject): boolean {
  return Object.keys(s.matchLabels ?? {}).length === 0 && (s.matchExpressions ?? []).length === 0
}
