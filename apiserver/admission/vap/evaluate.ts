// One policy evaluated for one request: match conditions, lazily evaluated variables, validations, audit annotations.
//
// Budgets as Kubernetes': each expression runs under the per-call cost limit (1,000,000), and all of a policy's
// expressions for one request share the per-policy runtime budget (10,000,000); past it nothing more runs.

import type { PooledProgram } from '../../../sandbox/expression-evaluator.js'
import { referencedVariables } from './environment.js'
import type { CompiledPolicy } from './compile.js'

export const PER_CALL_COST = 1_000_000
export const PER_POLICY_COST = 10_000_000

export interface Failure { message: string, reason?: string, expressionIndex?: number }

export interface PolicyOutcome {
  /** False when a match condition was false (the policy does not apply). */
  matched: boolean
  failures: Failure[]
  auditAnnotations: Record<string, string>
}

export class BudgetExceeded extends Error {}

/** Evaluates programs sharing one cost budget and one memo of variables. */
class Evaluation {
  private remaining: number
  private readonly memo = new Map<string, Promise<unknown>>()

  constructor (private readonly policy: CompiledPolicy, private readonly base: Record<string, unknown>, budget: number) {
    this.remaining = budget
  }

  async run (program: PooledProgram): Promise<unknown> {
    const variables: Record<string, unknown> = {}
    for (const name of referencedVariables(program.expression)) variables[name] = await this.variable(name)
    if (this.remaining <= 0) throw new BudgetExceeded('validation failed due to running out of cost budget, no further validation rules will be run')
    const { value, cost } = await program.evaluate({ ...this.base, variables }, { costLimit: Math.min(PER_CALL_COST, this.remaining) })
    this.remaining -= cost
    return value
  }

  private async variable (name: string): Promise<unknown> {
    let v = this.memo.get(name)
    if (v === undefined) {
      const p = this.policy.variables.get(name)
      v = p === undefined ? Promise.resolve(undefined) : this.run(p).then(plain)
      this.memo.set(name, v)
    }
    return await v
  }
}

/** A variable's value as the next crossing takes it: JSON (ints as numbers, maps as objects, bytes as base64). */
function plain (v: unknown): unknown {
  if (typeof v === 'bigint') return Number(v)
  if (v instanceof Uint8Array) return Buffer.from(v).toString('base64')
  if (v instanceof Date) return v.toISOString()
  if (v instanceof Map) return Object.fromEntries([...v].map(([k, x]) => [String(k), plain(x)]))
  if (Array.isArray(v)) return v.map(plain)
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]))
  return v
}

const errorText = (err: unknown): string => (err as Error).message

/** Runs `policy` against the request's variables (object, oldObject, request, params, namespaceObject). */
export async function evaluatePolicy (policy: CompiledPolicy, base: Record<string, unknown>, failOnError: boolean,
  budget = PER_POLICY_COST): Promise<PolicyOutcome> {
  const e = new Evaluation(policy, base, budget)
  const out: PolicyOutcome = { matched: true, failures: [], auditAnnotations: {} }
  try {
    for (const m of policy.matchConditions) {
      let v: unknown
      try { v = await e.run(m.program) } catch (err) {
        if (err instanceof BudgetExceeded) throw err
        if (failOnError) out.failures.push({ message: `failed to evaluate match condition '${m.name}': ${errorText(err)}` })
        return out
      }
      if (v !== true) { out.matched = false; return out }
    }
    for (const [i, v] of policy.validations.entries()) {
      let ok: unknown
      try { ok = await e.run(v.program) } catch (err) {
        if (err instanceof BudgetExceeded) throw err
        if (failOnError) out.failures.push({ message: `expression '${v.program.expression}' resulted in error: ${errorText(err)}`, expressionIndex: i })
        continue
      }
      if (ok === true) continue
      out.failures.push({ message: await failureMessage(e, v), reason: v.reason, expressionIndex: i })
    }
    for (const a of policy.auditAnnotations) {
      try {
        const value = await e.run(a.program)
        if (typeof value === 'string' && value !== '') out.auditAnnotations[a.key] = value
      } catch (err) {
        if (err instanceof BudgetExceeded) throw err
        if (failOnError) out.failures.push({ message: `valueExpression '${a.program.expression}' resulted in error: ${errorText(err)}` })
      }
    }
  } catch (err) {
    if (failOnError) out.failures.push({ message: errorText(err) })
  }
  return out
}

/** messageExpression first (an error or empty string falls back), then message, then Kubernetes' default. */
async function failureMessage (e: Evaluation, v: CompiledPolicy['validations'][number]): Promise<string> {
  if (v.messageProgram !== undefined) {
    try {
      const m = await e.run(v.messageProgram)
      if (typeof m === 'string' && m.trim() !== '' && !m.includes('\n')) return m
    } catch { /* falls back to message, as Kubernetes does */ }
  }
  if ((v.message ?? '') !== '') return v.message!
  return `failed expression: ${v.program.expression}`
}
