// Holds every pod the node runs: merges the sources, admits (--max-pods), starts, updates and stops pod workers.

import type { AgentView } from '../server/agent-server.js'
import type { SourceSink } from './sources/source.js'
import { createPodWorker, type PodWorker, type PodWorkerDeps } from './pod-worker.js'
import { mirrorIsCurrent, type StatusManager } from './status-manager.js'
import { gracePeriodOf, isStaticPod, podKey, type Pod, type PodSource, type PodStatus } from './pod-types.js'
import { evictedStatus, nodeShutdownStatus, type ShutdownTarget } from './node-shutdown.js'
import { rfc3339 } from '../node/node-object.js'
import { podReference } from './pod-events.js'
import { removeOrphanedPods } from './adoption.js'
import type { ContainerRuntime } from '../runtime/runtime.js'
import { createHistogram, type MetricFamily } from '../server/metrics.js'
import { createStatsSummary } from '../server/stats-summary.js'
import { cachedDiskUsage } from '../node/disk-usage.js'

export interface PodManagerDeps extends Omit<PodWorkerDeps, 'onStatus'> {
  nodeName: string
  maxPods: number
  /** Absent in standalone mode. */
  statusManager?: StatusManager
  /** Node-level admission besides --max-pods (e.g. sysctls): the refusal's reason and message, or undefined. */
  admit?(pod: Pod): { reason: string; message: string } | undefined
  /** Extra checks for /healthz (e.g. the runtime's own status). */
  extraHealth?: () => Array<{ name: string; ok: boolean; message?: string }>
  /**
   * Every runtime the node has, for housekeeping: once each of `expectedSources` has reported its first
   * set, and every `housekeepingMs` after, sandboxes of pods no source wants are removed from them
   * (after an orchlet restart, pods deleted meanwhile are still in the runtime).
   */
  runtimes?: () => ContainerRuntime[]
  /** The sources this node is configured with (housekeeping waits for each one's first set). */
  expectedSources?: PodSource[]
  /** Housekeeping period (default one minute). */
  housekeepingMs?: number
  /** A pod first reached phase Running this long (seconds) after the orchlet first saw it (kubelet_pod_start_duration_seconds). */
  onPodStarted?: (seconds: number) => void
  /** Admission beyond --max-pods (the eviction manager's: no BestEffort pods under memory pressure). */
  admitPod?(pod: Pod): { admit: true } | { admit: false, reason: string, message: string }
}

export interface PodManager extends ShutdownTarget {
  readonly sink: SourceSink
  readonly view: AgentView
  /** Pods known and admitted, by uid. */
  workers(): ReadonlyMap<string, PodWorker>
  /** Stops every pod (used by `--runonce`-style exits and tests; a real orchlet leaves pods running). */
  stopAll(): Promise<void>
  /** Resolves once no pod is being started or stopped. */
  idle(): Promise<void>
  /** Removes orphaned runtime pods now (when every expected source has reported); resolves with the uids removed. */
  housekeeping(): Promise<string[]>
  /**
   * Stops a pod for the eviction manager and reports it Failed with `reason` and `message` and (unless
   * `disruptionCondition` is false) a DisruptionTarget condition; it is not started again. False when the pod is unknown or already stopping.
   */
  evict(uid: string, gracePeriodSeconds: number, reason: string, message: string, disruptionCondition?: boolean): Promise<boolean>
  /** The pod manager's Prometheus metrics (pods, containers by state, sync and housekeeping durations). */
  metrics(): MetricFamily[]
}

