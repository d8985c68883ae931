// Process-level guards of the orchlet at start: the swap check (--fail-swap-on), its own oom_score_adj
// (--oom-score-adj) and the lock file (--lock-file, --exit-on-lock-contention).

import { closeSync, openSync, readFileSync, unlinkSync, utimesSync, watch, writeFileSync, type FSWatcher } from 'node:fs'

export class GuardError extends Error {}

/** The devices /proc/swaps lists (its first line is the header). */
export function swapDevices (procSwaps: string): string[] {
  return procSwaps.split('\n').slice(1).map(l => l.trim()).filter(l => l !== '')
}

/** Refuses to start with swap on unless --fail-swap-on=false, with the kubelet's message. */
export function checkSwap (failSwapOn: boolean, read: () => string = () => readFileSync('/proc/swaps', 'utf8')): void {
  if (!failSwapOn) return
  let text: string
  try { text = read() } catch { return }
  const devices = swapDevices(text)
  if (devices.length > 0) {
    throw new GuardError(`running with swap on is not supported, please disable swap! or set --fail-swap-on flag to false. /proc/swaps contained: [${devices.join(' ')}]`)
  }
}

/** Writes the orchlet's own oom_score_adj; a failure (no CAP_SYS_RESOURCE) is reported, not fatal, as the kubelet. */
export function applyOomScoreAdj (value: number, path = '/proc/self/oom_score_adj'): string | undefined {
  try {
    writeFileSync(path, `${value}\n`)
    return undefined
  } catch (err) {
    return `failed to apply oom_score_adj ${value}: ${(err as Error).message}`
  }
}

function alive (pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false
  try { process.kill(pid, 0); return true } catch (err) { return (err as NodeJS.ErrnoException).code === 'EPERM' }
}

export interface HeldLock {
  release(): void
}

/**
 * Takes the lock file: created exclusively with this process's pid; a file whose pid is gone is stale and taken
 * over; a live holder is waited for (polling every `pollMs`), as the kubelet blocks on its flock. A waiting
 * contender touches the file, so a holder started with --exit-on-lock-contention sees it (`onContention`).
 */
export async function acquireLockFile (path: string, o: { onContention?: () => void; pollMs?: number; signal?: AbortSignal } = {}): Promise<HeldLock> {
  const pollMs = o.pollMs ?? 500
  for (;;) {
    try {
      const fd = openSync(path, 'wx')
      writeFileSync(fd, `${process.pid}\n`)
      closeSync(fd)
      break
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw new GuardError(`unable to acquire file lock on "${path}": ${(err as Error).message}`)
    }
    let holder = NaN
    try { holder = Number(readFileSync(path, 'utf8').trim()) } catch { continue }
    if (!alive(holder) || holder === process.pid) { try { unlinkSync(path) } catch { /* raced with another taker */ } continue }
    try { const now = new Date(); utimesSync(path, now, now) } catch { /* released meanwhile */ }
    if (o.signal?.aborted === true) throw new GuardError(`lock file "${path}" is held by process ${holder}`)
    await new Promise(resolve => setTimeout(resolve, pollMs))
  }
  let watcher: FSWatcher | undefined
  if (o.onContention !== undefined) {
    const onContention = o.onContention
    watcher = watch(path, () => { watcher?.close(); watcher = undefined; onContention() })
  }
  return {
    release () {
      watcher?.close()
      try { if (Number(readFileSync(path, 'utf8').trim()) === process.pid) unlinkSync(path) } catch { /* gone */ }
    }
  }
}
