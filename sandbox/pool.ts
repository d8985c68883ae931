// The sandbox pool: CRD validation rules evaluated on worker threads, so a rule running to its deadline never blocks the event loop.
//
// Contract:
// - Up to `size` threads (default: the cores), each with one QuickJS sandbox under its own memory cap
//   (QuickJS memory `limits.memoryBytes`, the thread's V8 heap `threadMemory`). Threads start on first
//   need, not with the pool, and stop after `idleThreadMs` unused; each runs one request at a time,
//   others wait in FIFO order.
// - Each rule set is named by a digest of its schema and options; a thread compiles it once (on the pool's
//   compile, or on its first evaluation there) and keeps it until the last holder releases it.
// - The sandbox's own deadline interrupts a rule inside QuickJS; a thread that has not answered
//   `graceMs` after the deadline is terminated and replaced, and its request fails with the same
//   SANDBOX_ERR_DEADLINE. A thread that dies (V8 heap cap, a trap that closed its sandbox) is replaced;
//   its request fails with SANDBOX_ERR_MEMORY or SANDBOX_ERR_INTERNAL and the next one is served.
// - evaluatePolicies() sends a request's admission policies (their programs by key, the request's variables once)
//   to one thread in one message, each plan under a key the thread keeps; the thread runs them in its sandbox
//   (Sandbox.evaluatePolicies) and answers all outcomes in one message. Each expression keeps its own deadline; the watchdog allows one per possible evaluation.
// - close() rejects what waits and terminates every thread; no thread outlives it.

import { createHash } from 'node:crypto'
import { availableParallelism } from 'node:os'
import type { Worker } from 'node:worker_threads'
import type { FieldError, StructuralSchema } from '../apiserver/schema/types.js'
import { SandboxError } from './errors.js'
import type { CompiledRuleInfo, ValidationOutcome } from './validation.js'
import { startSandboxThread, toError, type ExpressionPayload, type ThreadMemoryLimits, type WireError, type WireProgram, type WorkerLimits, type WorkerRequest } from './worker.js'
import type { ExpressionEvaluator, PooledProgram } from './expression-evaluator.js'
import type { CostRange, EvalResult, VariableReads } from './sandbox.js'
import { projectVariables } from './projection.js'
import type { RuleCompileOptions, RuleEvaluator, RuleSet } from './rule-evaluator.js'
import { mostSteps, planPrograms, type PolicyOutcome, type PolicyPlan } from './policy-evaluation.js'

export interface SandboxPoolOptions {
  /** Most threads (default: the number of cores, at least 1). */
  size?: number
  /** Limits of each thread's sandbox (deadline default 1000 ms, QuickJS memory 64 MiB, cost budget). */
  limits?: WorkerLimits
  /** Cap of each thread's V8 heap (default 96 MiB old generation, 16 MiB young). */
  threadMemory?: ThreadMemoryLimits
  /** How long past the deadline a silent thread is given before it is terminated (default 1000 ms). */
  graceMs?: number
  /** Longest wait for one object's validation before its thread is terminated (default deadline + grace). */
  evaluationWatchdogMs?: number
  /** A thread idle this long is stopped, giving back its memory (default 5 minutes). */
  idleThreadMs?: number
}

export interface SandboxPoolStats {
  /** Threads started since the pool was made (replacements included). */
  started: number
  threads: number
  starting: number
  busy: number
  queued: number
  /** Rule sets held (each compiled once per thread that evaluated it). */
  ruleSets: number
}

export interface SandboxPool extends RuleEvaluator, ExpressionEvaluator {
  evaluatePolicies: NonNullable<ExpressionEvaluator['evaluatePolicies']>
  owns: NonNullable<ExpressionEvaluator['owns']>
  stats(): SandboxPoolStats
}

