// TaintNodesByCondition's pressure part: a node whose MemoryPressure, DiskPressure or PIDPressure condition is True
// carries the matching NoSchedule taint, and loses it when the condition clears (the node may not set taints itself).

import type { Obj } from '../client/types.js'

export const CONDITION_TAINTS: ReadonlyArray<[string, string]> = [
  ['MemoryPressure', 'node.kubernetes.io/memory-pressure'],
  ['DiskPressure', 'node.kubernetes.io/disk-pressure'],
  ['PIDPressure', 'node.kubernetes.io/pid-pressure']
]

/** `taints` with the pressure NoSchedule taints added or removed to match `conditions`. */
export function withConditionTaints (taints: readonly Obj[], conditions: readonly Obj[]): Obj[] {
  let out = [...taints]
  for (const [type, key] of CONDITION_TAINTS) {
    const on = conditions.some(c => c.type === type && c.status === 'True')
    const has = out.some(t => t.key === key && t.effect === 'NoSchedule')
    if (on && !has) out.push({ key, effect: 'NoSchedule' })
    if (!on && has) out = out.filter(t => !(t.key === key && t.effect === 'NoSchedule'))
  }
  return out
}
