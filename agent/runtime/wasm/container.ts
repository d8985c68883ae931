// One wasm container on the host side: its record, its worker thread, and how the worker's end becomes a CRI
// state (exit code and reason: Completed, Error, OOMKilled, DeadlineExceeded).
import { Worker } from 'node:worker_threads'
import { appendFile, mkdir, readFile } from 'node:fs/promises'
import { dirname } from 'node:path'
import type { ContainerConfig, ContainerState } from '../runtime.js'
import type { HostMemory } from './binary.js'
import type { WorkerInput, WorkerLogFull, WorkerResult, WorkerThreadInfo } from './worker.js'

/** USER_HZ: /proc reports CPU time in these ticks; 100 on every mainstream Linux architecture. */
const CLOCK_TICKS = 100

/** What the module was killed or ended with when it did not simply return. */
export const EXIT_KILLED = 137
export const EXIT_TRAP = 134

export interface ContainerRecord {
  id: string
  podSandboxId: string
  config: ContainerConfig
  imageRef: string
  logPath: string
  state: ContainerState
  createdAt: number
  startedAt: number
  finishedAt: number
  exitCode: number
  reason: string
  message: string
  memoryBytes: number
}

export interface PreparedModule {
  module?: WebAssembly.Module
  memory?: HostMemory
  growHooked: boolean
  /** Set when the module cannot start under its limit (initial memory above the cap). */
  startFailure?: { reason: string; exitCode: number; message: string }
  args: string[]
  env: Record<string, string>
  preopens: Record<string, string>
  readonlyPreopens: string[]
  /** Wall-clock limit; 0 = none. */
  timeoutMs: number
  /** CPU-time limit (Linux, read from /proc); 0 = none. */
  cpuLimitMs: number
}

export interface WorkerLimits { maxOldGenerationSizeMb: number; maxYoungGenerationSizeMb: number; stackSizeMb: number }

/**
 * Built code runs worker.js directly. From TypeScript sources (tests, tsx) a worker does not get tsx's loader
 * hooks on Node 20, so a small eval'd bootstrap registers tsx and then imports worker.ts.
 */
function workerEntry (url: URL): [string | URL, { eval?: boolean }] {
  if (!url.pathname.endsWith('.ts')) return [url, {}]
  const api = import.meta.resolve('tsx/esm/api')
  return [`import(${JSON.stringify(api)}).then(m => { m.register(); return import(${JSON.stringify(url.href)}) })`, { eval: true }]
}

/** Runs a PreparedModule in a worker; `onExit` fires once with the final fields. */
export class ContainerProcess {
  private worker?: Worker
  private timer?: NodeJS.Timeout
  private cpuTimer?: NodeJS.Timeout
  private taskPath?: string
  private lastCpuNanos?: number
  private killReason?: { reason: string; message: string }
  private result?: WorkerResult
  private done = false
  readonly exited: Promise<void>
  private resolveExited!: () => void

  constructor (
    private readonly record: ContainerRecord,
    private readonly prepared: PreparedModule,
    private readonly limits: WorkerLimits,
    private readonly nowNs: () => number,
    private readonly workerUrl: URL,
    /** A problem worth a pod Event that does not stop the container (log lines dropped on a full disk). */
    private readonly onWarning: (reason: string, message: string) => void = () => {}
  ) {
    this.exited = new Promise(resolve => { this.resolveExited = resolve })
  }