type Payload = { schema: StructuralSchema; options: RuleCompileOptions }
type Request = Exclude<WorkerRequest, { op: 'compile' | 'evaluate' | 'release' | 'compileRules' | 'validate' | 'releaseRules' }>
/** What a policy batch may need to send along: its programs' payloads and its plans, by key. */
interface BatchPayloads { expressions: Map<string, ExpressionPayload>; plans: Map<string, PolicyPlan<WireProgram>> }
/** A policy plan as the pool sends it: under a key, its programs by key; kept while the plan object lives. */
interface PlanEntry { key: string; wire: PolicyPlan<WireProgram>; programs: PooledProgram[]; steps: number }
/** Plan keys a thread keeps at most: past it, it is told to drop them all and is sent them again as needed. */
const THREAD_PLANS = 1024
interface Job { req: Request; payload?: Payload | ExpressionPayload | BatchPayloads; hangMs: number; resolve: (v: unknown) => void; reject: (e: Error) => void }
interface Thread { worker: Worker; known: Set<string>; plans: Set<string>; running?: { job: Job; seq: number; timer: NodeJS.Timeout }; idleTimer?: NodeJS.Timeout; dead: boolean }
interface Entry { refs: number; payload: Payload; rules: CompiledRuleInfo[]; totalEstimate: number }
/** `reads`: what the program reads of its variables (sandbox.ts VariableReads; undefined: unknown). */
interface ExprEntry { refs: number; payload: ExpressionPayload; type: string; estimatedCost: CostRange; reads?: VariableReads }
type CompileReply = { ok: true; rules: CompiledRuleInfo[]; totalEstimate: number } | { ok: false; errors: FieldError[] }

const deadlineError = () => new SandboxError('SANDBOX_ERR_DEADLINE', 'evaluation deadline exceeded')

function lostError(err: Error & { code?: string }): SandboxError {
  if (err.code === 'ERR_WORKER_OUT_OF_MEMORY') return new SandboxError('SANDBOX_ERR_MEMORY', 'sandbox memory limit reached')
  return new SandboxError('SANDBOX_ERR_INTERNAL', `sandbox worker stopped: ${err.message}`)
}

