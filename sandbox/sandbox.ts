// The sandbox API: createSandbox(limits) -> compile(expression, environment) -> program.evaluate(variables).

import type { StructuralSchema, SchemaDefinitions } from '../apiserver/schema/types.js'
import { SandboxError, positionOf, type SandboxErrorCode } from './errors.js'
import { createGuestRuntime, toJson, type GuestRuntime } from './runtime.js'
import { decodeValue, type TaggedValue } from './values.js'
import { project, type Projection } from './projection.js'
import { createPolicyBatch, type PolicyBatchItems } from './policy-batch.js'
import type { PolicyOutcome } from './policy-evaluation.js'

export interface SandboxLimits {
  /** Cap of the QuickJS WebAssembly memory (default 64 MiB). */
  memoryBytes?: number
  /** Guest stack (default 256 KiB). */
  stackBytes?: number
  /** Wall-clock deadline of one crossing (compile, evaluate, validate an object; default 1000 ms). */
  deadlineMs?: number
  /** Longest accepted expression in characters (default 65,536). */
  maxExpressionLength?: number
  /** Deepest accepted nesting of (), [] and {} (default 32; the guest parser recurses per level). */
  maxNesting?: number
  /** Runtime cost budget of one evaluation (Kubernetes: 1,000,000 per call). */
  perCallCost?: number
  /** Decision function of the authorizer library (`authorizer.group(...).check(verb)`). */
  authorize?: (request: AuthorizationRequest) => AuthorizationDecision
  /** Clock in milliseconds (injected for tests). */
  now?: () => number
}

export interface AuthorizationRequest {
  user?: string
  group?: string
  resource?: string
  subresource?: string
  namespace?: string
  name?: string
  path?: string
  verb: string
}
export interface AuthorizationDecision {
  decision: 'allow' | 'deny' | 'noopinion'
  reason?: string
  error?: string
}

/** How one variable is typed: a CEL type string (`int`, `map<string, dyn>`, `dyn`) or a structural schema. */
export interface VariableDeclaration {
  type?: string
  schema?: StructuralSchema
  /** Declares `optional<T>`: pass undefined/null for none. */
  optional?: boolean
}

export interface CelEnvironment {
  variables: Record<string, VariableDeclaration>
  definitions?: SchemaDefinitions
  /** Declare the authorizer library's types and functions (decisions come from limits.authorize). */
  authorizer?: boolean
  /** Optional values (`?.`, `optional.of`); on by default as in Kubernetes >= 1.29. */
  optionals?: boolean
  /** Homogeneous aggregate literals (Kubernetes' setting, default true); false accepts `[1, 2u, 2.0]`. */
  homogeneousLiterals?: boolean
}

export interface CostRange {
  min: number
  max: number
}

export interface EvalResult {
  value: unknown
  /** The CEL type-tagged value (exact int/uint/double distinction), as the guest produced it. */
  tagged: TaggedValue
  cost: number
}

export interface Program {
  readonly expression: string
  /** The checked result type (e.g. `bool`). */
  readonly type: string
  /** Static worst-case cost estimate. */
  readonly estimatedCost: CostRange
  /** Whether the program runs as compiled JavaScript (else on the metered interpreter). */
  readonly compiled: boolean
  /** How the program reads its variables (undefined: unknown, read them all); see projectVariables. */
  readonly reads?: VariableReads
  /** Evaluates with the given variables (plain JSON values); throws SandboxError. */
  evaluate(variables?: Record<string, unknown>, options?: { costLimit?: number; deadlineMs?: number }): EvalResult
  /**
   * The same with `base` and `extra` together as the variables. While the same `base` object (unchanged) is
   * passed, it is serialized and converted only once: each call sends only `extra` (many programs, one object).
   */
  evaluateOver(base: Record<string, unknown>, extra: Record<string, unknown>, options?: { costLimit?: number; deadlineMs?: number }): EvalResult
  release(): void
}

/**
 * Which variables a program reads and how: `projection` names, per variable read only through field selections,
 * the top-level properties it reads; `whole` the variables read otherwise. A variable in neither is not read.
 */
export interface VariableReads {
  projection?: Record<string, string[]>
  whole: string[]
}

