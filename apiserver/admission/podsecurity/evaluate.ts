// Evaluating a pod against a level at a version, and the wording Kubernetes gives the outcome.

import { baselineChecks } from './checks-baseline.js'
import { restrictedChecks } from './checks-restricted.js'
import { effectiveMinor, levelVersionString, type LevelVersion } from './levels.js'
import type { PodView, Violation } from './pod-view.js'

/** The violations of `pod` against `lv`, in the order the policy library reports them; empty = allowed. */
export function evaluatePod (lv: LevelVersion, pod: PodView): Violation[] {
  if (lv.level === 'privileged') return []
  const minor = effectiveMinor(lv.version)
  const restricted = lv.level === 'restricted' ? restrictedChecks.filter(c => minor >= c.minMinor) : []
  const overridden = new Set(restricted.flatMap(c => minor >= (c.overridesFromMinor ?? 0) ? c.overrides ?? [] : []))
  const checks = [...baselineChecks.filter(c => minor >= c.minMinor && !overridden.has(c.id)), ...restricted]
  const out: Violation[] = []
  for (const c of checks) {
    const v = c.check(pod, minor)
    if (v !== undefined) out.push(v)
  }
  return out
}

/** `privileged (container "c" must not ...), allowPrivilegeEscalation != false (...)`. */
export function formatViolations (vs: Violation[]): string {
  return vs.map(v => v.detail === '' ? v.reason : `${v.reason} (${v.detail})`).join(', ')
}

/** The reason an enforce refusal gives: `violates PodSecurity "restricted:latest": ...`. */
export function violatesMessage (lv: LevelVersion, vs: Violation[]): string {
  return `violates PodSecurity ${JSON.stringify(levelVersionString(lv))}: ${formatViolations(vs)}`
}

/** A warning or audit annotation: `would violate PodSecurity "restricted:latest": ...`. */
export function wouldViolateMessage (lv: LevelVersion, vs: Violation[]): string {
  return `would violate PodSecurity ${JSON.stringify(levelVersionString(lv))}: ${formatViolations(vs)}`
}
