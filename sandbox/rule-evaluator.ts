// The one interface through which CRD validation rules are compiled and evaluated, in this thread or in the pool.
//
// Contract: compile() checks every rule of a schema once (field errors when one does not compile or costs
// too much); the returned RuleSet evaluates objects asynchronously and is released when no longer served.
// evaluate() rejects with a SandboxError when the rules cannot finish (cost budget, memory, deadline).

import type { FieldError, StructuralSchema } from '../apiserver/schema/types.js'
import type { Sandbox } from './sandbox.js'
import { compileValidationRules, evaluateValidationRules, type CompileValidationOptions, type CompiledRuleInfo, type ValidationOutcome } from './validation.js'

export type RuleCompileOptions = Omit<CompileValidationOptions, 'sandbox'>

export interface RuleSet {
  readonly rules: CompiledRuleInfo[]
  /** Sum of estimate.max x cardinality over all rules. */
  readonly totalEstimate: number
  evaluate(newObj: unknown, oldObj?: unknown): Promise<ValidationOutcome>
  release(): void
}

export type RuleCompileResult = { ok: true; rules: RuleSet } | { ok: false; errors: FieldError[] }

export interface RuleEvaluator {
  compile(schema: StructuralSchema, options?: RuleCompileOptions): Promise<RuleCompileResult>
  /** Stops what the evaluator runs (threads); later calls reject. */
  close(): Promise<void>
}

/**
 * Rules evaluated by `sandbox` on the calling thread (a long rule blocks it until its deadline): for tests
 * and tools. `close` disposes the sandbox only when `owned`.
 */
export function inThreadRuleEvaluator(sandbox: Sandbox, owned = false): RuleEvaluator {
  return {
    async compile(schema, options = {}) {
      const r = compileValidationRules(schema, { ...options, sandbox })
      if (!r.ok) return r
      const c = r.compiled
      return {
        ok: true,
        rules: {
          rules: c.rules,
          totalEstimate: c.totalEstimate,
          evaluate: async (newObj, oldObj) => evaluateValidationRules(c, newObj, oldObj),
          release: () => c.release(),
        },
      }
    },
    async close() {
      if (owned) sandbox.dispose()
    },
  }
}
