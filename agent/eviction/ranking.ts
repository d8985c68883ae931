// Orders pods for eviction as the kubelet does: usage above requests first, then lower priority, then larger usage above requests.

import { parseQuantity } from '../config/quantity.js'
import type { Container, Pod } from '../pods/pod-types.js'
import { isStaticPod, isMirrorPod } from '../pods/pod-types.js'
import { SYSTEM_CRITICAL_PRIORITY } from '../pods/node-shutdown.js'

/** What a pod uses now (absent when its stats are unknown). */
export interface PodUsage { memoryBytes?: number; ephemeralStorageBytes?: number; processes?: number }


/** The kubelet's IsCriticalPod: static and mirror pods and system-critical priorities are never evicted. */
export function isCriticalPod (pod: Pod): boolean {
  return isStaticPod(pod) || isMirrorPod(pod) || (pod.spec.priority ?? 0) >= SYSTEM_CRITICAL_PRIORITY
}

function request (c: Container, resource: string): number {
  const v = c.resources?.requests?.[resource] ?? c.resources?.limits?.[resource]
  return v === undefined ? 0 : parseQuantity(v)
}

/** The pod's effective request: the larger of the containers' sum and any one init container's (resourcehelper.PodRequests). */
export function podRequest (pod: Pod, resource: string): number {
  const sum = pod.spec.containers.reduce((a, c) => a + request(c, resource), 0)
  const init = Math.max(0, ...(pod.spec.initContainers ?? []).map(c => request(c, resource)))
  return Math.max(sum, init)
}

type Cmp = (a: Pod, b: Pod) => number

function orderedBy (...cmps: Cmp[]): Cmp {
  return (a, b) => {
    for (const c of cmps) {
      const r = c(a, b)
      if (r !== 0) return r
    }
    return 0
  }
}

/** Lower priority first. */
const priority: Cmp = (a, b) => (a.spec.priority ?? 0) - (b.spec.priority ?? 0)

/** Pods whose usage exceeds their request come first; a pod without stats counts as not exceeding. */
function exceedsRequests (usage: (p: Pod) => number | undefined, resource: string): Cmp {
  const exceeds = (p: Pod): number => { const u = usage(p); return u !== undefined && u > podRequest(p, resource) ? 1 : 0 }
  return (a, b) => exceeds(b) - exceeds(a)
}

/** Larger usage above the request first (pods without stats last). */
function aboveRequest (usage: (p: Pod) => number | undefined, resource: string): Cmp {
  const above = (p: Pod): number => { const u = usage(p); return u === undefined ? -Infinity : u - podRequest(p, resource) }
  return (a, b) => {
    const x = above(a); const y = above(b)
    return x === y ? 0 : (y > x ? 1 : -1)
  }
}

export type RankFn = (pods: readonly Pod[], usage: (p: Pod) => PodUsage | undefined) => Pod[]

export const rankMemoryPressure: RankFn = (pods, usage) => {
  const mem = (p: Pod): number | undefined => usage(p)?.memoryBytes
  return [...pods].sort(orderedBy(exceedsRequests(mem, 'memory'), priority, aboveRequest(mem, 'memory')))
}

export const rankDiskPressure: RankFn = (pods, usage) => {
  const disk = (p: Pod): number | undefined => usage(p)?.ephemeralStorageBytes
  return [...pods].sort(orderedBy(exceedsRequests(disk, 'ephemeral-storage'), priority, aboveRequest(disk, 'ephemeral-storage')))
}

export const rankPidPressure: RankFn = (pods, usage) => {
  const procs = (p: Pod): number => usage(p)?.processes ?? 0
  return [...pods].sort(orderedBy(priority, (a, b) => procs(b) - procs(a)))
}
