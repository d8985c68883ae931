// SelfSubjectRulesReview (authorization.orch.io/v1; `kubectl auth can-i --list`): what the requesting user may do in a namespace.

import { badRequest } from '../../errors/status-error.js'
import type { NonResourceRuleInfo, ResourceRuleInfo, RuleResolver } from '../../auth/types.js'
import type { Obj } from '../object-meta.js'
import { emptyMeta, type Review } from './virtual-resource.js'

/** A rule as authorization/v1 ResourceRule: verbs always, the other lists only when not empty (omitempty). */
function resourceRule (r: ResourceRuleInfo): Obj {
  const out: Obj = { verbs: [...r.verbs] }
  if (r.apiGroups.length > 0) out.apiGroups = [...r.apiGroups]
  if (r.resources.length > 0) out.resources = [...r.resources]
  if (r.resourceNames.length > 0) out.resourceNames = [...r.resourceNames]
  return out
}

function nonResourceRule (r: NonResourceRuleInfo): Obj {
  return r.nonResourceURLs.length > 0 ? { verbs: [...r.verbs], nonResourceURLs: [...r.nonResourceURLs] } : { verbs: [...r.verbs] }
}

/**
 * The rules `resolver` finds for the requesting user in spec.namespace (required). As kube-apiserver, the answer
 * is a new review carrying only the status; a resolver that fails is answered as incomplete with its error.
 */
export function selfSubjectRulesReview (resolver: RuleResolver): Review {
  return async (ctx, _namespace, obj) => {
    const namespace = ((obj.spec ?? {}) as Obj).namespace
    if (typeof namespace !== 'string' || namespace === '') throw badRequest('no namespace on request')
    let status: Obj
    try {
      const rules = await resolver.rulesFor(ctx.user, namespace)
      status = { resourceRules: rules.resourceRules.map(resourceRule), nonResourceRules: rules.nonResourceRules.map(nonResourceRule), incomplete: rules.incomplete }
      if (rules.evaluationError !== undefined && rules.evaluationError !== '') status.evaluationError = rules.evaluationError
    } catch (err) {
      status = { resourceRules: [], nonResourceRules: [], incomplete: true, evaluationError: err instanceof Error ? err.message : String(err) }
    }
    return { metadata: emptyMeta(), spec: {}, status }
  }
}
