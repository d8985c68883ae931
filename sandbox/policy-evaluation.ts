// One CEL admission policy evaluated for one request: match conditions, lazily evaluated variables, validations,
// messageExpressions, audit annotations, as a generator of expression evaluations, so the same logic runs on the
// host (one crossing per expression) and inside a sandbox thread (one crossing per request, `policyBatch`).
//
// Budgets as Kubernetes': each expression runs under the per-call cost limit (1,000,000), and all of a policy's
// expressions for one request share the per-policy runtime budget (10,000,000); past it nothing more runs.

export const PER_CALL_COST = 1_000_000
export const PER_POLICY_COST = 10_000_000

export interface Failure { message: string, reason?: string, expressionIndex?: number }

export interface PolicyOutcome {
  /** False when a match condition was false (the policy does not apply). */
  matched: boolean
  failures: Failure[]
  auditAnnotations: Record<string, string>
}

/** A policy's compiled expressions; `P` is a program (host) or a program's key in a sandbox thread. */
export interface PolicyPlan<P extends { expression: string }> {
  matchConditions: Array<{ name: string, program: P }>
  variables: Map<string, P>
  validations: Array<{ program: P, message?: string, messageProgram?: P, reason?: string }>
  auditAnnotations: Array<{ key: string, program: P }>
}

/**
 * One evaluation the generator asks for: `program` over the request's variables (`base`, the same object for every
 * step of a policy) and `variables` (the CEL `variables` map). The driver answers `{ value, cost }` or throws into it.
 */
export interface PolicyStep<P> { program: P, base: Record<string, unknown>, variables: Record<string, unknown>, costLimit: number }
export interface StepResult { value: unknown, cost: number }

export class BudgetExceeded extends Error {}

