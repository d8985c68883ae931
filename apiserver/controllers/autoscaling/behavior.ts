// An HPA's scaling behaviour: stabilization windows over past recommendations, then the scale-up/down policies' rate limits and min/max.
//
// As Kubernetes' normalizeDesiredReplicasWithBehaviors: the stabilized count is the current one moved no further than
// the lowest recommendation of the scale-up window and the highest of the scale-down window; the policies then cap
// the change against the replicas the target had at the start of each policy's period.

import type { Obj } from '../client/types.js'

export interface Policy { type: 'Pods' | 'Percent'; value: number; periodSeconds: number }
export interface Rules { stabilizationWindowSeconds: number; selectPolicy: 'Max' | 'Min' | 'Disabled'; policies: Policy[] }
export interface Behavior { scaleUp: Rules; scaleDown: Rules }

export interface ScaleEvent { change: number; atMs: number }
/** What the controller remembers per HPA between syncs. */
export interface History {
  recommendations: Array<{ replicas: number; atMs: number }>
  up: ScaleEvent[]
  down: ScaleEvent[]
}

export interface Decision {
  replicas: number
  /** The AbleToScale reason and message of the stabilization step. */
  stabilized: { reason: string; message: string }
  /** The ScalingLimited status, reason and message of the rate and range step. */
  limited: { status: 'True' | 'False'; reason: string; message: string }
}

function rules (r: Obj | undefined, defaults: Rules): Rules {
  return {
    stabilizationWindowSeconds: typeof r?.stabilizationWindowSeconds === 'number' ? r.stabilizationWindowSeconds : defaults.stabilizationWindowSeconds,
    selectPolicy: r?.selectPolicy ?? defaults.selectPolicy,
    policies: Array.isArray(r?.policies) && r.policies.length > 0 ? r.policies : defaults.policies
  }
}

/** spec.behavior with Kubernetes' defaults; the scale-down window defaults to the controller's setting. */
export function behaviorOf (spec: Obj | undefined, downscaleStabilizationMs: number): Behavior {
  return {
    scaleUp: rules(spec?.scaleUp, { stabilizationWindowSeconds: 0, selectPolicy: 'Max', policies: [{ type: 'Pods', value: 4, periodSeconds: 15 }, { type: 'Percent', value: 100, periodSeconds: 15 }] }),
    scaleDown: rules(spec?.scaleDown, { stabilizationWindowSeconds: Math.round(downscaleStabilizationMs / 1000), selectPolicy: 'Max', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] })
  }
}

function changeWithin (events: ScaleEvent[], periodSeconds: number, now: number): number {
  return events.filter(e => e.atMs > now - periodSeconds * 1000).reduce((n, e) => n + e.change, 0)
}

function scaleUpLimit (current: number, h: History, r: Rules, now: number): number {
  if (r.selectPolicy === 'Disabled') return current
  let result = r.selectPolicy === 'Min' ? Infinity : -Infinity
  for (const p of r.policies) {
    const start = current - changeWithin(h.up, p.periodSeconds, now) + changeWithin(h.down, p.periodSeconds, now)
    const proposed = p.type === 'Pods' ? start + p.value : Math.ceil(start * (1 + p.value / 100))
    result = r.selectPolicy === 'Min' ? Math.min(result, proposed) : Math.max(result, proposed)
  }
  return result
}

function scaleDownLimit (current: number, h: History, r: Rules, now: number): number {
  if (r.selectPolicy === 'Disabled') return current
  let result = r.selectPolicy === 'Min' ? -Infinity : Infinity
  for (const p of r.policies) {
    const start = current + changeWithin(h.down, p.periodSeconds, now) - changeWithin(h.up, p.periodSeconds, now)
    const proposed = p.type === 'Pods' ? start - p.value : Math.floor(start * (1 - p.value / 100))
    result = r.selectPolicy === 'Min' ? Math.max(result, proposed) : Math.min(result, proposed)
  }
  return result
}

/** Stabilizes `desired`, records it in `h`, then applies the rate limits and [min, max]. */
export function decide (b: Behavior, h: History, current: number, desired: number, min: number, max: number, now: number): Decision {
  const upCutoff = now - b.scaleUp.stabilizationWindowSeconds * 1000
  const downCutoff = now - b.scaleDown.stabilizationWindowSeconds * 1000
  let up = desired
  let down = desired
  for (const r of h.recommendations) {
    if (r.atMs > upCutoff) up = Math.min(up, r.replicas)
    if (r.atMs > downCutoff) down = Math.max(down, r.replicas)
  }
  const keepAfter = Math.min(upCutoff, downCutoff)
  h.recommendations = [...h.recommendations.filter(r => r.atMs > keepAfter), { replicas: desired, atMs: now }]
  let stabilizedCount = current
  if (stabilizedCount < up) stabilizedCount = up
  if (stabilizedCount > down) stabilizedCount = down
  const stabilized = stabilizedCount === desired
    ? { reason: 'ReadyForNewScale', message: 'recommended size matches current size' }
    : stabilizedCount < desired
      ? { reason: 'ScaleUpStabilized', message: 'recent recommendations were lower than current one, applying the lowest recent recommendation' }
      : { reason: 'ScaleDownStabilized', message: 'recent recommendations were higher than current one, applying the highest recent recommendation' }

  const within = { status: 'False' as const, reason: 'DesiredWithinRange', message: 'the desired count is within the acceptable range' }
  if (stabilizedCount > current) {
    const limit = Math.max(current, scaleUpLimit(current, h, b.scaleUp, now))
    const byRate = max > limit
    const allowed = byRate ? limit : max
    if (stabilizedCount > allowed) {
      return { replicas: allowed, stabilized, limited: byRate
        ? { status: 'True', reason: 'ScaleUpLimit', message: 'the desired replica count is increasing faster than the maximum scale rate' }
        : { status: 'True', reason: 'TooManyReplicas', message: 'the desired replica count is more than the maximum replica count' } }
    }
  } else if (stabilizedCount < current) {
    const limit = Math.min(current, scaleDownLimit(current, h, b.scaleDown, now))
    const byRate = min < limit
    const allowed = byRate ? limit : min
    if (stabilizedCount < allowed) {
      return { replicas: allowed, stabilized, limited: byRate
        ? { status: 'True', reason: 'ScaleDownLimit', message: 'the desired replica count is decreasing faster than the maximum scale rate' }
        : { status: 'True', reason: 'TooFewReplicas', message: 'the desired replica count is less than the minimum replica count' } }
    }
  }
  return { replicas: stabilizedCount, stabilized, limited: within }
}

/** Remembers a rescale for the policies' periods (events older than the longest period are dropped). */
export function recordScale (b: Behavior, h: History, from: number, to: number, now: number): void {
  const longest = Math.max(0, ...b.scaleUp.policies.map(p => p.periodSeconds), ...b.scaleDown.policies.map(p => p.periodSeconds)) * 1000
  h.up = h.up.filter(e => e.atMs > now - longest)
  h.down = h.down.filter(e => e.atMs > now - longest)
  if (to > from) h.up.push({ change: to - from, atMs: now })
  else if (to < from) h.down.push({ change: from - to, atMs: now })
}
