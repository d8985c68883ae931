// Test support for pod lifecycle tests: a pod manager on a given runtime in a temp dir, and a status poller.

import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Test } from 'tap'
import type { ContainerRuntime } from '../runtime/runtime.js'
import type { EventRecorder } from '../events/recorder.js'
import { createEventRecorder } from '../events/recorder.js'
import { createBackoff } from './backoff.js'
import { createPodManager, type PodManager } from './pod-manager.js'
import type { Pod, PodStatus } from './pod-types.js'
import type { StatusManager } from './status-manager.js'

export interface TestPodManagerOptions {
  runtime: ContainerRuntime
  maxPods?: number
  relistMs?: number
  recorder?: EventRecorder
  /** A root (pods dir and logs) shared with an earlier manager, as after an orchlet restart; the caller removes it. */
  root?: string
  /** Receives the statuses the manager posts (evictions, shutdowns); absent: none posted. */
  statusManager?: StatusManager
}

/** A standalone pod manager (no API server) with short back-off, torn down with the test. */
export function testPodManager (t: Test, o: TestPodManagerOptions): { pods: PodManager; root: string } {
  const root = o.root ?? mkdtempSync(join(tmpdir(), 'orch-pods-'))
  const quiet = { info () {}, warn () {} }
  const pods = createPodManager({
    nodeName: 'node-a',
    maxPods: o.maxPods ?? 10,
    runtimeFor: () => o.runtime,
    rootDir: root,
    logsRoot: join(root, 'logs'),
    hostIP: '127.0.0.1',
    cpuCfsQuota: true,
    cfsPeriodUs: 100_000,
    backoff: createBackoff({ initialMs: 300, maxMs: 1200, now: Date.now }),
    now: Date.now,
    logger: quiet,
    relistMs: o.relistMs ?? 50,
    recorder: o.recorder ?? createEventRecorder({ component: 'orchlet', host: 'node-a', qps: 0, burst: 0, logger: quiet }),
    ...(o.statusManager !== undefined ? { statusManager: o.statusManager } : {})
  })
  t.teardown(async () => { await pods.stopAll(); if (o.root === undefined) rmSync(root, { recursive: true, force: true }) })
  return { pods, root }
}

/** Drops a manager as a crashed orchlet would: its workers stop syncing and probing, its pods keep running. */
export function detachAll (pods: PodManager): void {
  for (const w of pods.workers().values()) w.detach()
}

/** Polls the pod's status until `check` holds; throws with the last status after `timeoutMs`. */
export async function waitForStatus (pods: PodManager, p: Pod, check: (s: PodStatus) => boolean, timeoutMs = 10_000): Promise<PodStatus> {
  const deadline = Date.now() + timeoutMs
  let last: PodStatus | undefined
  while (Date.now() < deadline) {
    last = pods.workers().get(p.metadata.uid)?.status()
    if (last !== undefined && check(last)) return last
    await new Promise(resolve => setTimeout(resolve, 25))
  }
  throw new Error(`timed out; last status: ${JSON.stringify(last)}`)
}
