// Local storage limits (localStorageCapacityIsolation): the pod whose emptyDir, total or container use is past its limit, with the kubelet's message.

import { canonicalQuantity, formatQuantity, parseQuantity, quantityFormat, type QuantityFormat } from '../config/quantity.js'
import type { Container, Pod } from '../pods/pod-types.js'

/** pkg/kubelet/eviction/helpers.go's message formats (v1.29); %q is a Go quoted string. */
const EMPTY_DIR_FMT = (volume: string, limit: string): string => `Usage of EmptyDir volume ${JSON.stringify(volume)} exceeds the limit ${JSON.stringify(limit)}. `
const POD_FMT = (limit: string): string => `Pod ephemeral local storage usage exceeds the total limit of containers ${limit}. `
const CONTAINER_FMT = (name: string, limit: string): string => `Container ${name} exceeded its local ephemeral storage limit ${JSON.stringify(limit)}. `

/** The signals kubelet_evictions counts these evictions under. */
export type LocalStorageSignal = 'emptydirfs.limit' | 'ephemeralpodfs.limit' | 'ephemeralcontainerfs.limit'

/** What local storage a pod uses now (its Summary API figures). */
export interface PodStorageUsage {
  /** The pod's total ephemeral storage (containers' writable layers and logs, local ephemeral volumes). */
  ephemeralStorageBytes?: number
  containers: ReadonlyArray<{ name: string, logsBytes?: number, rootfsBytes?: number }>
  volumes?: ReadonlyArray<{ name: string, usedBytes: number }>
}

export interface LocalStorageViolation { message: string, signal: LocalStorageSignal }

const EPHEMERAL = 'ephemeral-storage'

function limitOf (c: Container): string | undefined {
  return c.resources?.limits?.[EPHEMERAL]
}

/** Whether any of the pod's limits could be exceeded (the eviction manager measures nothing for other pods). */
export function hasLocalStorageLimits (pod: Pod): boolean {
  return [...pod.spec.containers, ...(pod.spec.initContainers ?? [])].some(c => limitOf(c) !== undefined) ||
    (pod.spec.volumes ?? []).some(v => v.emptyDir?.sizeLimit !== undefined)
}

type Amount = { bytes: number, format: QuantityFormat } | undefined

/** addResourceList for one resource: a sum keeps its first term's format. */
function add (a: Amount, b: Amount): Amount {
  if (a === undefined) return b
  return b === undefined ? a : { ...a, bytes: a.bytes + b.bytes }
}

/** maxResourceList for one resource: the larger replaces, format and all. */
function max (a: Amount, b: Amount): Amount {
  return b !== undefined && (a === undefined || b.bytes > a.bytes) ? b : a
}

function amountOf (q: string | undefined): Amount {
  return q === undefined ? undefined : { bytes: Math.ceil(parseQuantity(q)), format: quantityFormat(q) }
}

/**
 * The pod's ephemeral-storage limit as PodLimits sums it: the containers' limits added in order (the sum keeps the
 * first one's format); restartable (sidecar) init containers are added too, and each init container needs its own
 * limit plus the sidecars started before it, the largest of which wins if larger; then the pod overhead, which
 * PodLimits adds only to a resource some container limits. Undefined when no container sets one.
 */
export function podEphemeralLimit (pod: Pod): { bytes: number, format: QuantityFormat } | undefined {
  let out: Amount
  for (const c of pod.spec.containers) out = add(out, amountOf(limitOf(c)))
  let sidecars: Amount
  let init: Amount
  for (const c of pod.spec.initContainers ?? []) {
    const own = amountOf(limitOf(c))
    let need: Amount
    if (c.restartPolicy === 'Always') {
      out = add(out, own)
      sidecars = add(sidecars, own)
      need = sidecars
    } else {
      need = add(own, sidecars)
    }
    init = max(init, need)
  }
  out = max(out, init)
  const overhead = pod.spec.overhead?.[EPHEMERAL]
  if (out !== undefined && overhead !== undefined) out = add(out, amountOf(overhead))
  return out
}

/**
 * The kubelet's localStorageEviction checks for one pod, in its order: an emptyDir above its sizeLimit, then the pod's
 * total above the sum of its containers' limits, then a container whose logs (and writable layer, when images are not
 * on a filesystem of their own) exceed its limit. Undefined when the pod is within its limits.
 */
export function localStorageViolation (pod: Pod, usage: PodStorageUsage, dedicatedImageFs: boolean): LocalStorageViolation | undefined {
  for (const v of pod.spec.volumes ?? []) {
    const size = v.emptyDir?.sizeLimit
    if (size === undefined || parseQuantity(size) <= 0) continue
    const used = usage.volumes?.find(u => u.name === v.name)?.usedBytes
    if (used !== undefined && used > parseQuantity(size)) return { message: EMPTY_DIR_FMT(v.name, canonicalQuantity(size)), signal: 'emptydirfs.limit' }
  }
  const podLimit = podEphemeralLimit(pod)
  if (podLimit !== undefined && (usage.ephemeralStorageBytes ?? 0) > podLimit.bytes) {
    return { message: POD_FMT(formatQuantity(podLimit.bytes, podLimit.format)), signal: 'ephemeralpodfs.limit' }
  }
  for (const cs of usage.containers) {
    const spec = pod.spec.containers.find(c => c.name === cs.name)
    const l = spec === undefined ? undefined : limitOf(spec)
    if (l === undefined || parseQuantity(l) === 0) continue
    const used = (cs.logsBytes ?? 0) + (dedicatedImageFs ? 0 : (cs.rootfsBytes ?? 0))
    if (used > parseQuantity(l)) return { message: CONTAINER_FMT(cs.name, canonicalQuantity(l)), signal: 'ephemeralcontainerfs.limit' }
  }
  return undefined
}
