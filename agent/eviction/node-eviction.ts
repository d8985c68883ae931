// Binds the eviction manager to the orchlet: its config, the node's real signals, the pods' stats and the pod manager's eviction.

import { existsSync, statSync } from 'node:fs'
import { join } from 'node:path'
import type { OrchletConfig } from '../config/types.js'
import type { EventRecorder } from '../events/recorder.js'
import { podReference } from '../pods/pod-events.js'
import type { Pod } from '../pods/pod-types.js'
import { createEvictionManager, EVICTED_REASON, type EvictionManager, type PodStats } from './eviction-manager.js'
import { memcgUsage, nodeMemory, observeSignals } from './signals.js'
import { configuredThresholds, type PressureCondition, type Threshold } from './thresholds.js'
import { createMemcgNotifier, type SpawnHelper } from './memcg-notifier.js'
import { createMemoryNotifier, type MemoryNotifier } from './memory-threshold-notifier.js'

export interface NodeEvictionDeps {
  config: OrchletConfig
  /** Node allocatable memory in bytes. */
  allocatableMemoryBytes: number
  /** imagefs: where images are kept (absent: the root dir's filesystem). */
  imageDir?: string
  now(): number
  /** The Summary API's pods (the pod manager's stats). */
  statsSummary(): Promise<{ pods: Array<Record<string, unknown>> }>
  pods: {
    active(): Pod[]
    evict(uid: string, gracePeriodSeconds: number, reason: string, message: string, disruptionCondition?: boolean): Promise<boolean>
  }
  recorder: EventRecorder
  reclaimImages?(): Promise<void>
  reclaimContainers?(): Promise<void>
  onConditionsChanged?(conditions: PressureCondition[]): void
  /** Told each eviction's signal (kubelet_evictions). */
  onEvicted?(signal: string): void
  /** The cgroup mount (default /sys/fs/cgroup): its v1 memory controller is what kernelMemcgNotification watches. */
  cgroupRoot?: string
  /** The pods cgroup's v1 memory directory (allocatableMemory.available's notifications), when pods have one. */
  podsMemcgDir?: string
  /** Starts the memcg notifier's helper (tests pass a fake); the python3 to run it with. */
  spawn?: SpawnHelper
  python?: string
  logger: { info(o: object, m?: string): void, warn(o: object, m?: string): void }
}

interface SummaryPod {
  podRef?: { uid?: string }
  memory?: { workingSetBytes?: number }
  containers?: Array<{ name: string, memory?: { workingSetBytes?: number }, logs?: FsUsed, rootfs?: FsUsed }>
  volume?: Array<{ name: string, usedBytes?: number }>
  'ephemeral-storage'?: FsUsed
}

interface FsUsed { usedBytes?: number }

/** Pod usage by uid from the Summary API's pods. */
export function podStatsOf (pods: ReadonlyArray<Record<string, unknown>>): Map<string, PodStats> {
  const out = new Map<string, PodStats>()
  for (const raw of pods as unknown as SummaryPod[]) {
    const uid = raw.podRef?.uid
    if (uid === undefined) continue
    out.set(uid, {
      memoryBytes: raw.memory?.workingSetBytes,
      ephemeralStorageBytes: raw['ephemeral-storage']?.usedBytes,
      containers: (raw.containers ?? []).map(c => ({
        name: c.name,
        memoryBytes: c.memory?.workingSetBytes,
        logsBytes: c.logs?.usedBytes,
        rootfsBytes: c.rootfs?.usedBytes,
        // The disk pressure message's container usage: writable layer and logs together, when both are known.
        ephemeralStorageBytes: c.logs?.usedBytes !== undefined && c.rootfs?.usedBytes !== undefined ? c.logs.usedBytes + c.rootfs.usedBytes : undefined
      })),
      volumes: (raw.volume ?? []).flatMap(v => v.usedBytes === undefined ? [] : [{ name: v.name, usedBytes: v.usedBytes }])
    })
  }
  return out
}