export interface CompileOptions {
  /** Size range assumed for strings of unknown size in the estimate (default 0..3 MiB, Kubernetes' bound). */
  unknownStringSize?: CostRange
  /** Reject with CEL_ERR_COST_ESTIMATE when the estimated worst case is above this (e.g. 10,000,000). */
  maxEstimatedCost?: number
  /** Run on the metered interpreter instead of the compiled JavaScript (for comparisons and tests). */
  interpret?: boolean
}

export interface Sandbox {
  compile(expression: string, environment?: CelEnvironment, options?: CompileOptions): Program
  /**
   * Programs of this sandbox over the same variables `base` (as evaluateOver: converted once while the same object
   * is passed), each with its own `extra` variables and cost limit, in one crossing: each step's result or its
   * SandboxError, in order. When the crossing fails as a whole (deadline, memory, stack), the steps run again one
   * crossing each, so each gets its own deadline and verdict (CEL has no side effects).
   */
  evaluateMany(base: Record<string, unknown>, steps: Array<{ program: Program; extra: Record<string, unknown>; costLimit?: number }>): Array<EvalResult | SandboxError>
  /**
   * A request's admission policies (plans of this sandbox's programs, each with its params) over the variables
   * `base`, as policy-evaluation.ts defines their outcome: in one crossing, variables kept in the guest between
   * steps; when a program was released or that crossing fails as a whole (deadline, memory, stack), step by step.
   */
  evaluatePolicies(base: Record<string, unknown>, items: PolicyBatchItems): PolicyOutcome[]
  /** Low-level access for the validation-rule layer (one crossing per call). */
  readonly guest: GuestRuntime
  readonly limits: Required<Pick<SandboxLimits, 'memoryBytes' | 'stackBytes' | 'deadlineMs' | 'perCallCost' | 'maxExpressionLength' | 'maxNesting'>>
  dispose(): void
}

interface GuestError {
  ok: false
  code: SandboxErrorCode
  message: string
  offset?: number
  cost?: number
  issues?: string
}
type GuestCompile = { ok: true; id: number; type: string; estimate: CostRange; compiled: boolean; projection?: Projection; reads?: VariableReads } | GuestError
/** Projected variables up to this many characters of JSON stay converted in the guest (guest/main.js, same value). */
const PROJECTED_CACHE_CHARS = 4096
type GuestEval = { ok: true; value: TaggedValue; cost: number } | GuestError

