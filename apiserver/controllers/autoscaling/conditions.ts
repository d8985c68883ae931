// HPA status conditions: set one by type, keeping lastTransitionTime while the status stays the same.

export interface Condition { type: string; status: 'True' | 'False' | 'Unknown'; reason: string; message: string; lastTransitionTime?: string }

/** Replaces (or adds) the condition of `c.type`; the transition time moves only when the status changes. */
export function setCondition (conditions: Condition[], c: Condition, nowMs: number): void {
  const at = conditions.findIndex(x => x.type === c.type)
  const prev = at < 0 ? undefined : conditions[at]
  const lastTransitionTime = prev !== undefined && prev.status === c.status && prev.lastTransitionTime !== undefined
    ? prev.lastTransitionTime
    : new Date(nowMs).toISOString().replace(/\.\d+Z$/, 'Z')
  const next = { type: c.type, status: c.status, lastTransitionTime, reason: c.reason, message: c.message }
  if (at < 0) conditions.push(next)
  else conditions[at] = next
}
