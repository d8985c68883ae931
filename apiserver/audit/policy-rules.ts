// Which audit level and stages a request gets: the first policy rule that matches it (Kubernetes' policy checker).

import type { Attributes } from '../auth/types.js'
import { upstreamGroup } from '../schema/builtin/upstream-groups.js'
import type { GroupResources, Level, Policy, PolicyRule, Stage } from './policy.js'

/** What the policy decided for one request. */
export interface RequestAuditConfig {
  level: Level
  /** The policy's own omitted stages plus the rule's. */
  omitStages: Stage[]
  omitManagedFields: boolean
}

// `rbac.authorization.orch.io` is also served as `rbac.authorization.k8s.io`; a rule naming either matches both.
const sameGroup = (a: string, b: string): boolean => a === b || (upstreamGroup(a) ?? a) === (upstreamGroup(b) ?? b)

function pathMatches (path: string, spec: string): boolean {
  if (spec === '*' || spec === path) return true
  return spec.endsWith('*') && path.startsWith(spec.replace(/\*+$/, ''))
}

function resourceMatches (gr: GroupResources, a: Attributes): boolean {
  if (!sameGroup(gr.group, a.apiGroup)) return false
  if (gr.resources.length === 0) return true
  if (gr.resourceNames.length > 0 && !gr.resourceNames.includes(a.name)) return false
  const combined = a.subresource === '' ? a.resource : `${a.resource}/${a.subresource}`
  return gr.resources.some(r =>
    r === combined || r === '*' ||
    (a.subresource !== '' && r.startsWith('*/') && r.slice(2) === a.subresource) ||
    (r.endsWith('/*') && r.slice(0, -2) === a.resource))
}

/** Kubernetes' ruleMatches: every selector the rule sets must match; resource selectors never match non-resource requests and back. */
export function ruleMatches (rule: PolicyRule, a: Attributes): boolean {
  if (rule.users.length > 0 && !rule.users.includes(a.user.username)) return false
  if (rule.userGroups.length > 0 && !(a.user.groups ?? []).some(g => rule.userGroups.includes(g))) return false
  if (rule.verbs.length > 0 && !rule.verbs.includes(a.verb)) return false
  if (rule.namespaces.length > 0 || rule.resources.length > 0) {
    if (!a.resourceRequest) return false
    // Cluster-scoped resources have the namespace ''.
    if (rule.namespaces.length > 0 && !rule.namespaces.includes(a.namespace)) return false
    return rule.resources.length === 0 || rule.resources.some(gr => resourceMatches(gr, a))
  }
  if (rule.nonResourceURLs.length > 0) return !a.resourceRequest && rule.nonResourceURLs.some(spec => pathMatches(a.path, spec))
  return true
}

/** Evaluates requests against one policy; without a matching rule a request is not audited (level None). */
export class PolicyEvaluator {
  constructor (private readonly policy: Policy) {}

  evaluate (a: Attributes): RequestAuditConfig {
    const p = this.policy
    for (const rule of p.rules) {
      if (!ruleMatches(rule, a)) continue
      const omitStages = [...new Set([...p.omitStages, ...rule.omitStages])]
      return { level: rule.level, omitStages, omitManagedFields: rule.omitManagedFields ?? p.omitManagedFields }
    }
    return { level: 'None', omitStages: p.omitStages, omitManagedFields: p.omitManagedFields }
  }
}
