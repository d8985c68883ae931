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

/**
 * Every item of `batch` evaluated: the items whose programs all belong to `evaluator` in one crossing
 * (evaluatePolicies), the others one expression at a time. Outcomes in the items' order. A crossing that fails as
 * a whole (its thread lost) fails each of its items as an evaluation error would (when failOnError).
 */
export async function evaluatePolicies (evaluator: ExpressionEvaluator, batch: PolicyBatch<PooledProgram>): Promise<PolicyOutcome[]> {
  const out: PolicyOutcome[] = new Array(batch.items.length)
  const batched: number[] = []
  const single: number[] = []
  for (const [i, item] of batch.items.entries()) {
    const ownsAll = evaluator.evaluatePolicies !== undefined && evaluator.owns !== undefined && planPrograms(item.plan).every(p => evaluator.owns!(p))
    ;(ownsAll ? batched : single).push(i)
  }
  await Promise.all([
    (async () => {
      if (batched.length === 0) return
      const items = batched.map(i => batch.items[i])
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
