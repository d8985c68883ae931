// Preemption (kube-scheduler's DefaultPreemption post-filter): when a pod fits nowhere, find the node where evicting
// the fewest, lowest-priority pods makes it fit.

import type { Obj } from '../controllers/client/types.js'
import { filterNode } from './filters.js'
import { NodeInfo } from './node-info.js'

export interface Preemption { node: string, victims: Obj[] }

const priorityOf = (p: Obj): number => Number(p.spec?.priority ?? 0)

/** Lower is better: the highest victim priority, then the number of victims, then their summed priority. */
function lexLess (a: number[], b: number[]): boolean {
  const i = a.findIndex((v, k) => v !== b[k])
  return i >= 0 && a[i] < b[i]
}

/** A copy of `n` without `removed` (pod keys), for trying a pod against it. */
function without (n: NodeInfo, removed: Set<string>): NodeInfo {
  const copy = new NodeInfo(n.name)
  if (n.node !== undefined) copy.setNode(n.node)
  for (const [k, p] of n.pods) if (!removed.has(k)) copy.addPod(k, p)
  return copy
}

/** The best node to preempt on, or undefined when no set of lower-priority pods would make room. */
export function findPreemption (pod: Obj, nodes: NodeInfo[]): Preemption | undefined {
  if (pod.spec?.preemptionPolicy === 'Never') return undefined
  const priority = priorityOf(pod)
  let best: { node: string, victims: Obj[], score: number[] } | undefined
  for (const n of nodes) {
    if (n.node === undefined) continue
    const lower = [...n.pods].filter(([, p]) => priorityOf(p) < priority && (p.metadata?.deletionTimestamp ?? null) === null)
    if (lower.length === 0) continue
    const removed = new Set(lower.map(([k]) => k))
    const fits = (gone: Set<string>): boolean => {
      const trial = without(n, gone)
      return filterNode(pod, trial, { nodes: nodes.map(x => (x === n ? trial : x)) }).length === 0
    }
    if (!fits(removed)) continue
    // Reprieve: give back the most important pods first while the preemptor still fits.
    for (const [k] of [...lower].sort((a, b) => priorityOf(b[1]) - priorityOf(a[1]))) {
      removed.delete(k)
      if (!fits(removed)) removed.add(k)
    }
    const victims = lower.filter(([k]) => removed.has(k)).map(([, p]) => p)
    const score = [Math.max(...victims.map(priorityOf)), victims.length, victims.reduce((s, p) => s + priorityOf(p), 0)]
    if (best === undefined || lexLess(score, best.score)) best = { node: n.name, victims, score }
  }
  return best === undefined ? undefined : { node: best.node, victims: best.victims }
}
