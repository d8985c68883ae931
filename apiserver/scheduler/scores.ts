// Score plugins: least allocated, balanced allocation and preferred node affinity, each 0-100, summed.

import type { Obj } from '../controllers/client/types.js'
import type { NodeInfo } from './node-info.js'
import { preferredAffinityScore } from './node-affinity.js'
import { podRequests, type Resources } from './resources.js'

/** Requests kube-scheduler assumes for a container that names none (non-zero defaults: 100m cpu, 200 MiB). */
const DEFAULT_MILLI_CPU = 100
const DEFAULT_MEMORY = 200 * 1024 * 1024

function fractions (want: Resources, n: NodeInfo): [number, number] {
  const cpu = want.milliCpu > 0 ? want.milliCpu : DEFAULT_MILLI_CPU
  const mem = want.memory > 0 ? want.memory : DEFAULT_MEMORY
  const cpuFrac = n.allocatable.milliCpu > 0 ? (n.requested.milliCpu + cpu) / n.allocatable.milliCpu : 1
  const memFrac = n.allocatable.memory > 0 ? (n.requested.memory + mem) / n.allocatable.memory : 1
  return [Math.min(1, cpuFrac), Math.min(1, memFrac)]
}

export function leastAllocated (want: Resources, n: NodeInfo): number {
  const [c, m] = fractions(want, n)
  return ((1 - c) * 100 + (1 - m) * 100) / 2
}

export function balancedAllocation (want: Resources, n: NodeInfo): number {
  const [c, m] = fractions(want, n)
  return (1 - Math.abs(c - m) / 2) * 100
}

/** Total score of each feasible node; preferred affinity is normalised to 0-100 over the candidates. */
export function scoreNodes (pod: Obj, nodes: NodeInfo[]): number[] {
  const affinity = nodes.map(n => preferredAffinityScore(pod, n.node ?? {}))
  const maxAffinity = Math.max(0, ...affinity)
  const want = podRequests(pod)
  return nodes.map((n, i) => leastAllocated(want, n) + balancedAllocation(want, n) + (maxAffinity > 0 ? affinity[i] * 100 / maxAffinity : 0))
}