/** Names of variables an expression refers to (`variables.x`), for lazy evaluation in dependency order. */
export function referencedVariables (expression: string): string[] {
  const out = new Set<string>()
  for (const m of expression.matchAll(/\bvariables\s*\.\s*([A-Za-z_][A-Za-z0-9_]*)/g)) out.add(m[1])
  for (const m of expression.matchAll(/\bvariables\s*\[\s*['"]([A-Za-z_][A-Za-z0-9_]*)['"]\s*\]/g)) out.add(m[1])
  return [...out]
}

type Memo = { ok: true, value: unknown } | { ok: false, error: unknown }

/** Evaluations sharing one cost budget and one memo of variables. */
class Evaluation<P extends { expression: string }> {
  private remaining: number
  private readonly memo = new Map<string, Memo>()

  constructor (private readonly plan: PolicyPlan<P>, private readonly base: Record<string, unknown>, budget: number) {
    this.remaining = budget
  }

  * run (program: P): Generator<PolicyStep<P>, unknown, StepResult> {
    const variables: Record<string, unknown> = {}
    for (const name of referencedVariables(program.expression)) variables[name] = yield * this.variable(name)
    if (this.remaining <= 0) throw new BudgetExceeded('validation failed due to running out of cost budget, no further validation rules will be run')
    const { value, cost } = yield { program, base: this.base, variables, costLimit: Math.min(PER_CALL_COST, this.remaining) }
    this.remaining -= cost
    return value
  }

  private * variable (name: string): Generator<PolicyStep<P>, unknown, StepResult> {
    let m = this.memo.get(name)
    if (m === undefined) {
      const p = this.plan.variables.get(name)
      // A variable referring to itself (directly or not) sees itself unset rather than recursing.
      this.memo.set(name, { ok: true, value: undefined })
      if (p === undefined) m = { ok: true, value: undefined }
      else {
        try { m = { ok: true, value: plain(yield * this.run(p)) } } catch (error) { m = { ok: false, error } }
      }
      this.memo.set(name, m)
    }
    if (!m.ok) throw m.error
    return m.value
  }
}

/** A variable's value as the next evaluation takes it: JSON (ints as numbers, maps as objects, bytes as base64). */
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

/** The evaluations of `plan` against the request's variables (object, oldObject, request, params, namespaceObject). */
export function * policySteps<P extends { expression: string }> (plan: PolicyPlan<P>, base: Record<string, unknown>, failOnError: boolean,
  budget = PER_POLICY_COST): Generator<PolicyStep<P>, PolicyOutcome, StepResult> {
  const e = new Evaluation(plan, base, budget)
  const out: PolicyOutcome = { matched: true, failures: [], auditAnnotations: {} }
  try {
    for (const m of plan.matchConditions) {
      let v: unknown
      try { v = yield * e.run(m.program) } catch (err) {
        if (err instanceof BudgetExceeded) throw err
        if (failOnError) out.failures.push({ message: `failed to evaluate match condition '${m.name}': ${errorText(err)}` })
        return out
      }
      if (v !== true) { out.matched = false; return out }
    }
    for (const [i, v] of plan.validations.entries()) {
      let ok: unknown
      try { ok = yield * e.run(v.program) } catch (err) {
        if (err instanceof BudgetExceeded) throw err
        if (failOnError) out.failures.push({ message: `expression '${v.program.expression}' resulted in error: ${errorText(err)}`, expressionIndex: i })
        continue
      }
      if (ok === true) continue
      out.failures.push({ message: yield * failureMessage(e, v), reason: v.reason, expressionIndex: i })
    }
    for (const a of plan.auditAnnotations) {
      try {
        const value = yield * e.run(a.program)
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
function * failureMessage<P extends { expression: string }> (e: Evaluation<P>, v: PolicyPlan<P>['validations'][number]): Generator<PolicyStep<P>, string, StepResult> {
  if (v.messageProgram !== undefined) {
    try {
      const m = yield * e.run(v.messageProgram)
      if (typeof m === 'string' && m.trim() !== '' && !m.includes('\n')) return m
    } catch { /* falls back to message, as Kubernetes does */ }
  }
  if ((v.message ?? '') !== '') return v.message!
  return `failed expression: ${v.program.expression}`
}

/**
 * Drives several policies' steps in lockstep with a synchronous evaluator of many steps at once (inside a sandbox
 * thread: one guest crossing per round instead of one per expression). Each policy sees exactly the results it
 * would see alone: policies share nothing but the request's variables. `evaluate` answers a result or an error per step.
 */
export function runPoliciesSync<P> (all: Array<Generator<PolicyStep<P>, PolicyOutcome, StepResult>>,
  evaluate: (steps: Array<{ index: number, step: PolicyStep<P> }>) => Array<StepResult | Error>): PolicyOutcome[] {
  const next = all.map(g => g.next())
  for (;;) {
    const active: Array<{ index: number, step: PolicyStep<P> }> = []
    for (const [index, n] of next.entries()) if (n.done !== true) active.push({ index, step: n.value })
    if (active.length === 0) return next.map(n => n.value as PolicyOutcome)
    const results = evaluate(active)
    for (const [j, { index }] of active.entries()) {
      const r = results[j]
      next[index] = r instanceof Error ? all[index].throw(r) : all[index].next(r)
    }
  }
}

/** Drives the steps with an asynchronous evaluator (one crossing per expression). */
export async function runPolicy<P> (steps: Generator<PolicyStep<P>, PolicyOutcome, StepResult>, evaluate: (step: PolicyStep<P>) => Promise<StepResult>): Promise<PolicyOutcome> {
  let next = steps.next()
  while (next.done !== true) {
    let r: StepResult
    try { r = await evaluate(next.value) } catch (err) { next = steps.throw(err); continue }
    next = steps.next(r)
  }
  return next.value
}

/** Every program of a plan. */
export function planPrograms<P extends { expression: string }> (plan: PolicyPlan<P>): P[] {
  return [...plan.variables.values(), ...plan.matchConditions.map(c => c.program), ...plan.auditAnnotations.map(a => a.program),
    ...plan.validations.flatMap(v => v.messageProgram !== undefined ? [v.program, v.messageProgram] : [v.program])]
}

/** Most evaluations a plan can ask for (each variable once, each messageExpression once): bounds a batch's wall time. */
export function mostSteps (plan: PolicyPlan<{ expression: string }>): number {
  return plan.variables.size + plan.matchConditions.length + plan.auditAnnotations.length +
    plan.validations.reduce((n, v) => n + (v.messageProgram !== undefined ? 2 : 1), 0)
}

/** A request's policies evaluated in one crossing: the shared variables once, each policy with its params. */
export interface PolicyBatch<P extends { expression: string }> {
  base: Record<string, unknown>
  items: Array<{ plan: PolicyPlan<P>, params: unknown, failOnError: boolean }>
}