export async function createSandbox(limits: SandboxLimits = {}): Promise<Sandbox> {
  const resolved = {
    memoryBytes: limits.memoryBytes ?? 64 * 1024 * 1024,
    stackBytes: limits.stackBytes ?? 256 * 1024,
    deadlineMs: limits.deadlineMs ?? 1000,
    perCallCost: limits.perCallCost ?? 1_000_000,
    maxExpressionLength: limits.maxExpressionLength ?? 65_536,
    maxNesting: limits.maxNesting ?? 32,
  }
  const now = limits.now ?? (() => performance.now())
  const guest = await createGuestRuntime(resolved, { authorize: limits.authorize as (r: unknown) => unknown }, now)

  // Variables identical (as JSON) to the previous call's are not sent again: the guest reuses the values it
  // converted for them (per environment) while the generation stays the same. CEL never mutates them.
  let lastVarsJson: string | undefined
  let varsGen = 0
  // evaluateOver's base: identical by identity to the previous call's (generation varsGen), it is neither serialized nor sent again.
  let lastBase: Record<string, unknown> | undefined
  function evaluateInGuest(id: number, variables: Record<string, unknown>, limit: number, deadlineMs?: number): GuestEval {
    const vj = toJson(variables)
    if (vj === lastVarsJson) {
      const out = guest.callArgs<GuestEval>('evaluateArgs', [id, varsGen, limit], deadlineMs)
      if (out.ok || (out.code as string) !== 'SANDBOX_RETRY_WITH_VARS') return out
    } else {
      lastVarsJson = vj
      lastBase = undefined
      varsGen++
    }
    return guest.callArgs<GuestEval>('evaluateArgs', [id, varsGen, limit, vj], deadlineMs)
  }
  /**
   * A program that reads its object variables only through field selections gets only those properties (guest
   * evaluateProjected); the guest keeps them converted with the program, so the same projected JSON is not sent
   * again. Detection is by that JSON: unread properties may change freely, read ones are always seen.
   */
  function evaluateProjectedInGuest(id: number, projected: Record<string, unknown>, limit: number, lastJson: string | undefined, deadlineMs?: number): { out: GuestEval; json: string | undefined } {
    const pj = toJson(projected)
    if (pj === lastJson) {
      const out = guest.callArgs<GuestEval>('evaluateProjected', [id, limit], deadlineMs)
      if (out.ok || (out.code as string) !== 'SANDBOX_RETRY_WITH_VARS') return { out, json: pj }
    }
    const out = guest.callArgs<GuestEval>('evaluateProjected', [id, limit, pj], deadlineMs)
    // the guest keeps them when they were bound (the evaluation itself may have failed) and are small enough
    const kept = (out.ok || out.code.startsWith('CEL_')) && pj.length <= PROJECTED_CACHE_CHARS
    return { out, json: kept ? pj : undefined }
  }
  function evaluateOverInGuest(id: number, base: Record<string, unknown>, extra: Record<string, unknown>, limit: number, deadlineMs?: number): GuestEval {
    return callOverBase<GuestEval>('evaluate', base, `"id":${id},"limit":${limit},"extra":${toJson(extra)}`, deadlineMs)
  }

  /**
   * `fn` over the variables `base` with the rest of its request (`body`: JSON members): only the generation while
   * the same `base` is passed and the guest still has it converted, else with the variables' JSON.
   */
  function callOverBase<T extends { ok: boolean; code?: unknown }>(fn: string, base: Record<string, unknown>, body: string, deadlineMs?: number): T {
    if (base === lastBase) {
      const out = guest.callJson<T>(fn, `{"gen":${varsGen},${body}}`, deadlineMs)
      if (out.ok || out.code !== 'SANDBOX_RETRY_WITH_VARS') return out
    }
    const vj = toJson(base)
    if (vj !== lastVarsJson) {
      lastVarsJson = vj
      varsGen++
    }
    lastBase = base
    return guest.callJson<T>(fn, `{"gen":${varsGen},"vars":${vj},${body}}`, deadlineMs)
  }

  const guestIds = new WeakMap<Program, { id: number; released: () => boolean }>()
  function evaluateMany(base: Record<string, unknown>, steps: Array<{ program: Program; extra: Record<string, unknown>; costLimit?: number }>): Array<EvalResult | SandboxError> {
    const released = () => new SandboxError('SANDBOX_ERR_INTERNAL', 'program was released')
    const one = (s: (typeof steps)[number]): EvalResult | SandboxError => {
      try {
        return s.program.evaluateOver(base, s.extra, { costLimit: s.costLimit })
      } catch (err) {
        if (err instanceof SandboxError) return err
        throw err
      }
    }
    if (steps.length === 1) return [one(steps[0])]
    const parts: string[] = []
    for (const s of steps) {
      const g = guestIds.get(s.program)
      if (g === undefined || g.released()) return steps.map((x) => (x === s ? released() : one(x)))
      // no extra variables: the guest runs over the shared ones as they are, without copying them for the step
      const extra = hasKeys(s.extra) ? `,"extra":${toJson(s.extra)}` : ''
      parts.push(`{"id":${g.id},"limit":${s.costLimit ?? resolved.perCallCost}${extra}}`)
    }
    let out: { ok: true; results: GuestEval[] } | GuestError
    try {
      out = callOverBase('evaluateMany', base, `"steps":[${parts.join(',')}]`)
    } catch (err) {
      const code = (err as SandboxError).code
      if (code !== 'SANDBOX_ERR_DEADLINE' && code !== 'SANDBOX_ERR_MEMORY' && code !== 'SANDBOX_ERR_STACK') throw err
      return steps.map(one)
    }
    if (!out.ok) throw guestError(out, '')
    return out.results.map((r, i) => (r.ok ? { value: decodeValue(r.value), tagged: r.value, cost: r.cost } : guestError(r, steps[i].program.expression)))
  }

  function compile(expression: string, environment: CelEnvironment = { variables: {} }, options: CompileOptions = {}): Program {
    if (typeof expression !== 'string') throw new SandboxError('CEL_ERR_COMPILE', 'expression must be a string')
    if (expression.length > resolved.maxExpressionLength) {
      throw new SandboxError('CEL_ERR_COMPILE', `expression is ${expression.length} characters, more than the limit of ${resolved.maxExpressionLength}`)
    }
    const deep = nestingBeyond(expression, resolved.maxNesting)
    if (deep !== undefined) {
      throw new SandboxError('CEL_ERR_COMPILE', `expression nesting exceeds ${resolved.maxNesting} levels`, { position: positionOf(expression, deep) })
    }
    const r = guest.call<GuestCompile>('compile', { env: environment, expr: expression, estimator: { unknownString: options.unknownStringSize }, interpret: options.interpret })
    if (!r.ok) throw guestError(r, expression)
    if (options.maxEstimatedCost !== undefined && r.estimate.max > options.maxEstimatedCost) {
      guest.call('release', { ids: [r.id] })
      throw new SandboxError('CEL_ERR_COST_ESTIMATE', `estimated cost ${r.estimate.max} exceeds the limit of ${options.maxEstimatedCost}`)
    }
    let released = false
    // the JSON of the projected variables the guest keeps converted for this program (see evaluateProjectedInGuest)
    let lastProjectedJson: string | undefined
    const program: Program = {
      expression,
      type: r.type,
      estimatedCost: r.estimate,
      compiled: r.compiled,
      reads: r.reads,
      evaluate(variables = {}, opts = {}) {
        if (released) throw new SandboxError('SANDBOX_ERR_INTERNAL', 'program was released')
        const limit = opts.costLimit ?? resolved.perCallCost
        const projected = r.projection && project(variables, r.projection)
        let out: GuestEval
        if (projected !== undefined) ({ out, json: lastProjectedJson } = evaluateProjectedInGuest(r.id, projected, limit, lastProjectedJson, opts.deadlineMs))
        else out = evaluateInGuest(r.id, variables, limit, opts.deadlineMs)
        if (!out.ok) throw guestError(out, expression)
        return { value: decodeValue(out.value), tagged: out.value, cost: out.cost }
      },
      evaluateOver(base, extra, opts = {}) {
        if (released) throw new SandboxError('SANDBOX_ERR_INTERNAL', 'program was released')
        const out = evaluateOverInGuest(r.id, base, extra, opts.costLimit ?? resolved.perCallCost, opts.deadlineMs)
        if (!out.ok) throw guestError(out, expression)
        return { value: decodeValue(out.value), tagged: out.value, cost: out.cost }
      },
      release() {
        if (released) return
        released = true
        guest.call('release', { ids: [r.id] })
      },
    }
    guestIds.set(program, { id: r.id, released: () => released })
    return program
  }

  const evaluatePolicies = createPolicyBatch({
    callOverBase,
    guestIdOf: (p) => {
      const g = guestIds.get(p)
      return g === undefined || g.released() ? undefined : g.id
    },
  })

  return { compile, evaluateMany, evaluatePolicies, guest, limits: resolved, dispose: () => guest.dispose() }
}

function hasKeys(o: Record<string, unknown>): boolean {
  for (const _ in o) return true
  return false
}

/** Offset where bracket nesting first exceeds `max` (outside string literals), or undefined. */
export function nestingBeyond(expr: string, max: number): number | undefined {
  let depth = 0
  let quote: string | undefined
  for (let i = 0; i < expr.length; i++) {
    const c = expr[i]
    if (quote) {
      if (c === '\\') i++
      else if (expr.startsWith(quote, i)) {
        i += quote.length - 1
        quote = undefined
      }
      continue
    }
    if (c === '"' || c === "'") quote = expr.startsWith(c.repeat(3), i) ? c.repeat(3) : c
    if (quote && quote.length === 3) i += 2
    if (c === '(' || c === '[' || c === '{') {
      if (++depth > max) return i
    } else if (c === ')' || c === ']' || c === '}') depth--
  }
  return undefined
}

function guestError(r: GuestError, expression: string): SandboxError {
  const position = r.offset !== undefined ? positionOf(expression, r.offset) : undefined
  return new SandboxError(r.code, r.message, { position, cost: r.cost, issues: r.issues })
}
