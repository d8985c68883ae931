// One kernel memcg threshold notification (cgroup v1) through the python3 helper memcg-notifier.py: spawn, re-arm, events, stop.

import { spawn as nodeSpawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

/** What the notifier needs of a child process (node's ChildProcess has it; tests pass a fake). */
export interface HelperProcess {
  readonly pid?: number
  readonly stdin: { write(chunk: string): boolean, end(): void, on(event: 'error', fn: (err: Error) => void): unknown } | null
  readonly stdout: { setEncoding(enc: 'utf8'): unknown, on(event: 'data', fn: (chunk: string) => void): unknown } | null
  readonly stderr: { setEncoding(enc: 'utf8'): unknown, on(event: 'data', fn: (chunk: string) => void): unknown } | null
  on(event: 'exit', fn: (code: number | null, signal: NodeJS.Signals | null) => void): unknown
  on(event: 'error', fn: (err: Error) => void): unknown
  kill(signal?: NodeJS.Signals): boolean
}

export type SpawnHelper = (command: string, args: readonly string[]) => HelperProcess

export const spawnHelper: SpawnHelper = (command, args) => nodeSpawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'] })

/** Debian's python3 (3.11 has os.eventfd); a bare `python3` could be a version manager's shim. */
export const DEFAULT_PYTHON = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3'

/** The helper shipped with the package: beside this module in the source tree, under agent/eviction from dist/. */
export function helperScriptPath (): string {
  for (const rel of ['./memcg-notifier.py', '../../../agent/eviction/memcg-notifier.py']) {
    const candidate = fileURLToPath(new URL(rel, import.meta.url))
    if (existsSync(candidate)) return candidate
  }
  return fileURLToPath(new URL('./memcg-notifier.py', import.meta.url))
}

export interface MemcgNotifierDeps {
  /** The cgroup v1 memory directory watched (the root memcg, or the pods cgroup for allocatable). */
  cgroupDir: string
  spawn?: SpawnHelper
  python?: string
  script?: string
  /** The kernel saw usage cross the threshold (either way). */
  onCrossed(): void
  /** The helper is registered with the kernel (first time and after each new threshold). */
  onArmed?(thresholdBytes: number): void
  /** The helper could not start or ended on its own: notifications stop; `reason` from its stderr or exit. */
  onFailed(reason: string): void
}

export interface MemcgNotifier {
  /** Arms the notification at `thresholdBytes` of memory.usage_in_bytes: starts the helper, or re-arms it. */
  set(thresholdBytes: number): void
  /** The threshold last set (undefined before the first). */
  threshold(): number | undefined
  /** True once the helper reported the current threshold registered, until it fails or stops. */
  armed(): boolean
  /** The helper's pid while it runs. */
  pid(): number | undefined
  /** Closes the helper's stdin (it exits at once) and waits for it; killed after `graceMs`. */
  stop(graceMs?: number): Promise<void>
}

export function createMemcgNotifier (d: MemcgNotifierDeps): MemcgNotifier {
  const spawn = d.spawn ?? spawnHelper
  let child: HelperProcess | undefined
  let exited: Promise<void> | undefined
  let current: number | undefined
  let armedAt: number | undefined
  let stopping = false
  let failed = false
  let stderr = ''

  function fail (reason: string): void {
    if (failed || stopping) return
    failed = true
    armedAt = undefined
    d.onFailed(reason)
  }

  function line (text: string): void {
    const armed = /^armed (\d+)$/.exec(text)
    if (armed !== null) {
      armedAt = Number(armed[1])
      d.onArmed?.(armedAt)
    } else if (text === 'crossed') {
      d.onCrossed()
    }
  }

  function start (thresholdBytes: number): void {
    const p = spawn(d.python ?? DEFAULT_PYTHON, [d.script ?? helperScriptPath(), d.cgroupDir, String(thresholdBytes)])
    child = p
    let buffered = ''
    p.stdout?.setEncoding('utf8')
    p.stdout?.on('data', chunk => {
      buffered += chunk
      let nl: number
      while ((nl = buffered.indexOf('\n')) >= 0) {
        line(buffered.slice(0, nl).trim())
        buffered = buffered.slice(nl + 1)
      }
    })
    p.stderr?.setEncoding('utf8')
    p.stderr?.on('data', chunk => { if (stderr.length < 4096) stderr += chunk })
    // A write after the helper died fails with EPIPE: its exit says why.
    p.stdin?.on('error', () => {})
    exited = new Promise(resolve => {
      p.on('error', err => { fail(`${d.python ?? DEFAULT_PYTHON}: ${err.message}`); resolve() })
      p.on('exit', (code, signal) => {
        child = undefined
        fail(stderr.trim() !== '' ? stderr.trim() : `helper exited (${signal ?? `code ${code ?? '?'}`})`)
        resolve()
      })
    })
  }

  return {
    set (thresholdBytes) {
      if (stopping || failed) return
      const t = Math.max(0, Math.floor(thresholdBytes))
      if (t === current) return
      current = t
      if (child === undefined) start(t)
      else child.stdin?.write(`${t}\n`)
    },
    threshold: () => current,
    armed: () => !failed && !stopping && child !== undefined && armedAt !== undefined && armedAt === current,
    pid: () => child?.pid,
    async stop (graceMs = 2000) {
      stopping = true
      const p = child
      if (p === undefined) return
      p.stdin?.end()
      const timer = setTimeout(() => { p.kill('SIGKILL') }, graceMs)
      await exited
      clearTimeout(timer)
    }
  }
}
