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

export type WorkerLimits = Omit<SandboxLimits, 'authorize' | 'now'>

export type WorkerRequest =
  | { op: 'compile'; expression: string; environment?: CelEnvironment; options?: CompileOptions }
  | { op: 'evaluate'; id: number; variables?: Record<string, unknown>; options?: { costLimit?: number; deadlineMs?: number } }
  | { op: 'release'; id: number }
  | { op: 'compileRules'; schema: StructuralSchema; options: Omit<CompileValidationOptions, 'sandbox'> }
  | { op: 'validate'; id: number; newObj: unknown; oldObj?: unknown }
  | { op: 'releaseRules'; id: number }

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

interface WireError {
  code: SandboxErrorCode
  message: string
  position?: SourcePosition
  cost?: number
  issues?: string
}

const toError = (e: WireError) => new SandboxError(e.code, e.message, { position: e.position, cost: e.cost, issues: e.issues })

export async function createSandboxWorker(limits: WorkerLimits = {}): Promise<SandboxWorker> {
  // From the TypeScript sources (tests, tsx) the worker registers tsx itself before loading its entry.
  const ts = import.meta.url.endsWith('.ts')
  const entry = new URL(ts ? './worker-main.ts' : './worker-main.js', import.meta.url)
  const worker = ts
    ? new Worker(`import('tsx/esm/api').then((api) => { api.register(); return import(${JSON.stringify(entry.href)}) })`, { eval: true, workerData: { limits } })
    : new Worker(entry, { workerData: { limits } })
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>()
  let seq = 0
  let closed: Error | undefined

  await new Promise<void>((resolve, reject) => {
    worker.once('message', (m: { ready: boolean; error?: WireError }) => (m.ready ? resolve() : reject(toError(m.error!))))
    worker.once('error', reject)
  })
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