  async start (): Promise<void> {
    const r = this.record
    await mkdir(dirname(r.logPath), { recursive: true })
    // The log file exists before the container counts as running, as with containerd's shim: after a crash the
    // orchlet derives the restart count from the attempt logs on disk. A full disk is left to the worker to report.
    await appendFile(r.logPath, '').catch((err: NodeJS.ErrnoException) => { if (err.code !== 'ENOSPC') throw err })
    r.state = 'CONTAINER_RUNNING'
    r.startedAt = this.nowNs()
    const p = this.prepared
    if (p.startFailure || !p.module) {
      const f = p.startFailure ?? { reason: 'Error', exitCode: 1, message: 'no module to run' }
      this.finish(f.exitCode, f.reason, f.message)
      return
    }
    // While the module runs its linear memory is at least the initial size (container stats, /metrics/resource);
    // the exact size, growth included, is read when the worker exits.
    r.memoryBytes = (p.memory?.initial ?? 0) * 65536
    const input: WorkerInput = { module: p.module, memory: p.memory, args: p.args, env: p.env, preopens: p.preopens, readonlyPreopens: p.readonlyPreopens, logPath: r.logPath, growHooked: p.growHooked }
    const [entry, entryOpts] = workerEntry(this.workerUrl)
    const worker = new Worker(entry, { ...entryOpts, workerData: input, resourceLimits: this.limits, stdout: true, stderr: true })
    this.worker = worker
    worker.stdout.resume()
    worker.stderr.resume()
    worker.on('message', (m: WorkerResult | WorkerThreadInfo | WorkerLogFull) => {
      if (m.kind === 'thread') this.taskPath = m.taskPath
      else if (m.kind === 'log-full') this.onWarning('LogWriteFailed', m.message)
      else this.result = m
    })
    worker.on('error', err => {
      const oom = (err as NodeJS.ErrnoException).code === 'ERR_WORKER_OUT_OF_MEMORY'
      this.killReason ??= oom ? { reason: 'OOMKilled', message: 'the worker ran out of heap memory' } : { reason: 'Error', message: err.message }
    })
    worker.on('exit', () => { this.onWorkerExit() })
    if (p.cpuLimitMs > 0) {
      this.cpuTimer = setInterval(() => {
        void this.cpuNanos().then(ns => {
          if (ns !== undefined && ns / 1e6 > p.cpuLimitMs) this.kill('DeadlineExceeded', `used more than its CPU limit of ${p.cpuLimitMs / 1000}s`)
        })
      }, 50)
      this.cpuTimer.unref()
    }
    if (p.timeoutMs > 0) {
      this.timer = setTimeout(() => { this.kill('DeadlineExceeded', `ran longer than its limit of ${p.timeoutMs / 1000}s`) }, p.timeoutMs)
      this.timer.unref()
    }
  }

  /** Terminate the worker (WASI has no signals, so there is nothing gentler to send). */
  kill (reason = 'Error', message = 'stopped'): void {
    if (this.done || !this.worker) return
    this.killReason ??= { reason, message }
    void this.worker.terminate()
  }

  /**
   * CPU time (user + system) of the container's thread, from /proc (Linux); the last reading once the
   * thread is gone; undefined where /proc is not available.
   */
  async cpuNanos (): Promise<number | undefined> {
    if (this.taskPath === undefined || this.done) return this.lastCpuNanos
    try {
      const stat = await readFile(`${this.taskPath}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ') // fields from 3 (state) on
      const ticks = Number(fields[11]) + Number(fields[12]) // utime (14) + stime (15)
      if (Number.isFinite(ticks)) this.lastCpuNanos = ticks * (1e9 / CLOCK_TICKS)
    } catch {}
    return this.lastCpuNanos
  }

  private onWorkerExit (): void {
    const res = this.result
    if (res) this.record.memoryBytes = res.memoryBytes
    if (res?.kind === 'exit' && res.exitCode === 0) return this.finish(0, 'Completed', '')
    // The module failed (trap or non-zero exit) after a grow past its limit was refused: where a Linux
    // container would have been OOM-killed. Without the grow hook, memory within 1 MiB of the cap is the sign.
    const refused = res?.growFailed ?? (res !== undefined && res.memoryMaxBytes > 0 && res.memoryBytes + (1 << 20) > res.memoryMaxBytes)
    if (this.killReason?.reason === 'OOMKilled' || refused) {
      return this.finish(EXIT_KILLED, 'OOMKilled', `memory limit of ${res?.memoryMaxBytes ?? 0} bytes reached${res?.kind === 'trap' ? ` (${res.message})` : ''}`)
    }
    if (res?.kind === 'exit') return this.finish(res.exitCode, 'Error', '')
    if (res?.kind === 'trap') return this.finish(EXIT_TRAP, 'Error', res.message)
    return this.finish(EXIT_KILLED, this.killReason?.reason ?? 'Error', this.killReason?.message ?? 'the worker ended without a result')
  }

  private finish (exitCode: number, reason: string, message: string): void {
    if (this.done) return
    this.done = true
    if (this.timer) clearTimeout(this.timer)
    if (this.cpuTimer) clearInterval(this.cpuTimer)
    const r = this.record
    r.state = 'CONTAINER_EXITED'
    r.finishedAt = this.nowNs()
    r.exitCode = exitCode
    r.reason = reason
    r.message = message
    this.resolveExited()
  }
}
