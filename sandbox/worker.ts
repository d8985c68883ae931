// The sandbox off the event loop: a worker thread holds the QuickJS instance; every call is a promise.
//
// Same semantics, limits and errors as createSandbox (the worker runs one), but a long evaluation blocks
// only the worker: the caller's event loop keeps serving requests. Values cross by structured clone
// (bigint, Map, Date and Uint8Array survive). The authorizer library is not offered here: its decision
// function would have to be called synchronously across threads. The synchronous API is unchanged.

import { Worker } from 'node:worker_threads'
import type { CelEnvironment, CompileOptions, CostRange, EvalResult, SandboxLimits } from './sandbox.js'
import type { CompiledRuleInfo, CompileValidationOptions, ValidationOutcome } from './validation.js'
import type { FieldError, StructuralSchema } from '../apiserver/schema/types.js'
import { SandboxError, type SandboxErrorCode, type SourcePosition } from './errors.js'
import type { PolicyPlan } from './policy-evaluation.js'

export type WorkerLimits = Omit<SandboxLimits, 'authorize' | 'now'>

export type WorkerRequest =
  | { op: 'compile'; expression: string; environment?: CelEnvironment; options?: CompileOptions }
  | { op: 'evaluate'; id: number; variables?: Record<string, unknown>; options?: { costLimit?: number; deadlineMs?: number } }
  | { op: 'release'; id: number }
  | { op: 'compileRules'; schema: StructuralSchema; options: Omit<CompileValidationOptions, 'sandbox'> }
  | { op: 'validate'; id: number; newObj: unknown; oldObj?: unknown }
  | { op: 'releaseRules'; id: number }
  // The pool's rule sets are named by a key (a digest of the schema and options) and compiled on first use.
  | { op: 'compileKeyed'; key: string; schema: StructuralSchema; options: Omit<CompileValidationOptions, 'sandbox'> }
  | { op: 'validateKeyed'; key: string; rules?: { schema: StructuralSchema; options: Omit<CompileValidationOptions, 'sandbox'> }; newObj: unknown; oldObj?: unknown }
  | { op: 'dropKeyed'; key: string }
  // The pool's single expressions (claim mappings, match conditions), named like rule sets by a digest.
  | { op: 'compileExprKeyed'; key: string; expression: ExpressionPayload }
  | { op: 'evaluateExprKeyed'; key: string; expression?: ExpressionPayload; variables?: Record<string, unknown>; options?: { costLimit?: number; deadlineMs?: number } }
  | { op: 'dropExprKeyed'; key: string }
  // A request's admission policies in one crossing: plans by key, with the plans and payloads this thread lacks.
  | {
      op: 'evaluatePolicies'
      expressions?: Record<string, ExpressionPayload>
      plans?: Record<string, PolicyPlan<WireProgram>>
      base: Record<string, unknown>
      items: Array<{ plan: string; params: unknown; failOnError: boolean }>
    }
  | { op: 'dropPlans' }

/** A pooled program as a policy batch names it. */
export interface WireProgram { expression: string; key: string }

/** What a thread needs to compile a pooled expression on first use. */
export interface ExpressionPayload { expression: string; environment?: CelEnvironment; options?: CompileOptions }

export interface AsyncProgram {
  readonly expression: string
  readonly type: string
  readonly estimatedCost: CostRange
  readonly compiled: boolean
  evaluateAsync(variables?: Record<string, unknown>, options?: { costLimit?: number; deadlineMs?: number }): Promise<EvalResult>
  release(): Promise<void>
}

export interface AsyncCompiledValidation {
  readonly rules: CompiledRuleInfo[]
  readonly totalEstimate: number
  evaluateAsync(newObj: unknown, oldObj?: unknown): Promise<ValidationOutcome>
  release(): Promise<void>
}

export interface SandboxWorker {
  compile(expression: string, environment?: CelEnvironment, options?: CompileOptions): Promise<AsyncProgram>
  compileValidationRules(schema: StructuralSchema, options?: Omit<CompileValidationOptions, 'sandbox'>): Promise<{ ok: true; compiled: AsyncCompiledValidation } | { ok: false; errors: FieldError[] }>
  dispose(): Promise<void>
}

export interface WireError {
  code: SandboxErrorCode
  message: string
  position?: SourcePosition
  cost?: number
  issues?: string
}

export const toError = (e: WireError) => new SandboxError(e.code, e.message, { position: e.position, cost: e.cost, issues: e.issues })

