// The warnings a namespace update gets when its new enforce policy would refuse pods already in it.

import { LABEL_PREFIXES, levelVersionString, MODES, sameLevelVersion, type LevelVersion, type Policy } from './levels.js'
import type { Violation } from './pod-view.js'

export interface PodResult { name: string, violations: Violation[] }

/**
 * As Kubernetes: one line naming the namespace and policy, then per distinct set of violated controls
 * `pod-a: privileged, runAsNonRoot != true` or `pod-a (and 2 other pods): ...`; nothing when every pod passes.
 */
export function existingPodWarnings (namespace: string, enforce: LevelVersion, results: PodResult[]): string[] {
  const groups = new Map<string, string[]>()
  for (const r of results) {
    if (r.violations.length === 0) continue
    const key = r.violations.map(v => v.reason).join(', ')
    const names = groups.get(key) ?? []
    names.push(r.name)
    groups.set(key, names)
  }
  if (groups.size === 0) return []
  const out = [`existing pods in namespace ${JSON.stringify(namespace)} violate the new PodSecurity enforce level ${JSON.stringify(levelVersionString(enforce))}`]
  for (const [reasons, names] of groups) {
    const sorted = [...names].sort()
    const others = sorted.length - 1
    const who = others === 0 ? sorted[0] : `${sorted[0]} (and ${others} other pod${others === 1 ? '' : 's'})`
    out.push(`${who}: ${reasons}`)
  }
  return out
}

/**
 * A namespace exempted by configuration ignores its labels; as Kubernetes, say so when they ask for more than the
 * defaults: `namespace "x" is exempt from Pod Security, and the policy (enforce=baseline:latest) will be ignored`.
 */
export function exemptNamespaceWarning (namespace: string, policy: Policy, labels: Record<string, string>, defaults: Policy): string | undefined {
  if (MODES.every(m => policy[m].level === 'privileged')) return undefined
  if (MODES.every(m => sameLevelVersion(policy[m], defaults[m]))) return undefined
  const labelled = (mode: string): boolean => LABEL_PREFIXES.some(p => labels[p + mode] !== undefined || labels[`${p}${mode}-version`] !== undefined)
  const parts = MODES.filter(m => policy[m].level !== 'privileged' && labelled(m)).map(m => `${m}=${levelVersionString(policy[m])}`)
  return `namespace ${JSON.stringify(namespace)} is exempt from Pod Security, and the policy (${parts.join(', ')}) will be ignored`
}
