// The rules behind SelfSubjectRulesReview for each --authorization-mode, joined in the authorizer chain's order.

import type { AuthorizationMode } from './authorizer.js'
import { SYSTEM_MASTERS, type RuleResolver, type RulesResult } from './types.js'

const everything = (): RulesResult => ({
  resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], resourceNames: [] }],
  nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
  incomplete: false
})
const nothing = (): RulesResult => ({ resourceRules: [], nonResourceRules: [], incomplete: false })

/** AlwaysAllow: every verb on everything. */
export const allowAllRules: RuleResolver = { rulesFor: () => everything() }
/** AlwaysDeny: no rules, and that is the complete answer. */
export const denyAllRules: RuleResolver = { rulesFor: () => nothing() }
/** system:masters may do anything (the privileged-group authorizer's rules). */
export const privilegedGroupRules: RuleResolver = { rulesFor: user => user.groups.includes(SYSTEM_MASTERS) ? everything() : nothing() }

/** Every resolver's rules, concatenated; incomplete when any is, with their errors joined (Kubernetes' union resolver). */
export function unionRuleResolver (resolvers: RuleResolver[]): RuleResolver {
  return {
    async rulesFor (user, namespace) {
      const out = nothing()
      const errors: string[] = []
      for (const r of resolvers) {
        let got: RulesResult
        try { got = await r.rulesFor(user, namespace) } catch (err) { errors.push(err instanceof Error ? err.message : String(err)); out.incomplete = true; continue }
        out.resourceRules.push(...got.resourceRules)
        out.nonResourceRules.push(...got.nonResourceRules)
        if (got.incomplete) out.incomplete = true
        if (got.evaluationError !== undefined && got.evaluationError !== '') errors.push(got.evaluationError)
      }
      if (errors.length > 0) out.evaluationError = errors.length === 1 ? errors[0] : `[${errors.join(', ')}]`
      return out
    }
  }
}

/** The resolver for the modes (as buildAuthorizer chains the authorizers), with `rbac` supplying RBAC's rules. */
export function buildRuleResolver (modes: AuthorizationMode[], rbac: () => RuleResolver): RuleResolver {
  const chain: RuleResolver[] = [privilegedGroupRules]
  // The Node authorizer lists no rules (as Kubernetes' RulesFor of the node authorizer).
  for (const m of modes) if (m !== 'Node') chain.push(m === 'AlwaysAllow' ? allowAllRules : m === 'AlwaysDeny' ? denyAllRules : rbac())
  return unionRuleResolver(chain)
}
