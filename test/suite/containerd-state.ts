// Whether the private containerd of .ci/containerd.sh runs, and the marker that says it ran before the tests did.
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

export const containerdDir = process.env.ORCH_CONTAINERD_DIR ?? '/tmp/orch-containerd'
/**
 * Present while a test run is going on a machine whose containerd was already running: that one is left alone.
 * One marker per run (tap starts its before and after hooks from the same runner process), so parallel runs on a
 * shared machine do not remove each other's marker and stop a containerd that others use.
 */
export const preexistingMarker = join(containerdDir, `running-before-tests.${process.ppid}`)

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
