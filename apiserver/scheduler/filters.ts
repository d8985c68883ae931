// The filter plugins: why a node cannot take a pod, in the words of kube-scheduler's failure reasons.

import type { Obj } from '../controllers/client/types.js'
import { selectorMatches } from '../controllers/labels.js'
import { hostPorts, portConflicts, type NodeInfo } from './node-info.js'
import { nodeMatchesPod, tolerates } from './node-affinity.js'
import { podRequests, type Resources } from './resources.js'

export const UNSCHEDULABLE_TAINT = 'node.kubernetes.io/unschedulable'

/** What filters share in one scheduling cycle: every node, for the affinity and spread plugins, and what is computed once per pod. */
export interface CycleState {
  nodes: NodeInfo[]
  /** The pod's requests (computed once per cycle). */
  requests?: Resources
  /** Existing pods with required anti-affinity terms, and their nodes (usually none: computed once per cycle). */
  antiAffinity?: Array<{ pod: Obj, node: NodeInfo }>
}

function requestsOf (pod: Obj, state: CycleState): Resources {
  return (state.requests ??= podRequests(pod))
}

function antiAffinityPods (state: CycleState): Array<{ pod: Obj, node: NodeInfo }> {
  if (state.antiAffinity !== undefined) return state.antiAffinity
  const out: Array<{ pod: Obj, node: NodeInfo }> = []
  for (const node of state.nodes) {
    for (const pod of node.pods.values()) {
      if (((pod.spec?.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? []) as Obj[]).length > 0) out.push({ pod, node })
    }
  }
  return (state.antiAffinity = out)
}

export type Filter = (pod: Obj, node: NodeInfo, state: CycleState) => string[]

const unschedulable: Filter = (pod, n) => {
  if (n.node?.spec?.unschedulable !== true) return []
  const ok = tolerates((pod.spec?.tolerations ?? []) as Obj[], { key: UNSCHEDULABLE_TAINT, effect: 'NoSchedule' })
  return ok ? [] : ['node(s) were unschedulable']
}

const nodeAffinity: Filter = (pod, n) => (nodeMatchesPod(pod, n.node ?? {}) ? [] : ["node(s) didn't match Pod's node affinity/selector"])

const taintToleration: Filter = (pod, n) => {
  const tolerations = (pod.spec?.tolerations ?? []) as Obj[]
  for (const taint of (n.node?.spec?.taints ?? []) as Obj[]) {
    if (taint.effect !== 'NoSchedule' && taint.effect !== 'NoExecute') continue
    if (!tolerates(tolerations, taint)) return [`node(s) had untolerated taint {${String(taint.key)}: ${String(taint.value ?? '')}}`]
  }
  return []
}

const resourcesFit: Filter = (pod, n, state) => {
  const want = requestsOf(pod, state)
  const free = n.allocatable
  const used = n.requested
  const out: string[] = []
  if (n.pods.size + 1 > free.pods) out.push('Too many pods')
  if (want.milliCpu > 0 && used.milliCpu + want.milliCpu > free.milliCpu) out.push('Insufficient cpu')
  if (want.memory > 0 && used.memory + want.memory > free.memory) out.push('Insufficient memory')
  if (want.ephemeralStorage > 0 && used.ephemeralStorage + want.ephemeralStorage > free.ephemeralStorage) out.push('Insufficient ephemeral-storage')
  for (const [name, v] of Object.entries(want.scalar)) {
    if (v > 0 && (used.scalar[name] ?? 0) + v > (free.scalar[name] ?? 0)) out.push(`Insufficient ${name}`)
  }
  return out
}

const nodePorts: Filter = (pod, n) =>
  hostPorts(pod).some(p => portConflicts(n.usedPorts, p)) ? ["node(s) didn't have free ports for the requested pod ports"] : []

/** Pods in the namespaces an affinity term names (its own namespace by default). */
function termSelects (term: Obj, owner: Obj, candidate: Obj): boolean {
  const namespaces = (term.namespaces ?? []) as string[]
  const ns = String(candidate.metadata?.namespace)
  const inScope = term.namespaceSelector !== undefined && term.namespaceSelector !== null && Object.keys(term.namespaceSelector).length === 0
    ? true
    : namespaces.length > 0 ? namespaces.includes(ns) : ns === String(owner.metadata?.namespace)
  return inScope && selectorMatches(term.labelSelector ?? undefined, candidate.metadata?.labels)
}