export function createSandboxPool(o: SandboxPoolOptions = {}): SandboxPool {
  const size = Math.max(1, Math.floor(o.size ?? availableParallelism()))
  const limits: WorkerLimits = { ...o.limits, deadlineMs: o.limits?.deadlineMs ?? 1000 }
  const deadlineMs = limits.deadlineMs!
  const threadMemory = o.threadMemory ?? { maxOldGenerationSizeMb: 96, maxYoungGenerationSizeMb: 16 }
  const graceMs = o.graceMs ?? 1000
  const watchdogMs = o.evaluationWatchdogMs ?? deadlineMs + graceMs
  const idleThreadMs = o.idleThreadMs ?? 300_000
  const threads = new Set<Thread>()
  const idle: Thread[] = []
  const queue: Job[] = []
  const entries = new Map<string, Entry>()
  // Expression keys start with 'x:', so they never meet a rule set's key in a thread's `known` set.
  const exprEntries = new Map<string, ExprEntry>()
  const plans = new WeakMap<PolicyPlan<PooledProgram>, PlanEntry>()
  let planSeq = 0
  const starting = new Set<Promise<void>>()
  let seq = 0
  let started = 0
  let closed = false

  function pump(): void {
    while (queue.length > 0 && idle.length > 0) run(idle.pop()!, queue.shift()!)
    while (!closed && queue.length > starting.size && threads.size + starting.size < size) spawn()
  }

  function spawn(): void {
    started++
    const p: Promise<void> = startSandboxThread(limits, threadMemory).then(
      (worker) => {
        starting.delete(p)
        if (closed) return worker.terminate().then(() => undefined)
        const th: Thread = { worker, known: new Set(), plans: new Set(), dead: false }
        threads.add(th)
        worker.on('message', (m: { seq: number; ok: boolean; result?: unknown; error?: WireError }) => reply(th, m))
        worker.on('error', (err) => lose(th, err))
        worker.on('exit', (code) => lose(th, new Error(`exit code ${code}`)))
        park(th)
        pump()
      },
      (err: Error) => {
        starting.delete(p)
        // With no thread at all, what waits would wait forever: it fails with the reason.
        if (threads.size === 0 && starting.size === 0) for (const j of queue.splice(0)) j.reject(lostError(err))
      },
    )
    starting.add(p)
  }

  /** An idle thread must not keep the process alive, and gives its memory back after idleThreadMs. */
  function park(th: Thread): void {
    th.worker.unref()
    idle.push(th)
    th.idleTimer = setTimeout(() => {
      if (th.running !== undefined || th.dead) return
      retire(th)
      void th.worker.terminate()
    }, idleThreadMs).unref()
  }

  function run(th: Thread, job: Job): void {
    clearTimeout(th.idleTimer)
    let req: WorkerRequest = job.req
    if (req.op === 'validateKeyed' && !th.known.has(req.key)) {
      req = { ...req, rules: job.payload as Payload }
      th.known.add(req.key)
    }
    if (req.op === 'evaluateExprKeyed' && !th.known.has(req.key)) {
      req = { ...req, expression: job.payload as ExpressionPayload }
      th.known.add(req.key)
    }
    if (req.op === 'evaluatePolicies') req = withMissing(th, req, job.payload as BatchPayloads)
    const id = ++seq
    try {
      th.worker.postMessage({ ...req, seq: id })
    } catch (err) {
      park(th)
      return job.reject(new SandboxError('SANDBOX_ERR_INPUT', `object cannot be sent to the sandbox: ${(err as Error).message}`))
    }
    // A running request keeps the process alive (park() unrefs the thread again).
    th.worker.ref()
    th.running = { job, seq: id, timer: setTimeout(() => hang(th), job.hangMs) }
    // A rule set released while this request waited: the thread drops it right after answering.
    if (req.op === 'validateKeyed' && !entries.has(req.key) && th.known.delete(req.key)) th.worker.postMessage({ op: 'dropKeyed', key: req.key, seq: 0 })
    if (req.op === 'evaluateExprKeyed' && !exprEntries.has(req.key) && th.known.delete(req.key)) th.worker.postMessage({ op: 'dropExprKeyed', key: req.key, seq: 0 })
    if (req.op === 'evaluatePolicies') {
      for (const key of (job.payload as BatchPayloads).expressions.keys()) if (!exprEntries.has(key) && th.known.delete(key)) th.worker.postMessage({ op: 'dropExprKeyed', key, seq: 0 })
    }
  }

  /** A policy batch with the payloads of its programs and the plans `th` does not have yet. */
  function withMissing(th: Thread, req: Extract<WorkerRequest, { op: 'evaluatePolicies' }>, payload: BatchPayloads): WorkerRequest {
    const expressions: Record<string, ExpressionPayload> = {}
    let missing = false
    for (const [key, p] of payload.expressions) {
      if (th.known.has(key)) continue
      expressions[key] = p
      th.known.add(key)
      missing = true
    }
    let newPlans = 0
    for (const key of payload.plans.keys()) if (!th.plans.has(key)) newPlans++
    if (newPlans > 0 && th.plans.size + newPlans > THREAD_PLANS) {
      th.worker.postMessage({ op: 'dropPlans', seq: 0 })
      th.plans.clear()
    }
    let plans: Record<string, PolicyPlan<WireProgram>> | undefined
    for (const [key, wire] of payload.plans) {
      if (th.plans.has(key)) continue
      ;(plans ??= {})[key] = wire
      th.plans.add(key)
    }
    return missing || plans !== undefined ? { ...req, ...(missing ? { expressions } : {}), ...(plans !== undefined ? { plans } : {}) } : req
  }

  function reply(th: Thread, m: { seq: number; ok: boolean; result?: unknown; error?: WireError }): void {
    const r = th.running
    if (r === undefined || r.seq !== m.seq || th.dead) return
    clearTimeout(r.timer)
    th.running = undefined
    park(th)
    const { req } = r.job
    if (req.op === 'compileKeyed' && m.ok && (m.result as CompileReply).ok) th.known.add(req.key)
    if (req.op === 'compileExprKeyed' && m.ok) th.known.add(req.key)
    if ((req.op === 'validateKeyed' || req.op === 'evaluateExprKeyed') && !m.ok) th.known.delete(req.key)
    if (req.op === 'evaluatePolicies' && !m.ok) {
      const { expressions, plans } = r.job.payload as BatchPayloads
      for (const key of expressions.keys()) th.known.delete(key)
      for (const key of plans.keys()) th.plans.delete(key)
    }
    if (m.ok) r.job.resolve(m.result)
    else r.job.reject(toError(m.error!))
    pump()
  }

  function retire(th: Thread): Job | undefined {
    th.dead = true
    clearTimeout(th.idleTimer)
    threads.delete(th)
    const i = idle.indexOf(th)
    if (i >= 0) idle.splice(i, 1)
    const r = th.running
    th.running = undefined
    if (r !== undefined) clearTimeout(r.timer)
    return r?.job
  }

  function hang(th: Thread): void {
    const job = retire(th)
    void th.worker.terminate()
    job?.reject(deadlineError())
    pump()
  }

  function lose(th: Thread, err: Error): void {
    if (th.dead) return
    retire(th)?.reject(lostError(err))
    pump()
  }

  function submit<T>(req: Request, hangMs: number, payload?: Payload | ExpressionPayload | BatchPayloads): Promise<T> {
    if (closed) return Promise.reject(new SandboxError('SANDBOX_ERR_INTERNAL', 'sandbox pool is closed'))
    return new Promise<T>((resolve, reject) => {
      queue.push({ req, payload, hangMs, resolve: resolve as (v: unknown) => void, reject })
      pump()
    })
  }

  function holder(key: string, e: Entry): RuleSet {
    let released = false
    return {
      rules: e.rules,
      totalEstimate: e.totalEstimate,
      evaluate(newObj, oldObj) {
        if (released) return Promise.reject(new SandboxError('SANDBOX_ERR_INTERNAL', 'rule set was released'))
        return submit<ValidationOutcome>({ op: 'validateKeyed', key, newObj, oldObj }, watchdogMs, e.payload)
      },
      release() {
        if (released) return
        released = true
        if (--e.refs > 0 || entries.get(key) !== e) return
        entries.delete(key)
        for (const th of threads) if (th.known.delete(key)) th.worker.postMessage({ op: 'dropKeyed', key, seq: 0 })
      },
    }
  }

  /** This pool's programs: their key, and whether they were released. */
  const owned = new WeakMap<PooledProgram, { key: string; released: () => boolean }>()

  function program(key: string, e: ExprEntry): PooledProgram {
    let released = false
    const p: PooledProgram = {
      expression: e.payload.expression,
      type: e.type,
      estimatedCost: e.estimatedCost,
      evaluate(variables, options) {
        if (released) return Promise.reject(new SandboxError('SANDBOX_ERR_INTERNAL', 'program was released'))
        return submit<EvalResult>({ op: 'evaluateExprKeyed', key, variables, options }, watchdogMs, e.payload)
      },
      release() {
        if (released) return
        released = true
        if (--e.refs > 0 || exprEntries.get(key) !== e) return
        exprEntries.delete(key)
        for (const th of threads) if (th.known.delete(key)) th.worker.postMessage({ op: 'dropExprKeyed', key, seq: 0 })
      },
    }
    owned.set(p, { key, released: () => released })
    return p
  }

  /** A plan's programs as the thread names them (their keys), collecting the payloads a thread may lack. */
  /** The pool's entry for `plan`: made on first use, kept while the plan object lives (a policy's generation). */
  function planEntry(plan: PolicyPlan<PooledProgram>): PlanEntry {
    let e = plans.get(plan)
    if (e !== undefined) return e
    const wire = (p: PooledProgram): WireProgram => {
      const o = owned.get(p)
      if (o === undefined) throw new SandboxError('SANDBOX_ERR_INTERNAL', 'program is not one of this pool')
      return { expression: p.expression, key: o.key }
    }
    e = {
      key: `p:${++planSeq}`,
      programs: planPrograms(plan),
      steps: mostSteps(plan),
      wire: {
        matchConditions: plan.matchConditions.map((c) => ({ name: c.name, program: wire(c.program) })),
        variables: new Map([...plan.variables].map(([name, p]) => [name, wire(p)])),
        validations: plan.validations.map((v) => ({ program: wire(v.program), message: v.message, messageProgram: v.messageProgram && wire(v.messageProgram), reason: v.reason })),
        auditAnnotations: plan.auditAnnotations.map((a) => ({ key: a.key, program: wire(a.program) })),
      },
    }
    plans.set(plan, e)
    return e
  }

  return {
    owns: (p) => owned.has(p),
    async evaluatePolicies(batch) {
      const payloads: BatchPayloads = { expressions: new Map(), plans: new Map() }
      const read: ExprEntry[] = []
      let steps = 0
      const items = batch.items.map((i) => {
        const e = planEntry(i.plan)
        for (const p of e.programs) {
          const o = owned.get(p)!
          if (o.released()) throw new SandboxError('SANDBOX_ERR_INTERNAL', 'program was released')
          const x = exprEntries.get(o.key)!
          payloads.expressions.set(o.key, x.payload)
          read.push(x)
        }
        payloads.plans.set(e.key, e.wire)
        steps += e.steps
        return { plan: e.key, params: i.params, failOnError: i.failOnError }
      })
      if (items.length === 0) return []
      // Each evaluation has the sandbox's deadline: the batch is given as many, and the watchdog's grace once.
      // Only what the programs read of the request's variables is copied to the thread (an object's metadata, say).
      return await submit<PolicyOutcome[]>({ op: 'evaluatePolicies', base: projectVariables(batch.base, read), items }, Math.max(1, steps) * deadlineMs + (watchdogMs - deadlineMs), payloads)
    },
    async compileExpression(expression, environment, options) {
      const payload: ExpressionPayload = { expression, environment, options }
      const key = 'x:' + createHash('sha256').update(JSON.stringify(payload)).digest('base64url')
      let e = exprEntries.get(key)
      if (e === undefined) {
        const r = await submit<{ type: string; estimatedCost: CostRange; reads?: VariableReads }>({ op: 'compileExprKeyed', key, expression: payload }, Math.max(deadlineMs, 5000) + graceMs)
        e = exprEntries.get(key)
        if (e === undefined) exprEntries.set(key, (e = { refs: 0, payload, type: r.type, estimatedCost: r.estimatedCost, reads: r.reads }))
      }
      e.refs++
      return program(key, e)
    },
    async compile(schema, options = {}) {
      const key = createHash('sha256').update(JSON.stringify({ schema, options })).digest('base64url')
      const known = entries.get(key)
      if (known !== undefined) {
        known.refs++
        return { ok: true, rules: holder(key, known) }
      }
      // Compiling takes at least 5 s of deadline in the sandbox (validation.ts); the watchdog waits as long.
      const r = await submit<CompileReply>({ op: 'compileKeyed', key, schema, options }, Math.max(deadlineMs, 5000) + graceMs)
      if (!r.ok) return r
      let e = entries.get(key)
      if (e === undefined) entries.set(key, (e = { refs: 0, payload: { schema, options }, rules: r.rules, totalEstimate: r.totalEstimate }))
      e.refs++
      return { ok: true, rules: holder(key, e) }
    },
    stats() {
      let busy = 0
      for (const th of threads) if (th.running !== undefined) busy++
      return { started, threads: threads.size, starting: starting.size, busy, queued: queue.length, ruleSets: entries.size }
    },
    async close() {
      if (closed) return
      closed = true
      const err = new SandboxError('SANDBOX_ERR_INTERNAL', 'sandbox pool is closed')
      for (const j of queue.splice(0)) j.reject(err)
      const all = [...threads]
      for (const th of all) retire(th)?.reject(err)
      entries.clear()
      exprEntries.clear()
      await Promise.all([...all.map((th) => th.worker.terminate()), ...starting])
    },
  }
}
