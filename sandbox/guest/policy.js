// One CEL admission policy evaluated for one request: match conditions, lazily evaluated variables, validations,
// messageExpressions, audit annotations, over an evaluator of single expressions. The one owner of these rules:
// the guest runs them over its own programs (a request's policies in one crossing, sandbox/guest/policies.js), the
// host over pooled programs, one crossing per expression (sandbox/policy-evaluation.ts re-exports them with types).
// Plain JavaScript without imports, so both QuickJS and Node load it as it is; indexed loops and few allocations,
// as QuickJS interprets it (about 0.2 µs an operation: a for-of loop costs three times an indexed one).
//
// Budgets as Kubernetes': each expression runs under the per-call cost limit (1,000,000), and all of a policy's
// expressions for one request share the per-policy runtime budget (10,000,000); past it nothing more runs.

export const PER_CALL_COST = 1_000_000
export const PER_POLICY_COST = 10_000_000

export class BudgetExceeded extends Error {}

/** Names of variables an expression refers to (`variables.x`), for lazy evaluation in dependency order. */
export function referencedVariables(expression) {
  const out = new Set()
  for (const m of expression.matchAll(/\bvariables\s*\.\s*([A-Za-z_][A-Za-z0-9_]*)/g)) out.add(m[1])
  for (const m of expression.matchAll(/\bvariables\s*\[\s*['"]([A-Za-z_][A-Za-z0-9_]*)['"]\s*\]/g)) out.add(m[1])
  return [...out]
}

/**
 * Thrown by an evaluator to stop a policy's evaluation as a whole (it is not an expression's error): it passes
 * through the rules to their caller. `cause`: what stopped it, if anything.
 */
export class Interruption extends Error {
  constructor(cause) {
    super('policy evaluation interrupted')
    this.cause = cause
  }
}

const passesThrough = (err) => err instanceof BudgetExceeded || err instanceof Interruption
const errorText = (err) => err.message
const NO_VARIABLES = Object.freeze({})
const UNSET = { ok: true, value: undefined }

/**
 * `plan` evaluated against one request: `evaluate(program, variables, costLimit)` runs one expression over the
 * request's variables with `variables` (the CEL `variables` map) and answers `{ value, cost, carried? }` or throws
 * the expression's error; a variable's value is passed on as its `carried` form when given, else as `value`. Returns `{ matched, failures: [{ message, reason?,
 * expressionIndex? }], auditAnnotations }`.
 */
export function evaluatePolicy(plan, failOnError, evaluate, budget = PER_POLICY_COST) {
  let remaining = budget
  let memo // name -> { ok, value } or { ok: false, error }, made on the first variable
  // a variable's value is kept as the evaluator wants it back (`carried`), any other as it is
  const run = (program, asVariable) => {
    const names = program.variableNames ?? referencedVariables(program.expression)
    let variables = NO_VARIABLES
    if (names.length > 0) {
      variables = {}
      for (let i = 0; i < names.length; i++) variables[names[i]] = variable(names[i])
    }
    if (remaining <= 0) throw new BudgetExceeded('validation failed due to running out of cost budget, no further validation rules will be run')
    const r = evaluate(program, variables, remaining < PER_CALL_COST ? remaining : PER_CALL_COST)
    remaining -= r.cost
    return asVariable === true && r.carried !== undefined ? r.carried : r.value
  }
  // lazily, once per request; a variable referring to itself (directly or not) sees itself unset
  const variable = (name) => {
    memo ??= new Map()
    let m = memo.get(name)
    if (m === undefined) {
      const p = plan.variables.get(name)
      memo.set(name, UNSET)
      if (p === undefined) m = UNSET
      else {
        try {
          m = { ok: true, value: run(p, true) }
        } catch (error) {
          if (error instanceof Interruption) throw error
          m = { ok: false, error }
        }
      }
      memo.set(name, m)
    }
    if (!m.ok) throw m.error
    return m.value
  }
  const out = { matched: true, failures: [], auditAnnotations: {} }
  try {
    for (let i = 0; i < plan.matchConditions.length; i++) {
      const m = plan.matchConditions[i]
      let v
      try {
        v = run(m.program)
      } catch (err) {
        if (passesThrough(err)) throw err
        if (failOnError) out.failures.push({ message: `failed to evaluate match condition '${m.name}': ${errorText(err)}` })
        return out
      }
      if (v !== true) {
        out.matched = false
        return out
      }
    }
    for (let i = 0; i < plan.validations.length; i++) {
      const v = plan.validations[i]
      let ok
      try {
        ok = run(v.program)
      } catch (err) {
        if (passesThrough(err)) throw err
        if (failOnError) out.failures.push({ message: `expression '${v.program.expression}' resulted in error: ${errorText(err)}`, expressionIndex: i })
        continue
      }
      if (ok === true) continue
      out.failures.push({ message: failureMessage(run, v), reason: v.reason, expressionIndex: i })
    }
    for (let i = 0; i < plan.auditAnnotations.length; i++) {
      const a = plan.auditAnnotations[i]
      try {
        const value = run(a.program)
        if (typeof value === 'string' && value !== '') out.auditAnnotations[a.key] = value
      } catch (err) {
        if (passesThrough(err)) throw err
        if (failOnError) out.failures.push({ message: `valueExpression '${a.program.expression}' resulted in error: ${errorText(err)}` })
      }
    }
  } catch (err) {
    if (err instanceof Interruption) throw err
    if (failOnError) out.failures.push({ message: errorText(err) })
  }
  return out
}

/** messageExpression first (an error or empty string falls back), then message, then Kubernetes' default. */
function failureMessage(run, v) {
  if (v.messageProgram !== undefined) {
    try {
      const m = run(v.messageProgram)
      if (typeof m === 'string' && m.trim() !== '' && !m.includes('\n')) return m
    } catch (err) {
      // falls back to message, as Kubernetes does
      if (passesThrough(err)) throw err
    }
  }
  if ((v.message ?? '') !== '') return v.message
  return `failed expression: ${v.program.expression}`
}

/**
 * evaluatePolicy with an asynchronous `evaluate` (one crossing per expression): the rules run again from the start
 * each time they need an evaluation not yet made, replaying the results so far (CEL has no side effects, so each
 * run asks for the same expressions in the same order).
 */
export async function evaluatePolicyAsync(plan, failOnError, evaluate, budget = PER_POLICY_COST) {
  const results = []
  for (;;) {
    let next = 0
    let wanted
    try {
      return evaluatePolicy(plan, failOnError, (program, variables, costLimit) => {
        if (next < results.length) {
          const r = results[next++]
          if (r.ok) return r.value
          throw r.error
        }
        wanted = { program, variables, costLimit }
        throw new Interruption()
      }, budget)
    } catch (err) {
      if (!(err instanceof Interruption) || wanted === undefined) throw err
    }
    try {
      results.push({ ok: true, value: await evaluate(wanted.program, wanted.variables, wanted.costLimit) })
    } catch (error) {
      results.push({ ok: false, error })
    }
  }
}

/** Every program of a plan. */
export function planPrograms(plan) {
  return [
    ...plan.variables.values(),
    ...plan.matchConditions.map((c) => c.program),
    ...plan.auditAnnotations.map((a) => a.program),
    ...plan.validations.flatMap((v) => (v.messageProgram !== undefined ? [v.program, v.messageProgram] : [v.program])),
  ]
}

/** Most evaluations a plan can ask for (each variable once, each messageExpression once): bounds a batch's wall time. */
export function mostSteps(plan) {
  return plan.variables.size + plan.matchConditions.length + plan.auditAnnotations.length + plan.validations.reduce((n, v) => n + (v.messageProgram !== undefined ? 2 : 1), 0)
}
