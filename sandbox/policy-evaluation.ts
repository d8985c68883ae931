// The policy evaluation rules for the host: guest/policy.js (their one owner, shared with the guest) with its types,
// and how a variable's value crosses back into the guest when the host drives the steps.

export {
  PER_CALL_COST, PER_POLICY_COST, BudgetExceeded, Interruption, referencedVariables, evaluatePolicy, evaluatePolicyAsync, planPrograms, mostSteps
} from './guest/policy.js'
export type { Failure, PolicyOutcome, PlanProgram, PolicyPlan, StepResult, StepEvaluator } from './guest/policy.js'
import type { PlanProgram, PolicyPlan, StepResult } from './guest/policy.js'
import type { EvalResult } from './sandbox.js'

/** A request's policies evaluated in one crossing: the shared variables once, each policy with its params. */
export interface PolicyBatch<P extends PlanProgram> {
  base: Record<string, unknown>
  items: Array<{ plan: PolicyPlan<P>, params: unknown, failOnError: boolean }>
}

/**
 * An expression's result as a host-driven policy takes it: a variable's value is carried on CEL-tagged
 * (`{"@cel": ...}`), so a later expression sees it with its CEL type (a double stays a double, a timestamp a timestamp).
 */
export function stepResult (r: EvalResult): StepResult {
  return { value: r.value, cost: r.cost, carried: { '@cel': r.tagged } }
}