function domainOf (n: NodeInfo, key: string): string | undefined {
  return (n.node?.metadata?.labels as Record<string, string> | undefined)?.[key]
}

const interPodAffinity: Filter = (pod, n, state) => {
  if (pod.spec?.affinity === undefined && antiAffinityPods(state).length === 0) return []
  const affinity = (pod.spec?.affinity?.podAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? []) as Obj[]
  const anti = (pod.spec?.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? []) as Obj[]
  const sameDomain = (term: Obj, other: NodeInfo): boolean => {
    const d = domainOf(n, term.topologyKey)
    return d !== undefined && domainOf(other, term.topologyKey) === d
  }
  for (const term of affinity) {
    const anyMatch = state.nodes.some(o => [...o.pods.values()].some(p => termSelects(term, pod, p)))
    // The first pod of a group may land anywhere its own term would select it (Kubernetes' special case).
    if (!anyMatch && termSelects(term, pod, pod)) continue
    if (!state.nodes.some(o => sameDomain(term, o) && [...o.pods.values()].some(p => termSelects(term, pod, p)))) {
      return ["node(s) didn't match pod affinity rules"]
    }
  }
  for (const term of anti) {
    if (state.nodes.some(o => sameDomain(term, o) && [...o.pods.values()].some(p => termSelects(term, pod, p)))) {
      return ["node(s) didn't match pod anti-affinity rules"]
    }
  }
  // Existing pods' anti-affinity against the incoming pod.
  for (const { pod: p, node: o } of antiAffinityPods(state)) {
    for (const term of (p.spec?.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? []) as Obj[]) {
      if (sameDomain(term, o) && termSelects(term, p, pod)) return ["node(s) didn't satisfy existing pods anti-affinity rules"]
    }
  }
  return []
}

const topologySpread: Filter = (pod, n, state) => {
  for (const c of (pod.spec?.topologySpreadConstraints ?? []) as Obj[]) {
    if ((c.whenUnsatisfiable ?? 'DoNotSchedule') !== 'DoNotSchedule') continue
    const key = String(c.topologyKey)
    const mine = domainOf(n, key)
    if (mine === undefined) return ["node(s) didn't match pod topology spread constraints (missing required label)"]
    const counts = new Map<string, number>()
    for (const o of state.nodes) {
      const d = domainOf(o, key)
      if (d === undefined || o.node === undefined || !nodeMatchesPod(pod, o.node)) continue
      let count = counts.get(d) ?? 0
      for (const p of o.pods.values()) {
        if (String(p.metadata?.namespace) === String(pod.metadata?.namespace) && selectorMatches(c.labelSelector ?? undefined, p.metadata?.labels)) count++
      }
      counts.set(d, count)
    }
    const min = counts.size === 0 ? 0 : Math.min(...counts.values())
    const selfMatch = selectorMatches(c.labelSelector ?? undefined, pod.metadata?.labels) ? 1 : 0
    if ((counts.get(mine) ?? 0) + selfMatch - min > Number(c.maxSkew ?? 1)) return ["node(s) didn't match pod topology spread constraints"]
  }
  return []
}

/** In kube-scheduler's order; a node fails at its first failing plugin (resources report every shortfall). */
export const FILTERS: Filter[] = [unschedulable, nodeAffinity, nodePorts, resourcesFit, taintToleration, interPodAffinity, topologySpread]

export function filterNode (pod: Obj, n: NodeInfo, state: CycleState): string[] {
  for (const f of FILTERS) {
    const reasons = f(pod, n, state)
    if (reasons.length > 0) return reasons
  }
  return []
}

/** `0/3 nodes are available: 1 Insufficient cpu, 2 node(s) were unschedulable.` (reasons sorted as kube-scheduler does). */
export function fitErrorMessage (total: number, reasons: Map<string, number>): string {
  const parts = [...reasons].map(([r, n]) => `${n} ${r}`).sort()
  return `0/${total} nodes are available${parts.length > 0 ? ': ' + parts.join(', ') : ''}.`
}
