// Resource arithmetic of scheduling: what a pod requests and what a node has, in milli-cpu, bytes and counts.

import type { Obj } from '../controllers/client/types.js'

export interface Resources {
  milliCpu: number
  memory: number
  ephemeralStorage: number
  /** Extended resources (`example.com/gpu`, `hugepages-2Mi`) in their own units. */
  scalar: Record<string, number>
}

const BINARY: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 }
const DECIMAL: Record<string, number> = { n: 1e-9, u: 1e-6, m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18 }
const QUANTITY = /^([+-]?(?:\d+(?:\.\d*)?|\.\d+))(Ki|Mi|Gi|Ti|Pi|Ei|[eE][+-]?\d+|[numkMGTPE]?)$/

/** A quantity (`500m`, `1Gi`, `2`) in base units; 0 for what does not parse (validation refuses it earlier). */
export function quantity (v: unknown): number {
  if (typeof v === 'number') return v
  const m = QUANTITY.exec(String(v ?? '').trim())
  if (m === null) return 0
  const s = m[2]
  const factor = s in BINARY ? BINARY[s] : (s[0] === 'e' || s[0] === 'E') ? 10 ** Number(s.slice(1)) : DECIMAL[s]
  return Number(m[1]) * factor
}

export const milli = (v: unknown): number => Math.ceil(Number((quantity(v) * 1000).toFixed(6)))

export function emptyResources (): Resources {
  return { milliCpu: 0, memory: 0, ephemeralStorage: 0, scalar: {} }
}

function fromList (list: Record<string, unknown> | undefined): Resources {
  const r = emptyResources()
  for (const [name, v] of Object.entries(list ?? {})) {
    if (name === 'cpu') r.milliCpu = milli(v)
    else if (name === 'memory') r.memory = quantity(v)
    else if (name === 'ephemeral-storage') r.ephemeralStorage = quantity(v)
    else if (name !== 'pods') r.scalar[name] = quantity(v)
  }
  return r
}

export function add (a: Resources, b: Resources, sign = 1): void {
  a.milliCpu += sign * b.milliCpu
  a.memory += sign * b.memory
  a.ephemeralStorage += sign * b.ephemeralStorage
  for (const [k, v] of Object.entries(b.scalar)) a.scalar[k] = (a.scalar[k] ?? 0) + sign * v
}

function max (a: Resources, b: Resources): Resources {
  const scalar = { ...a.scalar }
  for (const [k, v] of Object.entries(b.scalar)) scalar[k] = Math.max(scalar[k] ?? 0, v)
  return { milliCpu: Math.max(a.milliCpu, b.milliCpu), memory: Math.max(a.memory, b.memory), ephemeralStorage: Math.max(a.ephemeralStorage, b.ephemeralStorage), scalar }
}

/**
 * What a pod asks of a node: the sum of its containers' requests (limits when only limits are given), at
 * least the largest init container's, plus the pod overhead (Kubernetes' resource.PodRequests).
 */
export function podRequests (pod: Obj): Resources {
  const requestsOf = (c: Obj): Resources => fromList({ ...(c.resources?.limits ?? {}), ...(c.resources?.requests ?? {}) })
  const sum = emptyResources()
  for (const c of (pod.spec?.containers ?? []) as Obj[]) add(sum, requestsOf(c))
  let init = emptyResources()
  for (const c of (pod.spec?.initContainers ?? []) as Obj[]) init = max(init, requestsOf(c))
  const total = max(sum, init)
  add(total, fromList(pod.spec?.overhead))
  return total
}

export interface NodeCapacity extends Resources { pods: number }

export function nodeAllocatable (node: Obj): NodeCapacity {
  const list = (node.status?.allocatable ?? node.status?.capacity ?? {}) as Record<string, unknown>
  return { ...fromList(list), pods: list.pods === undefined ? 110 : quantity(list.pods) }
}
