// The eviction manager: observes signals, keeps the pressure conditions, reclaims node-level resources, evicts one pod per round, admits pods.

import type { Pod } from '../pods/pod-types.js'
import { qosClass } from '../pods/pod-status.js'
import { formatBytes, parseQuantity } from '../config/quantity.js'
import {
  byEvictionPriority, conditionsLastObservedAt, conditionsOf, conditionsObservedSince, firstObservedAt, isHard, mergeThresholds, metGracePeriod,
  quantityOf, SIGNAL_RESOURCE, thresholdsMet, type Observations, type PressureCondition, type Threshold
} from './thresholds.js'
import { hasLocalStorageLimits, localStorageViolation } from './local-storage.js'
import { isCriticalPod, rankDiskPressure, rankMemoryPressure, rankPidPressure, type PodUsage, type RankFn } from './ranking.js'
import type { MemoryNotifier } from './memory-threshold-notifier.js'

/** The kubelet's eviction reason and message formats (pkg/kubelet/eviction/helpers.go). */
export const EVICTED_REASON = 'Evicted'
const NODE_LOW_FMT = (resource: string): string => `The node was low on resource: ${resource}. `
const THRESHOLD_MET_FMT = (quantity: string, available: string): string => `Threshold quantity: ${quantity}, available: ${available}. `
const CONTAINER_FMT = (name: string, usage: string, request: string, resource: string): string => `Container ${name} was using ${usage}, request is ${request}, has larger consumption of ${resource}. `
/** A hard threshold's pods get this grace period (immediateEvictionGracePeriodSeconds). */
export const IMMEDIATE_EVICTION_GRACE_SECONDS = 1
/** How often the memory notifiers' thresholds are computed again from current figures (notifierRefreshInterval). */
export const NOTIFIER_REFRESH_MS = 10_000

/**
 * Per pod: usage, and per container its memory working set and local storage (for the message naming the offending
 * containers, and the local storage limits), and the pod's volumes' usage.
 */
export interface PodStats extends PodUsage {
  containers: Array<{ name: string, memoryBytes?: number, ephemeralStorageBytes?: number, logsBytes?: number, rootfsBytes?: number }>
  volumes?: Array<{ name: string, usedBytes: number }>
}

export interface EvictionRequest {
  pod: Pod
  gracePeriodSeconds: number
  message: string
  /** The signal whose threshold was met (`memory.available`, ...): kubelet_evictions' label. */
  signal: string
  /** The event's annotations: offending_containers, offending_containers_usage, starved_resource. */
  annotations: Record<string, string>
  /** Whether the pod gets a DisruptionTarget condition (the kubelet sets none for local storage limit evictions). */
  disruptionCondition: boolean
}

export interface EvictionManagerDeps {
  thresholds: readonly Threshold[]
  /** --eviction-pressure-transition-period in ms. */
  pressureTransitionMs: number
  /** --eviction-max-pod-grace-period: soft evictions use at most this; negative defers to the pod's own. */
  maxPodGracePeriodSeconds: number
  now(): number
  observe(): Promise<Observations>
  /** Only the memory signals, cheap enough to poll between rounds where no memcg notification watches them. */
  observeMemory?(): Promise<Observations>
  /**
   * kernelMemcgNotification: the kernel tells of memory thresholds crossed (a round starts at once); its thresholds
   * are refreshed in rounds at most every NOTIFIER_REFRESH_MS. While it watches memory.available, no polling.
   */
  memoryNotifier?: MemoryNotifier
  /** Pods admitted, not finished and not being stopped. */
  activePods(): Pod[]
  podStats(): Promise<ReadonlyMap<string, PodStats>>
  /** Stops the pod and reports it Failed/Evicted; false when it could not be evicted. */
  evictPod(req: EvictionRequest): Promise<boolean>
  /** Node-level reclaim for disk signals, tried before any pod is evicted (image GC, dead-container GC). */
  reclaimImages?(): Promise<void>
  reclaimContainers?(): Promise<void>
  /**
   * localStorageCapacityIsolation: every round, pods past their ephemeral-storage or emptyDir limits are evicted
   * first (and the round ends there). `dedicatedImageFs`: writable layers are on the image filesystem, not counted.
   */
  localStorage?: { dedicatedImageFs(): boolean }
  /** Called when the set of pressure conditions changes (the node status is posted at once). */
  onConditionsChanged?(conditions: PressureCondition[]): void
  logger: { info(o: object, m?: string): void, warn(o: object, m?: string): void }
}

export type AdmitResult = { admit: true } | { admit: false, reason: string, message: string }

