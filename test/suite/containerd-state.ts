// Whether the private containerd of .ci/containerd.sh runs, and the marker that says the tests started it.
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

export const containerdDir = process.env.ORCH_CONTAINERD_DIR ?? '/tmp/orch-containerd'
/**
 * Written by a test that found no containerd running and started one, holding the pid of its tap run (the test's
 * parent, which is also the parent of the suite's `before` and `after`); that run's `after` stops only such a one, so
 * a containerd started otherwise (by hand, by another tap run on the same machine) is left alone.
 */
export const startedByTestsMarker = join(containerdDir, 'started-by-tests')

/** Whether the marker names the tap run this process belongs to. */
export function startedByThisRun (): boolean {
  try {
    return Number(readFileSync(startedByTestsMarker, 'utf8').trim()) === process.ppid
  } catch {
    return false
  }
}

export function containerdRunning (): boolean {
  const pidFile = join(containerdDir, 'containerd.pid')
  if (!existsSync(pidFile)) return false
  const pid = Number(readFileSync(pidFile, 'utf8').trim())
  if (!Number.isInteger(pid) || pid <= 0) return false
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}
