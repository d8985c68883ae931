// Types of policy.js (the policy evaluation rules, plain JavaScript shared by the guest and the host).

export declare const PER_CALL_COST: number
export declare const PER_POLICY_COST: number

export interface Failure { message: string, reason?: string, expressionIndex?: number }

export interface PolicyOutcome {
  /** False when a match condition was false (the policy does not apply). */
  matched: boolean
  failures: Failure[]
  auditAnnotations: Record<string, string>
}

/** What the rules need of a program: its text and, when known, the variables it refers to. */
export interface PlanProgram { expression: string, variableNames?: string[] }

/** A policy's compiled expressions; `P` is a program (host) or a program's key in a sandbox thread. */
export interface PolicyPlan<P extends PlanProgram> {
  matchConditions: Array<{ name: string, program: P }>
  variables: Map<string, P>
  validations: Array<{ program: P, message?: string, messageProgram?: P, reason?: string }>
  auditAnnotations: Array<{ key: string, program: P }>
}

/**
 * One expression's result: its value, the cost it used, and optionally the value as the evaluator wants it back in
 * a later expression's `variables` (the host: a CEL-tagged value, so types survive the JSON crossing).
 */
export interface StepResult { value: unknown, cost: number, carried?: unknown }
/** Runs `program` with the CEL `variables` map under `costLimit`; throws the expression's error. */
export type StepEvaluator<P, R = StepResult> = (program: P, variables: Record<string, unknown>, costLimit: number) => R

export declare class BudgetExceeded extends Error {}
/** Thrown by an evaluator to stop a policy's evaluation as a whole; passes through the rules. */
export declare class Interruption extends Error {
  constructor (cause?: unknown)
  readonly cause: unknown
}

export declare function referencedVariables (expression: string): string[]
export declare function evaluatePolicy<P extends PlanProgram> (plan: PolicyPlan<P>, failOnError: boolean, evaluate: StepEvaluator<P>, budget?: number): PolicyOutcome
export declare function evaluatePolicyAsync<P extends PlanProgram> (plan: PolicyPlan<P>, failOnError: boolean, evaluate: StepEvaluator<P, Promise<StepResult>>, budget?: number): Promise<PolicyOutcome>
export declare function planPrograms<P extends PlanProgram> (plan: PolicyPlan<P>): P[]
export declare function mostSteps (plan: PolicyPlan<PlanProgram>): number
