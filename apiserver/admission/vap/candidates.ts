// Which bindings' rules select a kind of write (definition, operation, subresource), kept until a policy or binding
// changes: a write no policy selects costs two map lookups.

import type { ResourceDefinition } from '../../schema/types.js'
import { matches, type MatchRequest } from './matching.js'
import type { PolicySource } from './source.js'
import type { BindingObject, MatchResources, PolicyObject } from './types.js'

export type Candidate = [PolicyObject, BindingObject]

/** True when a rule names resources: its verdict depends on the object's name, so it cannot be kept per kind. */
function namesResources (m: MatchResources | undefined): boolean {
  return [...(m?.resourceRules ?? []), ...(m?.excludeResourceRules ?? [])].some(r => (r.resourceNames ?? []).length > 0)
}

/**
 * `candidatesFor(req)`: the [policy, binding] pairs, in binding order, whose rules (not yet their selectors) select the
 * request. Answers from a table per definition, operation and subresource, made again when the source changes; when
 * some rule names resources, every request is matched afresh.
 */
export function createCandidateIndex (source: PolicySource): (req: MatchRequest) => Candidate[] {
  let generation = -1
  let byDefinition = new WeakMap<ResourceDefinition, Map<string, Candidate[]>>()
  let perKind = true
  const scan = (req: MatchRequest): Candidate[] => {
    const out: Candidate[] = []
    for (const binding of source.bindings.values()) {
      const policy = source.policies.get(binding.spec?.policyName ?? '')
      if (policy === undefined || !matches(policy.spec?.matchConstraints, req, true, true)) continue
      if (binding.spec?.matchResources !== undefined && !matches(binding.spec.matchResources, req, false, true)) continue
      out.push([policy, binding])
    }
    return out
  }
  return (req) => {
    if (source.generation() !== generation) {
      generation = source.generation()
      byDefinition = new WeakMap()
      perKind = ![...source.bindings.values()].some(b => namesResources(b.spec?.matchResources) ||
        namesResources(source.policies.get(b.spec?.policyName ?? '')?.spec?.matchConstraints))
    }
    if (!perKind) return scan(req)
    let kinds = byDefinition.get(req.definition)
    if (kinds === undefined) byDefinition.set(req.definition, (kinds = new Map()))
    const key = `${req.operation} ${req.subresource}`
    let found = kinds.get(key)
    if (found === undefined) kinds.set(key, (found = scan(req)))
    return found
  }
}
