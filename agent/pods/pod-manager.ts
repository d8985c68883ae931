// Holds every pod the node runs: merges the sources, admits (--max-pods), starts, updates and stops pod workers.

import type { AgentView } from '../server/agent-server.js'
import type { SourceSink } from './sources/source.js'
import { createPodWorker, type PodWorker, type PodWorkerDeps } from './pod-worker.js'
import type { StatusManager } from './status-manager.js'
import { isStaticPod, type Pod, type PodSource, type PodStatus } from './pod-types.js'
import { rfc3339 } from '../node/node-object.js'

export interface PodManagerDeps extends Omit<PodWorkerDeps, 'onStatus'> {
  nodeName: string
  maxPods: number
  /** Absent in standalone mode. */
  statusManager?: StatusManager
  /** Extra checks for /healthz (e.g. the runtime's own status). */
  extraHealth?: () => Array<{ name: string; ok: boolean; message?: string }>
}

export interface PodManager {
  readonly sink: SourceSink
  readonly view: AgentView
  /** Pods known and admitted, by uid. */
  workers(): ReadonlyMap<string, PodWorker>
  /** Stops every pod (used by `--runonce`-style exits and tests; a real orchlet leaves pods running). */
  stopAll(): Promise<void>
  /** Resolves once no pod is being started or stopped. */
  idle(): Promise<void>
}

function graceOf (pod: Pod): number {
  return pod.metadata.deletionGracePeriodSeconds ?? pod.spec.terminationGracePeriodSeconds ?? 30
}

export function createPodManager (d: PodManagerDeps): PodManager {
  const desired = new Map<PodSource, Map<string, Pod>>()
  const workers = new Map<string, PodWorker>()
  const stopping = new Map<string, Promise<void>>()
  const rejected = new Set<string>()
  let lastSync = d.now()
  // Re-run the reconcile periodically too, so the sync-loop health check reflects a live loop.
  const resync = setInterval(() => reconcile(), 10_000)
  resync.unref()

  function onStatus (pod: Pod, status: PodStatus): void {
    d.statusManager?.set(pod, status)
  }

  function reject (pod: Pod, reason: string, message: string): void {
    if (rejected.has(pod.metadata.uid)) return
    rejected.add(pod.metadata.uid)
    d.logger.warn({ pod: pod.metadata.name, reason }, message)
    d.statusManager?.set(pod, { phase: 'Failed', reason, message, conditions: [], startTime: rfc3339(d.now()) })
  }

  function stop (uid: string, grace: number, finalDelete: boolean): void {
    const w = workers.get(uid)
    if (w === undefined || stopping.has(uid)) return
    const pod = w.pod()
    const p = (async () => {
      try {
        await w.terminate(grace)
        if (finalDelete && d.statusManager !== undefined) await d.statusManager.podRemoved(pod)
      } catch (err) {
        d.logger.warn({ pod: pod.metadata.name, err: (err as Error).message }, 'stopping pod failed')
      } finally {
        workers.delete(uid)
        stopping.delete(uid)
      }
    })()
    stopping.set(uid, p)
  }

  function reconcile (): void {
    lastSync = d.now()
    const all = new Map<string, Pod>()
    for (const pods of desired.values()) for (const [uid, pod] of pods) all.set(uid, pod)
    for (const [uid, w] of workers) {
      if (stopping.has(uid)) continue
      const pod = all.get(uid)
      if (pod === undefined) stop(uid, isStaticPod(w.pod()) ? graceOf(w.pod()) : 0, isStaticPod(w.pod()))
    }
    for (const [uid, pod] of all) {
      const w = workers.get(uid)
      if (pod.metadata.deletionTimestamp !== undefined) {
        if (w !== undefined) stop(uid, graceOf(pod), true)
        else if (!stopping.has(uid) && d.statusManager !== undefined) void d.statusManager.podRemoved(pod)
        continue
      }
      if (w !== undefined) { w.update(pod); continue }
      if (stopping.has(uid) || rejected.has(uid)) continue
      if (pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed') continue
      const active = [...workers.values()].filter(x => !x.finished()).length
      if (active >= d.maxPods) { reject(pod, 'OutOfpods', `Node didn't have enough resource: pods, requested: 1, used: ${active}, capacity: ${d.maxPods}`); continue }
      try {
        const worker = createPodWorker(pod, { ...d, onStatus })
        workers.set(uid, worker)
        worker.update(pod)
      } catch (err) {
        reject(pod, 'UnexpectedAdmissionError', `Pod was rejected: ${(err as Error).message}`)
      }
    }
    for (const uid of rejected) if (!all.has(uid)) rejected.delete(uid)
  }

  function find (namespace: string, name: string): PodWorker | undefined {
    for (const w of workers.values()) {
      const m = w.pod().metadata
      if (m.namespace === namespace && m.name === name) return w
    }
    return undefined
  }

  const view: AgentView = {
    pods: () => [...workers.values()].map(w => ({ ...w.pod(), status: w.status() ?? w.pod().status ?? { phase: 'Pending' } } as unknown as Record<string, unknown>)),
    containerLogPath: (ns, pod, container, previous) => find(ns, pod)?.containerLogPath(container, previous),
    containerWaiting: (ns, pod, container) => find(ns, pod)?.containerWaiting(container),
    hasContainer: (ns, pod, container) => find(ns, pod)?.pod().spec.containers.concat(find(ns, pod)?.pod().spec.initContainers ?? []).some(c => c.name === container) ?? false,
    containerRunning: (ns, pod, container) => find(ns, pod)?.containerRunning(container) ?? false,
    statsSummary: async () => ({
      node: { nodeName: d.nodeName, startTime: rfc3339(d.now()) },
      pods: [...workers.values()].map(w => ({ podRef: { name: w.pod().metadata.name, namespace: w.pod().metadata.namespace, uid: w.uid }, containers: [] }))
    }),
    healthChecks: () => [
      { name: 'ping', ok: true },
      { name: 'syncloop', ok: d.now() - lastSync < 5 * 60_000, message: 'pod sync loop is stalled' },
      ...(d.extraHealth?.() ?? [])
    ]
  }

  return {
    sink: {
      set (source, pods) {
        desired.set(source, new Map(pods.map(p => [p.metadata.uid, p])))
        reconcile()
      }
    },
    view,
    workers: () => workers,
    async stopAll () {
      clearInterval(resync)
      desired.clear()
      for (const [uid, w] of workers) stop(uid, graceOf(w.pod()), false)
      await Promise.all([...stopping.values()])
    },
    async idle () { await Promise.all([...stopping.values()]) }
  }
}
