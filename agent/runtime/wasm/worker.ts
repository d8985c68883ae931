// The worker-thread side of one wasm container: instantiates the (memory-capped) module with node:wasi,
// writes stdout/stderr to the CRI log file itself (synchronously, so nothing is lost on terminate), and
// posts one WorkerResult when the module returns, exits or traps.
import { parentPort, workerData } from 'node:worker_threads'
import { closeSync, openSync, readlinkSync, writeSync } from 'node:fs'
import { WASI } from 'node:wasi'
import { CriLogWriter } from './cri-log.js'
import type { HostMemory } from './binary.js'
import { OOM_EXPORT } from './grow-hook.js'
import { guardReadonlyMounts } from './readonly-mounts.js'

export interface WorkerInput {
  module: WebAssembly.Module
  memory?: HostMemory
  args: string[]
  env: Record<string, string>
  /** guest path -> host path */
  preopens: Record<string, string>
  /** Guest paths (keys of `preopens`) mounted read-only. */
  readonlyPreopens: string[]
  logPath: string
  /** The module was instrumented by instrumentMemoryGrow and exports the failed-grow flag. */
  growHooked: boolean
}

/** `growFailed` is undefined when the module was not instrumented (then the host can only guess). */
interface Sizes { memoryBytes: number; memoryMaxBytes: number; growFailed?: boolean }
export type WorkerResult = ({ kind: 'exit'; exitCode: number } | { kind: 'trap'; message: string }) & Sizes
/** Sent first, on Linux: `/proc/<pid>/task/<tid>`, so the host can read this thread's CPU time. */
export interface WorkerThreadInfo { kind: 'thread'; taskPath: string }
/** Sent once when log lines start being dropped because the disk is full. */
export interface WorkerLogFull { kind: 'log-full'; message: string }

const WASI_ERRNO_SUCCESS = 0
const WASI_ERRNO_FAULT = 21

function run (input: WorkerInput): WorkerResult {
  const logFd = openSync(input.logPath, 'a')
  const devNull = openSync('/dev/null', 'r+')
  let logFull = false
  // A full disk drops log lines, as containerd does, instead of failing the module's writes; the host hears of it once.
  const writeLog = (bytes: Uint8Array): void => {
    try {
      writeSync(logFd, bytes)
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code
      if (code !== 'ENOSPC' && code !== 'EDQUOT') throw err
      if (!logFull && parentPort !== null) parentPort.postMessage({ kind: 'log-full', message: `container log lines are being dropped: no space left on device (${input.logPath})` } satisfies WorkerLogFull)
      logFull = true
    }
  }
  const log = new CriLogWriter(writeLog, () => BigInt(Math.round((performance.timeOrigin + performance.now()) * 1e6)))
  const memory = input.memory
    ? new WebAssembly.Memory({ initial: input.memory.initial, maximum: input.memory.maximum, ...(input.memory.shared ? { shared: true } : {}) } as WebAssembly.MemoryDescriptor)
    : undefined
  let oomFlag: WebAssembly.Global | undefined
  const sizes = (): Sizes => ({
    memoryBytes: memory?.buffer.byteLength ?? 0,
    memoryMaxBytes: (input.memory?.maximum ?? 0) * 65536,
    growFailed: oomFlag ? oomFlag.value === 1 : undefined
  })
  try {
    const wasi = new WASI({ version: 'preview1', args: input.args, env: input.env, preopens: input.preopens, stdin: devNull, stdout: devNull, stderr: devNull, returnOnExit: true })
    const base = wasi.wasiImport as Record<string, (...a: any[]) => any>
    const fdWrite = base.fd_write
    const wasiImport: Record<string, (...a: any[]) => any> = { ...base }
    // stdout/stderr go through the CRI log writer; every other fd is node:wasi's.
    wasiImport.fd_write = (fd: number, iovs: number, iovsLen: number, nwritten: number): number => {
      if ((fd !== 1 && fd !== 2) || !memory) return fdWrite(fd, iovs, iovsLen, nwritten)
      try {
        const view = new DataView(memory.buffer)
        const bytes = new Uint8Array(memory.buffer)
        let total = 0
        for (let i = 0; i < iovsLen; i++) {
          const ptr = view.getUint32(iovs + i * 8, true)
          const len = view.getUint32(iovs + i * 8 + 4, true)
          log.write(fd === 1 ? 'stdout' : 'stderr', Buffer.from(bytes.subarray(ptr, ptr + len)))
          total += len
        }
        view.setUint32(nwritten, total, true)
        return WASI_ERRNO_SUCCESS
      } catch {
        return WASI_ERRNO_FAULT
      }
    }
    const preopenFds = Object.keys(input.preopens).map((path, i) => [path, 3 + i] as const)
    const readonlyFds = preopenFds.filter(([path]) => input.readonlyPreopens.includes(path)).map(([, fd]) => fd)
    const imports: WebAssembly.Imports = { wasi_snapshot_preview1: guardReadonlyMounts(wasiImport, readonlyFds, () => memory) }
    if (input.memory && memory) imports[input.memory.module] = { ...(imports[input.memory.module] ?? {}), [input.memory.name]: memory }
    const instance = new WebAssembly.Instance(input.module, imports)
    if (input.growHooked) oomFlag = instance.exports[OOM_EXPORT] as WebAssembly.Global
    // node:wasi wants `exports.memory`; a module importing its memory need not export it.
    const exports = { ...instance.exports, ...(memory ? { memory } : {}) }
    const exitCode = wasi.start({ exports } as unknown as WebAssembly.Instance)
    return { kind: 'exit', exitCode: exitCode ?? 0, ...sizes() }
  } catch (err) {
    return { kind: 'trap', message: err instanceof Error ? `${err.name}: ${err.message}` : String(err), ...sizes() }
  } finally {
    log.flush()
    closeSync(logFd)
    closeSync(devNull)
  }
}

function threadInfo (): WorkerThreadInfo | undefined {
  try { return { kind: 'thread', taskPath: `/proc/${readlinkSync('/proc/thread-self')}` } } catch { return undefined }
}

if (parentPort) {
  const info = threadInfo()
  if (info) parentPort.postMessage(info)
  parentPort.postMessage(run(workerData as WorkerInput))
}
