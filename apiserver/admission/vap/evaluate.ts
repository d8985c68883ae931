// A request's matching policies evaluated: in one crossing to the sandbox pool when it can batch them, otherwise
// (expressions using `authorizer`, an in-thread evaluator) expression by expression on the host.
//
// The policy semantics (match conditions, lazy variables, validations, messageExpressions, audit annotations and
// the per-call and per-policy cost budgets) live in sandbox/guest/policy.js, shared by both ways and by the guest.

import type { ExpressionEvaluator, PooledProgram } from '../../../sandbox/expression-evaluator.js'
import { PER_POLICY_COST, evaluatePolicyAsync, stepResult, planPrograms, type PolicyBatch, type PolicyOutcome, type PolicyPlan } from '../../../sandbox/policy-evaluation.js'

export { PER_CALL_COST, PER_POLICY_COST, BudgetExceeded, type Failure, type PolicyOutcome } from '../../../sandbox/policy-evaluation.js'

/** Runs `policy` against the request's variables (object, oldObject, request, params, namespaceObject), one crossing per expression. */
export async function evaluatePolicy (policy: PolicyPlan<PooledProgram>, base: Record<string, unknown>, failOnError: boolean,
  budget = PER_POLICY_COST): Promise<PolicyOutcome> {
  return await evaluatePolicyAsync(policy, failOnError,
    async (program, variables, costLimit) => stepResult(await program.evaluate({ ...base, variables }, { costLimit })), budget)
}

/** Evaluates a request's policies on one evaluator (see createPolicyEvaluation). */
export type PolicyEvaluation = (batch: PolicyBatch<PooledProgram>) => Promise<PolicyOutcome[]>

/**
 * Every item of a batch evaluated: the items whose programs all belong to `evaluator` in one crossing
 * (evaluatePolicies), the others one expression at a time. Outcomes in the items' order. A crossing that fails as
 * a whole (its thread lost) fails each of its items as an evaluation error would (when failOnError). Whether a plan
 * can go in the crossing is found once per plan object (a policy's generation).
 */
export function createPolicyEvaluation (evaluator: ExpressionEvaluator): PolicyEvaluation {
  const batchable = new WeakMap<PolicyPlan<PooledProgram>, boolean>()
  const canBatch = (plan: PolicyPlan<PooledProgram>): boolean => {
    let b = batchable.get(plan)
    if (b === undefined) {
      b = evaluator.evaluatePolicies !== undefined && evaluator.owns !== undefined && planPrograms(plan).every(p => evaluator.owns!(p))
      batchable.set(plan, b)
    }
    return b
  }
  return async (batch) => {
    const out: PolicyOutcome[] = new Array(batch.items.length)
    const batched: number[] = []
    const single: number[] = []
    for (let i = 0; i < batch.items.length; i++) (canBatch(batch.items[i].plan) ? batched : single).push(i)
    await Promise.all([
      (async () => {
        if (batched.length === 0) return
        const items = batched.length === batch.items.length ? batch.items : batched.map(i => batch.items[i])
        try {
          const r = await evaluator.evaluatePolicies!({ base: batch.base, items })
          for (const [j, i] of batched.entries()) out[i] = r[j]
        } catch (err) {
          for (const i of batched) out[i] = { matched: true, failures: batch.items[i].failOnError ? [{ message: (err as Error).message }] : [], auditAnnotations: {} }
        }
      })(),
      ...single.map(async i => {
        const item = batch.items[i]
        out[i] = await evaluatePolicy(item.plan, { ...batch.base, params: item.params }, item.failOnError)
      })
    ])
    return out
  }
}
