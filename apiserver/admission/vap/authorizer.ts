// The `authorizer` CEL variable with decisions from the server's real (asynchronous) Authorizer.
//
// The sandbox's authorizer library asks its host synchronously, which the thread pool cannot do, so expressions that
// use `authorizer` run on a QuickJS sandbox of their own by replay: each evaluation answers from the decisions fetched
// so far, records the checks it could not answer, and when there were any, fetches them from the Authorizer and runs
// again (CEL is deterministic, so the last run saw every decision it used). At most MAX_ROUNDS runs.

import type { Attributes, Authorizer, UserInfo } from '../../auth/types.js'
import { nonResourceAttributes, resourceAttributes } from '../../auth/types.js'
import type { AuthorizationDecision, AuthorizationRequest } from '../../../sandbox/sandbox.js'
import type { ExpressionEvaluator } from '../../../sandbox/expression-evaluator.js'

const MAX_ROUNDS = 8

/** Whether an expression uses the `authorizer` variable (and so needs the replaying evaluator). */
export const usesAuthorizer = (expression: string): boolean => /\bauthorizer\b/.test(expression)

const keyOf = (r: AuthorizationRequest): string => JSON.stringify([r.user, r.group, r.resource, r.subresource, r.namespace, r.name, r.path, r.verb])

function attributesOf (r: AuthorizationRequest, requester: UserInfo): Attributes {
  // The request's user keeps its groups and extra; a serviceAccount() check is asked for that account's identity.
  const user: UserInfo = r.user === requester.username ? requester
    : { username: r.user ?? '', groups: (r.user ?? '').startsWith('system:serviceaccount:') ? ['system:serviceaccounts', `system:serviceaccounts:${(r.user ?? '').split(':')[2]}`, 'system:authenticated'] : [] }
  if (r.path !== undefined) return nonResourceAttributes(user, r.verb, r.path)
  return resourceAttributes(user, { verb: r.verb, apiGroup: r.group, resource: r.resource, subresource: r.subresource, namespace: r.namespace, name: r.name })
}

/** An evaluator of authorizer-using expressions; variables must carry `request.userInfo` (the requester). */
export async function createAuthorizerEvaluator (authorizer: Authorizer): Promise<ExpressionEvaluator> {
  const state: { known: Map<string, AuthorizationDecision>, misses: Map<string, AuthorizationRequest> } = { known: new Map(), misses: new Map() }
  // The sandbox (QuickJS) is loaded when the first policy using `authorizer` is compiled.
  const { createSandbox } = await import('../../../sandbox/sandbox.js')
  const sandbox = await createSandbox({
    authorize: (r) => {
      const d = state.known.get(keyOf(r))
      if (d !== undefined) return d
      state.misses.set(keyOf(r), r)
      return { decision: 'noopinion', reason: 'pending' }
    }
  })
  return {
    async compileExpression (expression, environment, options) {
      const p = sandbox.compile(expression, environment, options)
      return {
        expression, type: p.type, estimatedCost: p.estimatedCost, release: () => p.release(),
        async evaluate (variables = {}, opts) {
          const requester = ((variables.request as { userInfo?: UserInfo } | undefined)?.userInfo) ?? { username: '', groups: [] }
          const known = new Map<string, AuthorizationDecision>()
          for (let round = 0; ; round++) {
            state.known = known
            state.misses = new Map()
            const result = p.evaluate({ ...variables, authorizer: { user: requester.username } }, opts)
            const misses = state.misses
            if (misses.size === 0 || round + 1 >= MAX_ROUNDS) return result
            await Promise.all([...misses].map(async ([k, r]) => {
              try {
                const d = await authorizer.authorize(attributesOf(r, requester))
                known.set(k, { decision: d.decision === 'noOpinion' ? 'noopinion' : d.decision, reason: d.reason })
              } catch (err) {
                known.set(k, { decision: 'noopinion', error: (err as Error).message })
              }
            }))
          }
        }
      }
    }
  }
}