export function createPodManager (d: PodManagerDeps): PodManager {
  const desired = new Map<PodSource, Map<string, Pod>>()
  const workers = new Map<string, PodWorker>()
  const stopping = new Map<string, Promise<void>>()
  const rejected = new Set<string>()
  /** Per source, the uids dropped as duplicates at its last report, so FailedValidation is recorded once per pod. */
  const duplicates = new Map<PodSource, Set<string>>()
  const mirrors = new Map<string, Pod>()
  let mirrorsSeen = false
  const reconcileSeconds = createHistogram()
  const housekeepingSeconds = createHistogram()
  let startedPods = 0
  /** When each pod not yet Running was first seen (ms), for the pod start latency. */
  const firstSeen = new Map<string, number>()
  let housekeepingRun: Promise<string[]> | undefined
  let lastSync = d.now()
  let closed = false
  const stats = createStatsSummary({
    nodeName: d.nodeName, rootDir: d.rootDir, now: d.now, runtimeFor: d.runtimeFor, handlerFor: d.handlerFor, pods: () => [...workers.values()].map(w => ({ pod: w.pod(), status: w.status() })),
    // Local storage (logs, volumes): each path walked at most every 5 s however often the summary is asked for.
    storage: { rootDir: d.rootDir, logsRoot: d.logsRoot, diskUsage: cachedDiskUsage(5_000) }
  })
  // Re-run the reconcile periodically too, so the sync-loop health check reflects a live loop.
  const resync = setInterval(() => { reconcile(); checkMirrors() }, 10_000)
  resync.unref()
  const housekeepingTimer = setInterval(() => { void housekeeping() }, d.housekeepingMs ?? 60_000)
  housekeepingTimer.unref()

  /** No more reconciling, resyncs or housekeeping: what runs now is stopped, detached or left by the caller. */
  function close (): void {
    closed = true
    clearInterval(resync)
    clearInterval(housekeepingTimer)
    desired.clear()
  }

  function onStatus (pod: Pod, status: PodStatus): void {
    const seen = firstSeen.get(pod.metadata.uid)
    if (seen !== undefined && status.phase === 'Running') {
      firstSeen.delete(pod.metadata.uid)
      d.onPodStarted?.((d.now() - seen) / 1000)
    }
    d.statusManager?.set(pod, status)
  }

  /** The kubelet's rejectPod: a Warning event with the admission message, and a Failed status saying the pod was rejected. */
  function reject (pod: Pod, reason: string, message: string): void {
    if (rejected.has(pod.metadata.uid)) return
    rejected.add(pod.metadata.uid)
    d.logger.warn({ pod: pod.metadata.name, reason }, message)
    d.recorder.event(podReference(pod), 'Warning', reason, message)
    d.statusManager?.set(pod, { phase: 'Failed', reason, message: `Pod was rejected: ${message}`, conditions: [], startTime: rfc3339(d.now()) })
  }

  /**
   * The kubelet's filterInvalidPods: within one source, a pod whose namespace/name an earlier pod already
   * has is dropped (two static pods would otherwise fight over one mirror pod).
   */
  function dropDuplicates (source: PodSource, pods: Pod[]): Pod[] {
    const names = new Set<string>()
    const seen = duplicates.get(source) ?? new Set<string>()
    const now = new Set<string>()
    const kept: Pod[] = []
    for (const pod of pods) {
      const name = podKey(pod)
      if (!names.has(name)) { names.add(name); kept.push(pod); continue }
      const m = pod.metadata
      now.add(m.uid)
      if (seen.has(m.uid)) continue
      d.logger.warn({ pod: name, source }, 'pod failed validation due to duplicate pod name, ignoring')
      d.recorder.event(podReference(pod), 'Warning', 'FailedValidation', `Error validating pod ${m.name}_${m.namespace}(${m.uid}) from ${source} due to duplicate pod name "${m.name}", ignoring`)
    }
    duplicates.set(source, now)
    return kept
  }

  /** Static pods whose mirror is missing, being deleted or stale get their status written again, which remakes the mirror. */
  function checkMirrors (): void {
    if (!mirrorsSeen || d.statusManager === undefined) return
    const byName = new Map<string, Pod>()
    for (const m of mirrors.values()) byName.set(podKey(m), m)
    for (const [uid, w] of workers) {
      const pod = w.pod()
      const status = w.status()
      if (!isStaticPod(pod) || stopping.has(uid) || status === undefined) continue
      const mirror = byName.get(podKey(pod))
      if (mirror === undefined || !mirrorIsCurrent(pod, mirror)) d.statusManager.set(pod, status)
    }
    // As the kubelet's deleteOrphanedMirrorPods: once the static sources reported, a mirror without a static pod goes.
    const staticSources = (d.expectedSources ?? []).filter(s => s !== 'api')
    if (!staticSources.every(s => desired.has(s))) return
    const staticNames = new Set<string>()
    for (const s of staticSources) for (const p of desired.get(s)?.values() ?? []) staticNames.add(podKey(p))
    for (const w of workers.values()) if (isStaticPod(w.pod())) staticNames.add(podKey(w.pod()))
    for (const m of mirrors.values()) {
      if (!staticNames.has(podKey(m)) && m.metadata.deletionTimestamp === undefined) void d.statusManager.deleteOrphanedMirror(m)
    }
  }

  /** May the runtime keep this pod? Any live worker, and any pod a source wants (unless deleted and already stopped). */
  function isWanted (uid: string): boolean {
    if (workers.has(uid)) return true
    for (const pods of desired.values()) {
      const pod = pods.get(uid)
      if (pod !== undefined && pod.metadata.deletionTimestamp === undefined) return true
    }
    return false
  }

  /**
   * A set answering from the live state at each lookup: a pod admitted while the runtime is being listed
   * (its sandbox just made) is never taken for an orphan.
   */
  const wanted = new (class extends Set<string> { override has (uid: string): boolean { return isWanted(uid) } })()

  async function housekeeping (): Promise<string[]> {
    if (housekeepingRun !== undefined) return await housekeepingRun
    if (d.runtimes === undefined || !(d.expectedSources ?? []).every(s => desired.has(s))) return []
    const runtimes = d.runtimes()
    housekeepingRun = (async () => {
      const started = d.now()
      const removed: string[] = []
      for (const rt of runtimes) {
        try {
          const gone = await removeOrphanedPods(rt.runtime, wanted)
          if (gone.length > 0) d.logger.info({ runtime: rt.name, pods: gone }, 'removed orphaned pods from the runtime')
          removed.push(...gone)
        } catch (err) {
          d.logger.warn({ runtime: rt.name, err: (err as Error).message }, 'orphaned pod cleanup failed')
        }
      }
      housekeepingSeconds.observe((d.now() - started) / 1000)
      return removed
    })().finally(() => { housekeepingRun = undefined })
    return await housekeepingRun
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
        firstSeen.delete(uid)
        stopping.delete(uid)
        // A static pod waiting for this one's full name can start now.
        if (!closed) setImmediate(() => { if (!closed) reconcile() })
      }
    })()
    stopping.set(uid, p)
  }

  /** Whether another worker of the same namespace/name still holds containers (being stopped, or running). */
  function sameNameBusy (pod: Pod, uid: string): boolean {
    for (const [other, w] of workers) {
      if (other === uid) continue
      const m = w.pod().metadata
      if (m.namespace === pod.metadata.namespace && m.name === pod.metadata.name) return true
    }
    return false
  }

  /**
   * A pod being deleted that this orchlet has no worker for (it restarted meanwhile): a worker adopts what
   * the runtime still runs and stops it with the pod's grace period before the delete is confirmed.
   */
  function stopUnknown (uid: string, pod: Pod): void {
    try {
      workers.set(uid, createPodWorker(pod, { ...d, onStatus }))
      stop(uid, gracePeriodOf(pod), true)
    } catch {
      if (d.statusManager !== undefined) void d.statusManager.podRemoved(pod)
    }
  }

  function reconcile (): void {
    lastSync = d.now()
    const began = process.hrtime.bigint()
    const all = new Map<string, Pod>()
    for (const pods of desired.values()) for (const [uid, pod] of pods) all.set(uid, pod)
    for (const [uid, w] of workers) {
      if (stopping.has(uid)) continue
      const pod = all.get(uid)
      if (pod === undefined) stop(uid, isStaticPod(w.pod()) ? gracePeriodOf(w.pod()) : 0, isStaticPod(w.pod()))
    }
    for (const [uid, pod] of all) {
      const w = workers.get(uid)
      if (pod.metadata.deletionTimestamp !== undefined) {
        if (w !== undefined) stop(uid, gracePeriodOf(pod), true)
        else if (!stopping.has(uid)) stopUnknown(uid, pod)
        continue
      }
      if (w !== undefined) { w.update(pod); continue }
      if (stopping.has(uid) || rejected.has(uid)) continue
      // As the kubelet: a static pod whose previous version (same full name) is still stopping waits for it.
      if (isStaticPod(pod) && sameNameBusy(pod, uid)) continue
      if (pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed') continue
      const active = [...workers.values()].filter(x => !x.finished()).length
      const admission = d.admitPod?.(pod)
      if (admission !== undefined && !admission.admit) { reject(pod, admission.reason, admission.message); continue }
      if (active >= d.maxPods) { reject(pod, 'OutOfpods', `Node didn't have enough resource: pods, requested: 1, used: ${active}, capacity: ${d.maxPods}`); continue }
      const refused = d.admit?.(pod)
      if (refused !== undefined) { reject(pod, refused.reason, refused.message); continue }
      try {
        const worker = createPodWorker(pod, { ...d, onStatus })
        workers.set(uid, worker)
        if (firstSeen.size < 10_000) firstSeen.set(uid, d.now())
        startedPods++
        worker.update(pod)
      } catch (err) {
        reject(pod, 'UnexpectedAdmissionError', (err as Error).message)
      }
    }
    for (const uid of rejected) if (!all.has(uid)) rejected.delete(uid)
    reconcileSeconds.observe(Number(process.hrtime.bigint() - began) / 1e9)
  }

  function metrics (): MetricFamily[] {
    const states = { running: 0, exited: 0, created: 0 }
    let runningPods = 0
    let staticPods = 0
    for (const w of workers.values()) {
      const st = w.status()
      if (isStaticPod(w.pod())) staticPods++
      if (st?.conditions?.find(c => c.type === 'PodReadyToStartContainers')?.status === 'True') runningPods++
      for (const c of [...(st?.initContainerStatuses ?? []), ...(st?.containerStatuses ?? [])]) {
        if (c.state.running !== undefined) states.running++
        else if (c.state.terminated !== undefined) states.exited++
        else if (c.containerID !== undefined) states.created++
      }
    }
    let desiredStatic = 0
    let desiredApi = 0
    for (const [source, pods] of desired) { if (source === 'api') desiredApi += pods.size; else desiredStatic += pods.size }
    return [
      { name: 'orchlet_node_name', help: 'The node\'s name. The count is always 1.', type: 'gauge', samples: [{ labels: { node: d.nodeName }, value: 1 }] },
      { name: 'orchlet_running_pods', help: 'Number of pods that have a running pod sandbox', type: 'gauge', samples: [{ value: runningPods }] },
      { name: 'orchlet_running_containers', help: 'Number of containers currently running', type: 'gauge', samples: Object.entries(states).map(([state, value]) => ({ labels: { container_state: state }, value })) },
      { name: 'orchlet_desired_pods', help: 'The number of pods the orchlet is being instructed to run. static is true if the pod is not from the apiserver.', type: 'gauge', samples: [{ labels: { static: '' }, value: desiredApi }, { labels: { static: 'true' }, value: desiredStatic }] },
      { name: 'orchlet_active_pods', help: 'The number of pods the orchlet considers active and which are being considered when admitting new pods. static is true if the pod is not from the apiserver.', type: 'gauge', samples: [{ labels: { static: '' }, value: workers.size - staticPods }, { labels: { static: 'true' }, value: staticPods }] },
      { name: 'orchlet_mirror_pods', help: 'The number of mirror pods the orchlet will try to create (one per admitted static pod)', type: 'gauge', samples: [{ value: d.statusManager === undefined ? 0 : staticPods }] },
      { name: 'orchlet_started_pods_total', help: 'Cumulative number of pods started', type: 'counter', samples: [{ value: startedPods }] },
      { name: 'orchlet_pod_sync_duration_seconds', help: 'Duration in seconds to merge the sources\' pods and start, update or stop pod workers.', type: 'histogram', histogram: reconcileSeconds.snapshot() },
      { name: 'orchlet_housekeeping_duration_seconds', help: 'Duration in seconds of housekeeping (orphaned runtime pod cleanup).', type: 'histogram', histogram: housekeepingSeconds.snapshot() }
    ]
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
    runtimeIds: (ns, pod, container) => find(ns, pod)?.runtimeIds(container),
    statsSummary: async () => await stats.summary() as unknown as Record<string, unknown>,
    healthChecks: () => [
      { name: 'ping', ok: true },
      { name: 'syncloop', ok: d.now() - lastSync < 5 * 60_000, message: 'pod sync loop is stalled' },
      ...(d.extraHealth?.() ?? [])
    ]
  }

  return {
    sink: {
      set (source, pods) {
        if (closed) return
        const first = !desired.has(source)
        desired.set(source, new Map(dropDuplicates(source, pods).map(p => [p.metadata.uid, p])))
        reconcile()
        checkMirrors()
        // The kubelet cleans up once all its sources are ready; after a restart that removes pods deleted meanwhile.
        if (first) void housekeeping()
      },
      mirrors (pods) {
        mirrors.clear()
        for (const p of pods) mirrors.set(p.metadata.uid, p)
        mirrorsSeen = true
        checkMirrors()
      }
    },
    view,
    workers: () => workers,
    async stopAll () {
      close()
      for (const [uid, w] of workers) stop(uid, gracePeriodOf(w.pod()), false)
      await Promise.all([...stopping.values()])
    },
    close,
    active: () => [...workers].filter(([uid, w]) => !stopping.has(uid) && !w.finished()).map(([, w]) => w.pod()),
    async shutdownPod (uid, gracePeriodSeconds) {
      const w = workers.get(uid)
      if (w === undefined) return
      stop(uid, gracePeriodSeconds, false)
      await stopping.get(uid)
      d.statusManager?.set(w.pod(), nodeShutdownStatus(w.status(), rfc3339(d.now())))
    },
    detach (uid) { workers.get(uid)?.detach() },
    async evict (uid, gracePeriodSeconds, reason, message, disruptionCondition = true) {
      const w = workers.get(uid)
      if (w === undefined || stopping.has(uid)) return false
      // Kept in the rejected set, an evicted pod is not started again while its source still lists it.
      rejected.add(uid)
      stop(uid, gracePeriodSeconds, false)
      await stopping.get(uid)
      d.statusManager?.set(w.pod(), evictedStatus(w.status(), reason, message, rfc3339(d.now()), disruptionCondition))
      return true
    },
    async idle () { await Promise.all([...stopping.values()]) },
    housekeeping,
    metrics
  }
}
