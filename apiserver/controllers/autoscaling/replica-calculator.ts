// The replica count one resource metric asks for, as Kubernetes' replica calculator computes it (pure; times in ms).
//
// Pods are grouped first: deleted, failed and pending pods are ignored; pods without a sample are missing; for CPU,
// pods still initializing (not ready, or with a sample from before they turned ready) are unready. Missing pods
// count as using the target on a scale-down and nothing on a scale-up, unready ones nothing on a scale-up, so
// neither can push the count further than the measured pods do; a ratio within the tolerance keeps the count.

import type { Obj } from '../client/types.js'
import { milli, quantity } from '../../scheduler/resources.js'

export interface PodSample { value: number; timestampMs: number; windowMs: number }

export interface CalculatorSettings {
  tolerance: number
  cpuInitializationPeriodMs: number
  initialReadinessDelayMs: number
}

export interface ResourceTarget {
  resource: string
  /** Percent of the pods' requests; or else an average value in base units (millicores for cpu). */
  averageUtilization?: number
  averageValue?: number
  /** ContainerResource metrics: one container's usage and requests. */
  container?: string
}

export interface Recommendation {
  replicas: number
  /** Average usage of the measured pods (millicores for cpu, bytes otherwise). */
  averageValue: number
  /** Set for a utilization target. */
  averageUtilization?: number
}

export class MetricError extends Error { override name = 'MetricError' }

/** The value of a quantity in the unit the calculator works in: millicores for cpu, base units otherwise. */
export function amountOf (resource: string, v: unknown): number {
  return resource === 'cpu' ? milli(v) : quantity(v)
}

interface Groups { ready: number; unready: Set<string>; missing: Set<string>; ignored: Set<string> }

function readyCondition (pod: Obj): Obj | undefined {
  return (pod.status?.conditions ?? []).find((c: Obj) => c.type === 'Ready')
}

function groupPods (pods: Obj[], samples: Map<string, PodSample>, resource: string, s: CalculatorSettings, now: number): Groups {
  const g: Groups = { ready: 0, unready: new Set(), missing: new Set(), ignored: new Set() }
  for (const pod of pods) {
    const name = String(pod.metadata?.name)
    if (pod.metadata?.deletionTimestamp !== undefined || pod.status?.phase === 'Failed' || pod.status?.phase === 'Pending') { g.ignored.add(name); continue }
    const sample = samples.get(name)
    if (sample === undefined) { g.missing.add(name); continue }
    if (resource === 'cpu') {
      const cond = readyCondition(pod)
      const start = Date.parse(String(pod.status?.startTime ?? ''))
      let unready: boolean
      if (cond === undefined || Number.isNaN(start)) unready = true
      else {
        const transition = Date.parse(String(cond.lastTransitionTime ?? ''))
        if (start + s.cpuInitializationPeriodMs > now) {
          unready = cond.status === 'False' || sample.timestampMs < transition + sample.windowMs
        } else {
          unready = cond.status === 'False' && start + s.initialReadinessDelayMs > transition
        }
      }
      if (unready) { g.unready.add(name); continue }
    }
    g.ready++
  }
  return g
}

/** Per pod, the sum of its containers' requests of `resource` (or the one container's); a container without one is an error. */
function podRequests (pods: Obj[], resource: string, container: string | undefined): Map<string, number> {
  const out = new Map<string, number>()
  for (const pod of pods) {
    let sum = 0
    for (const c of pod.spec?.containers ?? []) {
      if (container !== undefined && c.name !== container) continue
      const req = c.resources?.requests?.[resource]
      if (req === undefined) throw new MetricError(`missing request for ${resource} in container ${String(c.name)} of Pod ${String(pod.metadata?.name)}`)
      sum += amountOf(resource, req)
    }
    out.set(String(pod.metadata?.name), sum)
  }
  return out
}

function utilization (values: Map<string, number>, requests: Map<string, number>): { percent: number; average: number } {
  let used = 0
  let requested = 0
  for (const [name, v] of values) {
    const r = requests.get(name)
    if (r === undefined) continue
    used += v
    requested += r
  }
  if (requested === 0) throw new MetricError('no metrics returned matched known pods')
  return { percent: Math.trunc(used * 100 / requested), average: used / values.size }
}

/**
 * The replicas `target` asks for, given the pods the scale's selector matches and their usage samples
 * (base units as amountOf gives). Throws MetricError when nothing can be computed.
 */
export function resourceReplicas (currentReplicas: number, target: ResourceTarget, pods: Obj[], samples: Map<string, PodSample>,
  s: CalculatorSettings, now: number): Recommendation {
  if (pods.length === 0) throw new MetricError('no pods returned by selector while calculating replica count')
  const groups = groupPods(pods, samples, target.resource, s, now)
  const values = new Map<string, number>()
  for (const [name, sample] of samples) {
    if (groups.ignored.has(name) || groups.unready.has(name)) continue
    if (pods.some(p => p.metadata?.name === name)) values.set(name, sample.value)
  }
  if (values.size === 0) throw new MetricError(`did not receive metrics for targeted pods (pods might be unready)`)

  const byUtilization = target.averageUtilization !== undefined
  const requests = byUtilization ? podRequests(pods, target.resource, target.container) : new Map<string, number>()
  const ratioOf = (v: Map<string, number>): { ratio: number; percent?: number; average: number } => {
    if (byUtilization) {
      const u = utilization(v, requests)
      return { ratio: u.percent / target.averageUtilization!, percent: u.percent, average: u.average }
    }
    const average = [...v.values()].reduce((a, b) => a + b, 0) / v.size
    return { ratio: average / target.averageValue!, average }
  }
  const first = ratioOf(values)
  const status = { averageValue: first.average, ...(first.percent !== undefined ? { averageUtilization: first.percent } : {}) }
  const scaleUpWithUnready = groups.unready.size > 0 && first.ratio > 1
  if (!scaleUpWithUnready && groups.missing.size === 0) {
    if (Math.abs(1 - first.ratio) <= s.tolerance) return { replicas: currentReplicas, ...status }
    return { replicas: Math.ceil(first.ratio * groups.ready), ...status }
  }
  // Assume the worst for the pods without usable samples, so they can only dampen the change.
  for (const name of groups.missing) {
    if (first.ratio < 1) {
      values.set(name, byUtilization ? Math.max(100, target.averageUtilization!) * requests.get(name)! / 100 : target.averageValue!)
    } else if (first.ratio > 1) values.set(name, 0)
  }
  if (scaleUpWithUnready) for (const name of groups.unready) values.set(name, 0)
  const next = ratioOf(values)
  if (Math.abs(1 - next.ratio) <= s.tolerance || (first.ratio < 1 && next.ratio > 1) || (first.ratio > 1 && next.ratio < 1)) {
    return { replicas: currentReplicas, ...status }
  }
  const replicas = Math.ceil(next.ratio * values.size)
  if ((next.ratio < 1 && replicas > currentReplicas) || (next.ratio > 1 && replicas < currentReplicas)) return { replicas: currentReplicas, ...status }
  return { replicas, ...status }
}