export interface EvictionManager {
  /** One round (the kubelet's synchronize); resolves with the pods evicted (at most one). */
  synchronize(): Promise<Pod[]>
  conditions(): PressureCondition[]
  has(condition: PressureCondition): boolean
  /** The eviction admit handler: under pressure only critical pods (and, under memory pressure alone, non-BestEffort ones). */
  admit(pod: Pod): AdmitResult
  /**
   * Runs a round every `intervalMs`; a kernel memcg notification starts one at once, and where none watches the
   * memory signal it is polled every `memoryPollMs` to start one early.
   */
  start(intervalMs: number, memoryPollMs: number): void
  /** Stops the timers and the memory notifier's helpers (resolves once they have exited). */
  stop(): Promise<void>
}

const RANK: Record<string, RankFn> = { memory: rankMemoryPressure, 'ephemeral-storage': rankDiskPressure, inodes: rankDiskPressure, pids: rankPidPressure }

function tolerates (pod: Pod, key: string, effect: string): boolean {
  const tolerations = (pod.spec as { tolerations?: Array<{ key?: string, operator?: string, effect?: string }> }).tolerations ?? []
  return tolerations.some(t => (t.effect === undefined || t.effect === '' || t.effect === effect) &&
    ((t.key ?? '') === '' ? t.operator === 'Exists' : t.key === key))
}

export const MEMORY_PRESSURE_TAINT = 'node.kubernetes.io/memory-pressure'

