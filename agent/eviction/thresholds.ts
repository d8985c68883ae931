// Eviction thresholds against observations: which are met, for how long, and the node conditions they imply (the kubelet's eviction helpers).

import type { EvictionSignal, ThresholdValue } from '../config/types.js'

/** One configured threshold: hard ones act at once, soft ones after their grace period. */
export interface Threshold {
  signal: EvictionSignal
  value: ThresholdValue
  /** 0 for a hard threshold. */
  gracePeriodMs: number
  /** --eviction-minimum-reclaim for the signal (absent: nothing beyond the threshold). */
  minReclaim?: ThresholdValue
}

/** What a signal measures now: the amount available and the capacity percentages are taken of. */
export interface Observation { available: number; capacity: number }
export type Observations = Partial<Record<EvictionSignal, Observation>>

export type PressureCondition = 'MemoryPressure' | 'DiskPressure' | 'PIDPressure'

export const SIGNAL_CONDITION: Record<EvictionSignal, PressureCondition> = {
  'memory.available': 'MemoryPressure',
  'allocatableMemory.available': 'MemoryPressure',
  'nodefs.available': 'DiskPressure',
  'nodefs.inodesFree': 'DiskPressure',
  'imagefs.available': 'DiskPressure',
  'imagefs.inodesFree': 'DiskPressure',
  'pid.available': 'PIDPressure'
}

/** The resource a signal's evictions reclaim, as the eviction message names it. */
export const SIGNAL_RESOURCE: Record<EvictionSignal, string> = {
  'memory.available': 'memory',
  'allocatableMemory.available': 'memory',
  'nodefs.available': 'ephemeral-storage',
  'nodefs.inodesFree': 'inodes',
  'imagefs.available': 'ephemeral-storage',
  'imagefs.inodesFree': 'inodes',
  'pid.available': 'pids'
}

export function isHard (t: Threshold): boolean { return t.gracePeriodMs === 0 }

/** GetThresholdQuantity: an absolute value, or a percent of capacity truncated to whole units. */
export function quantityOf (value: ThresholdValue, capacity: number): number {
  return 'quantity' in value ? value.quantity : Math.floor(capacity * value.percent / 100)
}

/**
 * thresholdsMet: a threshold is met while the available amount is below it; with `enforceMinReclaim`, below it
 * plus its minimum reclaim (a pressure once seen lasts until that much more is free). Unobserved signals never meet.
 */
export function thresholdsMet (thresholds: readonly Threshold[], obs: Observations, enforceMinReclaim: boolean): Threshold[] {
  return thresholds.filter(t => {
    const o = obs[t.signal]
    if (o === undefined) return false
    let quantity = quantityOf(t.value, o.capacity)
    if (enforceMinReclaim && t.minReclaim !== undefined) quantity += quantityOf(t.minReclaim, o.capacity)
    return quantity > o.available
  })
}

function same (a: Threshold, b: Threshold): boolean {
  return a.signal === b.signal && a.gracePeriodMs === b.gracePeriodMs
}

export function mergeThresholds (a: readonly Threshold[], b: readonly Threshold[]): Threshold[] {
  return [...a, ...b.filter(x => !a.some(y => same(x, y)))]
}

/** When each threshold now met was first seen met (kept from the previous round while it stays met). */
export function firstObservedAt (met: readonly Threshold[], previous: ReadonlyMap<Threshold, number>, now: number): Map<Threshold, number> {
  const out = new Map<Threshold, number>()
  for (const t of met) {
    const seen = [...previous].find(([p]) => same(p, t))?.[1]
    out.set(t, seen ?? now)
  }
  return out
}

/** The thresholds whose grace period has passed since they were first seen. */
export function metGracePeriod (observedAt: ReadonlyMap<Threshold, number>, now: number): Threshold[] {
  return [...observedAt].filter(([t, at]) => now - at >= t.gracePeriodMs).map(([t]) => t)
}

export function conditionsOf (met: readonly Threshold[]): PressureCondition[] {
  return [...new Set(met.map(t => SIGNAL_CONDITION[t.signal]))]
}

/** nodeConditionsLastObservedAt: every condition seen now is stamped `now`; the others keep their last time. */
export function conditionsLastObservedAt (conditions: readonly PressureCondition[], previous: ReadonlyMap<PressureCondition, number>, now: number): Map<PressureCondition, number> {
  const out = new Map(previous)
  for (const c of conditions) out.set(c, now)
  return out
}

/** nodeConditionsObservedSince: a condition holds until the transition period has passed since it was last seen. */
export function conditionsObservedSince (lastObserved: ReadonlyMap<PressureCondition, number>, transitionMs: number, now: number): PressureCondition[] {
  return [...lastObserved].filter(([, at]) => now - at < transitionMs).map(([c]) => c)
}

/** Memory signals are reclaimed first, then the others in their configured order (byEvictionPriority). */
export function byEvictionPriority (thresholds: readonly Threshold[]): Threshold[] {
  const rank = (t: Threshold): number => SIGNAL_RESOURCE[t.signal] === 'memory' ? 0 : 1
  return [...thresholds].sort((a, b) => rank(a) - rank(b))
}

/** The configured thresholds: hard ones, then soft ones with their grace periods, each with its minimum reclaim. */
export function configuredThresholds (c: {
  evictionHard: ReadonlyArray<{ signal: EvictionSignal, value: ThresholdValue }>
  evictionSoft: ReadonlyArray<{ signal: EvictionSignal, value: ThresholdValue }>
  evictionSoftGracePeriod: Partial<Record<EvictionSignal, number>>
  evictionMinimumReclaim: Partial<Record<EvictionSignal, ThresholdValue>>
}): Threshold[] {
  const withReclaim = (t: Threshold): Threshold => {
    const r = c.evictionMinimumReclaim[t.signal]
    return r === undefined ? t : { ...t, minReclaim: r }
  }
  return [
    ...c.evictionHard.map(t => withReclaim({ signal: t.signal, value: t.value, gracePeriodMs: 0 })),
    // A soft threshold without a grace period is refused by validation; 1 ms keeps it distinct from a hard one here.
    ...c.evictionSoft.map(t => withReclaim({ signal: t.signal, value: t.value, gracePeriodMs: Math.max(1, c.evictionSoftGracePeriod[t.signal] ?? 0) }))
  ]
}