/** Memory caps of a sandbox thread's own V8 heap (the QuickJS memory has its cap in SandboxLimits.memoryBytes). */
export interface ThreadMemoryLimits {
  maxOldGenerationSizeMb?: number
  maxYoungGenerationSizeMb?: number
  stackSizeMb?: number
}

/**
 * Starts a worker thread running worker-main with one sandbox of `limits`; resolves once the sandbox is
 * made. The thread speaks the WorkerRequest protocol (`{ ...request, seq }` in, `{ seq, ok, result | error }` out).
 */
export async function startSandboxThread(limits: WorkerLimits = {}, resourceLimits?: ThreadMemoryLimits): Promise<Worker> {
  // From the TypeScript sources (tests, tsx) the worker registers tsx itself before loading its entry.
  const ts = import.meta.url.endsWith('.ts')
  const entry = new URL(ts ? './worker-main.ts' : './worker-main.js', import.meta.url)
  const options = { workerData: { limits }, resourceLimits }
  const worker = ts
    ? new Worker(`import('tsx/esm/api').then((api) => { api.register(); return import(${JSON.stringify(entry.href)}) })`, { ...options, eval: true })
    : new Worker(entry, options)
  let onMessage!: (m: { ready: boolean; error?: WireError }) => void
  let onError!: (err: Error) => void
  let onExit!: (code: number) => void
  try {
    await new Promise<void>((resolve, reject) => {
      onMessage = (m) => (m.ready ? resolve() : reject(toError(m.error!)))
      onError = reject
      onExit = (code) => reject(new SandboxError('SANDBOX_ERR_INTERNAL', `sandbox worker exited during start (code ${code})`))
      worker.once('message', onMessage).once('error', onError).once('exit', onExit)
    })
  } catch (err) {
    await worker.terminate()
    throw err
  } finally {
    worker.off('message', onMessage).off('error', onError).off('exit', onExit)
  }
  return worker
}

export async function createSandboxWorker(limits: WorkerLimits = {}): Promise<SandboxWorker> {
  const worker = await startSandboxThread(limits)
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>()
  let seq = 0
  let closed: Error | undefined

  // An idle worker must not keep the process alive; a pending call must.
  worker.unref()
  worker.on('message', (m: { seq: number; ok: boolean; result?: unknown; error?: WireError }) => {
    const p = pending.get(m.seq)
    if (!p) return
    pending.delete(m.seq)
    if (pending.size === 0) worker.unref()
    if (m.ok) p.resolve(m.result)
    else p.reject(toError(m.error!))
  })
  const fail = (err: Error) => {
    closed = new SandboxError('SANDBOX_ERR_INTERNAL', `sandbox worker stopped: ${err.message}`)
    for (const p of pending.values()) p.reject(closed)
    pending.clear()
  }
  worker.on('error', fail)
  worker.on('exit', (code) => fail(new Error(`exit code ${code}`)))

  function call<T>(req: WorkerRequest): Promise<T> {
    if (closed) return Promise.reject(closed)
    const id = ++seq
    if (pending.size === 0) worker.ref()
    return new Promise<T>((resolve, reject) => {
      pending.set(id, { resolve: resolve as (v: unknown) => void, reject })
      worker.postMessage({ ...req, seq: id })
    })
  }

  return {
    async compile(expression, environment, options) {
      const r = await call<{ id: number; type: string; estimatedCost: CostRange; compiled: boolean }>({ op: 'compile', expression, environment, options })
      return {
        expression,
        type: r.type,
        estimatedCost: r.estimatedCost,
        compiled: r.compiled,
        evaluateAsync: (variables, opts) => call<EvalResult>({ op: 'evaluate', id: r.id, variables, options: opts }),
        release: () => call<void>({ op: 'release', id: r.id }),
      }
    },
    async compileValidationRules(schema, options = {}) {
      const r = await call<{ ok: true; id: number; rules: CompiledRuleInfo[]; totalEstimate: number } | { ok: false; errors: FieldError[] }>({ op: 'compileRules', schema, options })
      if (!r.ok) return r
      return {
        ok: true,
        compiled: {
          rules: r.rules,
          totalEstimate: r.totalEstimate,
          evaluateAsync: (newObj, oldObj) => call<ValidationOutcome>({ op: 'validate', id: r.id, newObj, oldObj }),
          release: () => call<void>({ op: 'releaseRules', id: r.id }),
        },
      }
    },
    async dispose() {
      if (closed) return
      closed = new SandboxError('SANDBOX_ERR_INTERNAL', 'sandbox worker is disposed')
      await worker.terminate()
    },
  }
}