/** Whether images live on a filesystem of their own (another device than the root dir's): writable layers then do not count against a container's limit. */
export function dedicatedImageFs (rootDir: string, imageDir: string | undefined): boolean {
  if (imageDir === undefined) return false
  try { return statSync(imageDir).dev !== statSync(rootDir).dev } catch { return false }
}

/**
 * kernelMemcgNotification: the kernel's memcg threshold notifications through the python3 helper where the cgroup v1
 * memory controller is mounted; undefined when the option is off (the memory signal is then polled).
 */
export function nodeMemoryNotifier (d: NodeEvictionDeps, thresholds: readonly Threshold[]): MemoryNotifier | undefined {
  if (!d.config.kernelMemcgNotification) {
    d.logger.info({}, 'eviction manager: the memory signal is polled every second (kernelMemcgNotification is off)')
    return undefined
  }
  const cgroupRoot = d.cgroupRoot ?? '/sys/fs/cgroup'
  const v1 = join(cgroupRoot, 'memory')
  return createMemoryNotifier({
    thresholds,
    rootMemcgDir: existsSync(join(v1, 'cgroup.event_control')) ? v1 : undefined,
    podsMemcgDir: d.podsMemcgDir,
    nodeFigures: () => nodeMemory(cgroupRoot),
    podsFigures: () => {
      const used = d.podsMemcgDir === undefined ? undefined : memcgUsage(d.podsMemcgDir)
      return used === undefined ? undefined : { capacity: d.allocatableMemoryBytes, ...used }
    },
    create: n => createMemcgNotifier({ ...n, spawn: d.spawn, python: d.python }),
    logger: d.logger
  })
}

export function createNodeEviction (d: NodeEvictionDeps): EvictionManager {
  const c = d.config
  const thresholds = configuredThresholds(c)
  const podStats = async (): Promise<Map<string, PodStats>> => podStatsOf((await d.statsSummary()).pods)
  const sources = {
    rootDir: c.rootDir,
    imageDir: d.imageDir,
    cgroupRoot: d.cgroupRoot,
    allocatableMemoryBytes: d.allocatableMemoryBytes,
    podsWorkingSetBytes: async () => [...(await podStats()).values()].reduce((a, p) => a + (p.memoryBytes ?? 0), 0)
  }
  return createEvictionManager({
    thresholds,
    pressureTransitionMs: c.evictionPressureTransitionPeriod,
    maxPodGracePeriodSeconds: c.evictionMaxPodGracePeriod,
    now: d.now,
    observe: async () => await observeSignals(sources),
    // Polled every second unless the kernel's memcg notification (an eventfd on cgroup v1's cgroup.event_control,
    // through the python3 helper since Node cannot make an eventfd) watches it.
    observeMemory: async () => {
      const mem = nodeMemory(d.cgroupRoot)
      return mem === undefined ? {} : { 'memory.available': { available: mem.capacity - mem.workingSet, capacity: mem.capacity } }
    },
    memoryNotifier: nodeMemoryNotifier(d, thresholds),
    activePods: () => d.pods.active(),
    podStats,
    async evictPod (req) {
      const m = req.pod.metadata
      d.logger.warn({ pod: `${m.namespace}/${m.name}`, grace: req.gracePeriodSeconds }, `evicting pod: ${req.message}`)
      d.recorder.event(podReference(req.pod), 'Warning', EVICTED_REASON, req.message)
      const evicted = await d.pods.evict(m.uid, req.gracePeriodSeconds, EVICTED_REASON, req.message, req.disruptionCondition)
      if (evicted) d.onEvicted?.(req.signal)
      return evicted
    },
    // localStorageCapacityIsolation (on by default): ephemeral-storage limits and emptyDir sizeLimits are enforced.
    ...(c.localStorageCapacityIsolation ? { localStorage: { dedicatedImageFs: () => dedicatedImageFs(c.rootDir, d.imageDir) } } : {}),
    reclaimImages: d.reclaimImages,
    reclaimContainers: d.reclaimContainers,
    onConditionsChanged: d.onConditionsChanged,
    logger: d.logger
  })
}
