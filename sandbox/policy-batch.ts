// A request's admission policies over one sandbox's programs in one guest crossing (guest/policies.js): each
// policy's plan is sent once and kept under a key; when that crossing cannot be made or fails as a whole, each
// expression in a crossing of its own.

import { SandboxError } from './errors.js'
import { toJson } from './runtime.js'
import type { Program } from './sandbox.js'
import { PER_POLICY_COST, evaluatePolicy, planPrograms, stepResult, type PolicyBatch, type PolicyOutcome, type PolicyPlan } from './policy-evaluation.js'

/** Plans kept by key at most (guest/policies.js starts its table over at the same size). */
const MAX_PLANS = 4096

type Outcome = 1 | PolicyOutcome
type GuestAnswer = { ok: true; outcomes: Outcome[] } | { ok: false; code: string; message: string }

export interface PolicyBatchDeps {
  /** `fn` in the guest over the variables `base` (sent only when not cached) with the rest of its request. */
  callOverBase<T extends { ok: boolean; code?: unknown }>(fn: string, base: Record<string, unknown>, body: string): T
  /** The program's id in the guest, or undefined when it was released or belongs to another sandbox. */
  guestIdOf(program: Program): number | undefined
}

export type PolicyBatchItems = PolicyBatch<Program>['items']

export function createPolicyBatch(deps: PolicyBatchDeps): (base: Record<string, unknown>, items: PolicyBatchItems) => PolicyOutcome[] {
  const keys = new Map<string, number>()
  let nextKey = 1
  // a plan's JSON for the guest and its programs, per plan object (its programs' guest ids never change)
  const specs = new WeakMap<PolicyPlan<Program>, { json: string; programs: Program[] }>()
  const specOf = (plan: PolicyPlan<Program>): string | undefined => {
    let s = specs.get(plan)
    if (s === undefined) {
      const json = planSpec(plan, deps.guestIdOf)
      if (json === undefined) return undefined
      specs.set(plan, (s = { json, programs: planPrograms(plan) }))
    }
    for (const p of s.programs) if (deps.guestIdOf(p) === undefined) return undefined
    return s.json
  }

  function inOneCrossing(base: Record<string, unknown>, items: PolicyBatchItems): PolicyOutcome[] | undefined {
    const specs: Array<[number, string]> = []
    const define: string[] = []
    const wire: string[] = []
    for (const item of items) {
      const spec = specOf(item.plan)
      if (spec === undefined) return undefined
      let key = keys.get(spec)
      if (key === undefined) {
        if (keys.size >= MAX_PLANS) keys.clear()
        keys.set(spec, (key = nextKey++))
        define.push(`"${key}":${spec}`)
      }
      specs.push([key, spec])
      wire.push(`[${key},${toJson(item.params ?? null)},${item.failOnError}]`)
    }
    const call = (defined: string[]): GuestAnswer => deps.callOverBase<GuestAnswer>('evaluatePolicies', base, `"define":{${defined.join(',')}},"items":[${wire.join(',')}]`)
    let out: GuestAnswer
    try {
      out = call(define)
      // the guest started its table over (or lost it): every plan of the request again
      if (!out.ok && out.code === 'SANDBOX_RETRY_WITH_PLANS') out = call(specs.map(([key, spec]) => `"${key}":${spec}`))
    } catch (err) {
      const code = (err as SandboxError).code
      if (code === 'SANDBOX_ERR_DEADLINE' || code === 'SANDBOX_ERR_MEMORY' || code === 'SANDBOX_ERR_STACK') return undefined
      throw err
    }
    if (!out.ok) return undefined
    return out.outcomes.map((o) => (o === 1 ? { matched: true, failures: [], auditAnnotations: {} } : o))
  }

  /** One crossing per expression, each with its own deadline and verdict on limits. */
  function stepwise(base: Record<string, unknown>, items: PolicyBatchItems): PolicyOutcome[] {
    return items.map(({ plan, params, failOnError }) =>
      evaluatePolicy(plan, failOnError, (program, variables, costLimit) => stepResult(program.evaluateOver(base, readExtras(program, params, variables), { costLimit })), PER_POLICY_COST),
    )
  }

  return (base, items) => (items.length === 0 ? [] : inOneCrossing(base, items) ?? stepwise(base, items))
}

/** A plan as guest/policies.js takes it (programs by guest id), as JSON; undefined when a program is not in the guest. */
function planSpec(plan: PolicyPlan<Program>, idOf: (p: Program) => number | undefined): string | undefined {
  for (const p of planPrograms(plan)) if (idOf(p) === undefined) return undefined
  const id = (p: Program): number => idOf(p)!
  return JSON.stringify({
    m: plan.matchConditions.map((c) => [c.name, id(c.program)]),
    v: [...plan.variables].map(([name, p]) => [name, id(p)]),
    val: plan.validations.map((v) => [id(v.program), v.message ?? null, v.messageProgram === undefined ? null : id(v.messageProgram), v.reason ?? null]),
    a: plan.auditAnnotations.map((a) => [a.key, id(a.program)]),
  })
}

/**
 * A step's `params` and `variables`, each only when the program reads it: an unread one would cross into the guest
 * and be converted for nothing (about 6 µs a step). Programs whose reads are unknown get both.
 */
function readExtras(program: Program, params: unknown, variables: Record<string, unknown>): Record<string, unknown> {
  const reads = program.reads
  if (reads === undefined) return { params, variables }
  const read = (name: string): boolean => reads.whole.includes(name) || reads.projection?.[name] !== undefined
  const extra: Record<string, unknown> = {}
  if (read('params')) extra.params = params
  if (read('variables')) extra.variables = variables
  return extra
}
