// Test support: finds or starts the private containerd of .ci/containerd.sh and names its busybox images.
import { execFile } from 'node:child_process'
import { existsSync, writeFileSync } from 'node:fs'
import { containerdRunning, startedByTestsMarker } from '../../../test/suite/containerd-state.js'
import { fileURLToPath } from 'node:url'

export const busyboxImage = 'docker.io/orch/busybox:test'
export const pauseImage = 'registry.orch.io/pause:3.9'
/** Same content as busybox under its own image ID, for suites that remove and re-import their image. */
export const conformanceImage = 'docker.io/orch/busybox:conformance'

export type ContainerdEnv =
  | { ok: true, endpoint: string, socket: string }
  | { ok: false, reason: string, skippable: boolean }

const scriptPath = fileURLToPath(new URL('../../../.ci/containerd.sh', import.meta.url))

function runScript (): Promise<{ code: number, stdout: string, stderr: string }> {
  return new Promise(resolve => {
    execFile('bash', [scriptPath], { timeout: 180_000, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof err.code === 'number' ? err.code : 1
      resolve({ code, stdout, stderr })
    })
  })
}

/**
 * As root, runs .ci/containerd.sh (idempotent: installs, starts, imports once) and returns its socket.
 * Not root: uses an already running one at $ORCH_CONTAINERD_DIR (default /tmp/orch-containerd) if any.
 * Callers fail unless the answer is skippable: only a non-root run outside CI (CI=true) may skip.
 */
export async function ensureContainerd (): Promise<ContainerdEnv> {
  const dir = process.env.ORCH_CONTAINERD_DIR ?? '/tmp/orch-containerd'
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0
  if (!isRoot) {
    const socket = `${dir}/containerd.sock`
    return existsSync(socket)
      ? { ok: true, socket, endpoint: `unix://${socket}` }
      : { ok: false, skippable: !inCi(), reason: `not root and no containerd socket at ${socket}; run \`sudo bash .ci/containerd.sh\`` }
  }
  const wasRunning = containerdRunning()
  const res = await runScript()
  // Started here: the `after` of this tap run (the test's parent process) stops it (test/suite/after.ts).
  if (!wasRunning && res.code === 0 && containerdRunning()) writeFileSync(startedByTestsMarker, `${process.ppid}\n`)
  const socket = res.stdout.trim().split('\n').pop() ?? ''
  if (res.code !== 0 || !socket.startsWith('/')) {
    return { ok: false, skippable: false, reason: `.ci/containerd.sh failed (exit ${res.code}): ${res.stderr.trim().split('\n').slice(-5).join(' | ')}` }
  }
  return { ok: true, socket, endpoint: `unix://${socket}` }
}

const inCi = (): boolean => process.env.CI === 'true'