export function createEvictionManager (d: EvictionManagerDeps): EvictionManager {
  let met: Threshold[] = []
  let observedAt = new Map<Threshold, number>()
  let lastObserved = new Map<PressureCondition, number>()
  let current: PressureCondition[] = []
  let running: Promise<Pod[]> | undefined
  let notifierRefreshedAt: number | undefined
  const timers: NodeJS.Timeout[] = []

  function setConditions (next: PressureCondition[]): void {
    const changed = next.length !== current.length || next.some(c => !current.includes(c))
    current = next
    if (changed) {
      d.logger.info({ conditions: next }, 'eviction manager: node pressure conditions changed')
      d.onConditionsChanged?.(next)
    }
  }

  function message (t: Threshold, obs: Observations, pod: Pod, stats: PodStats | undefined): { message: string, annotations: Record<string, string> } {
    const resource = SIGNAL_RESOURCE[t.signal]
    let text = NODE_LOW_FMT(resource)
    const o = obs[t.signal]
    if (o !== undefined) text += THRESHOLD_MET_FMT(formatBytes(quantityOf(t.value, o.capacity)), formatBytes(o.available))
    const offending: string[] = []
    const usages: string[] = []
    for (const cs of stats?.containers ?? []) {
      const spec = pod.spec.containers.find(c => c.name === cs.name)
      if (spec === undefined) continue
      const usage = resource === 'memory' ? cs.memoryBytes : resource === 'ephemeral-storage' ? cs.ephemeralStorageBytes : undefined
      const req = spec.resources?.requests?.[resource] ?? '0'
      if (usage !== undefined && usage > parseQuantity(req)) {
        text += CONTAINER_FMT(cs.name, formatBytes(usage), req, resource)
        offending.push(cs.name)
        usages.push(formatBytes(usage))
      }
    }
    return { message: text, annotations: { offending_containers: offending.join(','), offending_containers_usage: usages.join(','), starved_resource: resource } }
  }

  function gracePeriod (t: Threshold, pod: Pod): number {
    if (isHard(t)) return IMMEDIATE_EVICTION_GRACE_SECONDS
    const own = pod.spec.terminationGracePeriodSeconds ?? 30
    return d.maxPodGracePeriodSeconds < 0 ? own : Math.min(own, d.maxPodGracePeriodSeconds)
  }

  /** Image and container GC for disk signals; true when the threshold (plus its minimum reclaim) is then resolved. */
  async function reclaimNodeLevel (t: Threshold): Promise<boolean> {
    const resource = SIGNAL_RESOURCE[t.signal]
    if (resource !== 'ephemeral-storage' && resource !== 'inodes') return false
    // The kubelet's order for both filesystems: dead containers first (they hold images), then unused images.
    const reclaimers = [d.reclaimContainers, d.reclaimImages]
    if (reclaimers.every(r => r === undefined)) return false
    for (const r of reclaimers) {
      if (r === undefined) continue
      try { await r() } catch (err) { d.logger.warn({ err: (err as Error).message, signal: t.signal }, 'eviction manager: node-level reclaim failed') }
    }
    const after = await d.observe()
    if (thresholdsMet([t], after, true).length === 0) {
      d.logger.info({ signal: t.signal }, 'eviction manager: node-level reclaim freed enough; no pod evicted')
      return true
    }
    return false
  }

  async function round (): Promise<Pod[]> {
    const started = d.now()
    if (d.memoryNotifier !== undefined && (notifierRefreshedAt === undefined || started - notifierRefreshedAt > NOTIFIER_REFRESH_MS)) {
      notifierRefreshedAt = started
      try { d.memoryNotifier.refresh() } catch (err) { d.logger.warn({ err: (err as Error).message }, 'eviction manager: failed to update the memory threshold notifiers') }
    }
    const obs = await d.observe()
    let now = met.length > 0 ? mergeThresholds(thresholdsMet(d.thresholds, obs, false), thresholdsMet(met, obs, true)) : thresholdsMet(d.thresholds, obs, false)
    const at = d.now()
    observedAt = firstObservedAt(now, observedAt, at)
    lastObserved = conditionsLastObservedAt(conditionsOf(now), lastObserved, at)
    setConditions(conditionsObservedSince(lastObserved, d.pressureTransitionMs, at))
    now = metGracePeriod(observedAt, at)
    met = now
    // Pods past their local storage limits go first, whatever the node's signals; nothing else is reclaimed this round.
    if (d.localStorage !== undefined) {
      const evicted = await localStorageEvictions(d.localStorage.dedicatedImageFs())
      if (evicted.length > 0) return evicted
    }
    if (now.length === 0) return []
    const target = byEvictionPriority(now)[0]!
    d.logger.warn({ signal: target.signal, available: obs[target.signal]?.available }, 'eviction manager: attempting to reclaim')
    if (await reclaimNodeLevel(target)) return []
    const resource = SIGNAL_RESOURCE[target.signal]
    const stats = await d.podStats()
    const ranked = RANK[resource]!(d.activePods(), p => stats.get(p.metadata.uid))
    for (const pod of ranked) {
      if (isCriticalPod(pod)) continue
      const { message: text, annotations } = message(target, obs, pod, stats.get(pod.metadata.uid))
      if (await d.evictPod({ pod, gracePeriodSeconds: gracePeriod(target, pod), message: text, signal: target.signal, annotations, disruptionCondition: true })) return [pod]
    }
    d.logger.warn({ signal: target.signal }, 'eviction manager: unable to evict any pods from the node')
    return []
  }

  /** localStorageEviction: every active pod past a limit is evicted at once (grace period 0); critical pods never. */
  async function localStorageEvictions (dedicatedImageFs: boolean): Promise<Pod[]> {
    const limited = d.activePods().filter(hasLocalStorageLimits)
    if (limited.length === 0) return []
    const stats = await d.podStats()
    const evicted: Pod[] = []
    for (const pod of limited) {
      const usage = stats.get(pod.metadata.uid)
      if (usage === undefined) continue
      const violation = localStorageViolation(pod, usage, dedicatedImageFs)
      if (violation === undefined) continue
      if (isCriticalPod(pod)) {
        d.logger.warn({ pod: `${pod.metadata.namespace}/${pod.metadata.name}` }, 'eviction manager: cannot evict a critical pod')
        continue
      }
      if (await d.evictPod({ pod, gracePeriodSeconds: 0, message: violation.message, signal: violation.signal, annotations: {}, disruptionCondition: false })) evicted.push(pod)
    }
    return evicted
  }

  async function pollMemory (): Promise<void> {
    if (d.observeMemory === undefined || running !== undefined || d.memoryNotifier?.watching() === true) return
    const memory = d.thresholds.filter(t => SIGNAL_RESOURCE[t.signal] === 'memory')
    if (memory.length === 0) return
    const obs = await d.observeMemory()
    // A memory threshold newly crossed starts a round now instead of at the next period.
    if (thresholdsMet(memory, obs, false).length > 0 && !current.includes('MemoryPressure')) await manager.synchronize()
  }

  const manager: EvictionManager = {
    async synchronize () {
      if (running !== undefined) return await running
      running = round().finally(() => { running = undefined })
      return await running
    },
    conditions: () => [...current],
    has: c => current.includes(c),
    admit (pod) {
      if (current.length === 0 || isCriticalPod(pod)) return { admit: true }
      if (current.length === 1 && current[0] === 'MemoryPressure') {
        if (qosClass(pod) !== 'BestEffort' || tolerates(pod, MEMORY_PRESSURE_TAINT, 'NoSchedule')) return { admit: true }
      }
      return { admit: false, reason: EVICTED_REASON, message: `The node had condition: [${current.join(' ')}]. ` }
    },
    start (intervalMs, memoryPollMs) {
      const every = (ms: number, fn: () => Promise<unknown>): void => {
        const t = setInterval(() => { fn().catch(err => d.logger.warn({ err: (err as Error).message }, 'eviction manager round failed')) }, ms)
        t.unref()
        timers.push(t)
      }
      every(intervalMs, async () => await manager.synchronize())
      if (d.observeMemory !== undefined) every(memoryPollMs, pollMemory)
      d.memoryNotifier?.start(message => {
        d.logger.info({}, message)
        // A notification during a round may come after its observations: a round follows the running one.
        const after = running ?? Promise.resolve([])
        after.catch(() => []).then(async () => await manager.synchronize())
          .catch(err => d.logger.warn({ err: (err as Error).message }, 'eviction manager round failed'))
      })
    },
    async stop () {
      for (const t of timers.splice(0)) clearInterval(t)
      await d.memoryNotifier?.stop()
    }
  }
  return manager
}
