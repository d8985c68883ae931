// The interface through which single CEL expressions (claim mappings, match conditions) are compiled and evaluated.
//
// Contract: compileExpression() type-checks the expression against the environment once and rejects with a
// SandboxError (CEL_ERR_COMPILE, CEL_ERR_TYPE_CHECK, CEL_ERR_COST_ESTIMATE) when it does not compile; the
// returned program evaluates asynchronously under the sandbox's per-call cost budget and deadline, and
// rejects with a SandboxError when it cannot finish. release() frees it (idempotent).

import type { CelEnvironment, CompileOptions, CostRange, EvalResult, Sandbox } from './sandbox.js'
import type { PolicyBatch, PolicyOutcome } from './policy-evaluation.js'

export interface PooledProgram {
  readonly expression: string
  /** The checked result type (e.g. `bool`, `string`, `dyn`). */
  readonly type: string
  readonly estimatedCost: CostRange
  evaluate(variables?: Record<string, unknown>, options?: { costLimit?: number; deadlineMs?: number }): Promise<EvalResult>
  release(): void
}

export interface ExpressionEvaluator {
  compileExpression(expression: string, environment?: CelEnvironment, options?: CompileOptions): Promise<PooledProgram>
  /**
   * Evaluates a request's admission policies in one crossing (every program must be one this evaluator compiled:
   * see owns()); rejects with a SandboxError only when the crossing itself failed (a lost thread).
   * Absent: the caller evaluates expression by expression.
   */
  evaluatePolicies?(batch: PolicyBatch<PooledProgram>): Promise<PolicyOutcome[]>
  /** Whether `program` was compiled by this evaluator (and so can be part of evaluatePolicies' batch). */
  owns?(program: PooledProgram): boolean
}

/** Expressions evaluated by `sandbox` on the calling thread (a long expression blocks it until its deadline): tests, tools. */
export function inThreadExpressionEvaluator(sandbox: Sandbox): ExpressionEvaluator {
  return {
    async compileExpression(expression, environment, options) {
      const p = sandbox.compile(expression, environment, options)
      return {
        expression,
        type: p.type,
        estimatedCost: p.estimatedCost,
        evaluate: async (variables, opts) => p.evaluate(variables, opts),
        release: () => p.release(),
      }
    },
  }
}
