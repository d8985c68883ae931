// Decisions and rule listings over the policy index: Kubernetes' RBACAuthorizer and its RulesFor, with their reason texts.

import type { Attributes, AuthorizationResult, Authorizer, NonResourceRuleInfo, ResourceRuleInfo, RuleResolver, UserInfo } from '../types.js'
import type { PolicyIndex } from './policy-index.js'
import { ruleAllows } from './rules.js'

/** utilerrors.NewAggregate's text: one error alone, several in brackets. */
const aggregate = (errs: string[]): string => errs.length === 1 ? errs[0]! : `[${errs.join(', ')}]`

/** Allows with `RBAC: allowed by <binding>` at the first rule that allows; else no opinion, naming roles that could not be found. */
export function rbacAuthorizer (index: PolicyIndex, ready: Promise<unknown>): Authorizer {
  return {
    async authorize (a: Attributes): Promise<AuthorizationResult> {
      await ready
      let reason = ''
      const errors: string[] = []
      index.visitRulesFor(a.user, a.namespace, (source, rule, err) => {
        if (err !== undefined) { errors.push(err); return true }
        if (rule !== undefined && ruleAllows(a, rule)) { reason = `RBAC: allowed by ${source}`; return false }
        return true
      })
      if (reason !== '') return { decision: 'allow', reason }
      return { decision: 'noOpinion', reason: errors.length === 0 ? '' : `RBAC: ${aggregate(errors)}` }
    }
  }
}

/** Every rule reachable by the user in the namespace (cluster-wide ones included); incomplete when a role is missing. */
export function rbacRuleResolver (index: PolicyIndex): RuleResolver {
  return {
    rulesFor (user: UserInfo, namespace: string) {
      const resourceRules: ResourceRuleInfo[] = []
      const nonResourceRules: NonResourceRuleInfo[] = []
      const errors: string[] = []
      index.visitRulesFor(user, namespace, (_, rule, err) => {
        if (err !== undefined) errors.push(err)
        else if (rule !== undefined && (rule.nonResourceURLs ?? []).length > 0) {
          nonResourceRules.push({ verbs: [...rule.verbs], nonResourceURLs: [...rule.nonResourceURLs!] })
        } else if (rule !== undefined) {
          resourceRules.push({ verbs: [...rule.verbs], apiGroups: [...(rule.apiGroups ?? [])], resources: [...(rule.resources ?? [])], resourceNames: [...(rule.resourceNames ?? [])] })
        }
        return true
      })
      return errors.length === 0
        ? { resourceRules, nonResourceRules, incomplete: false }
        : { resourceRules, nonResourceRules, incomplete: true, evaluationError: aggregate(errors) }
    }
  }
}
