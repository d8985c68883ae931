// Job arithmetic: completion indexes as interval strings, pod failure policy matching, and the pod back-off.

import type { Obj } from '../client/types.js'

export const JOB_TRACKING_FINALIZER = 'batch.orch.io/job-tracking'
export const COMPLETION_INDEX = 'batch.orch.io/job-completion-index'
/** Failures of an index so far, on the pod that retries it (backoffLimitPerIndex). */
export const INDEX_FAILURE_COUNT = 'batch.orch.io/job-index-failure-count'

/** `0-2,5` -> {0,1,2,5}. */
export function parseIndexes (s: string | undefined): Set<number> {
  const out = new Set<number>()
  for (const part of (s ?? '').split(',')) {
    if (part === '') continue
    const [a, b] = part.split('-').map(Number)
    for (let i = a; i <= (b ?? a); i++) out.add(i)
  }
  return out
}

/** {0,1,2,5} -> `0-2,5` (the form of status.completedIndexes). */
export function formatIndexes (set: Set<number>): string {
  const sorted = [...set].sort((a, b) => a - b)
  const parts: string[] = []
  for (let i = 0; i < sorted.length;) {
    let j = i
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j] + 1) j++
    parts.push(i === j ? String(sorted[i]) : `${sorted[i]}-${sorted[j]}`)
    i = j + 1
  }
  return parts.join(',')
}

export function indexOf (pod: Obj): number | undefined {
  const v = pod.metadata?.annotations?.[COMPLETION_INDEX] ?? pod.metadata?.labels?.[COMPLETION_INDEX]
  return v === undefined ? undefined : Number(v)
}

export type FailureAction = 'FailJob' | 'Ignore' | 'Count' | 'FailIndex'

/** The action of the first podFailurePolicy rule a failed pod matches; undefined when none does (Count). */
export function failurePolicyAction (job: Obj, pod: Obj): { action: FailureAction, message: string } | undefined {
  const rules = (job.spec?.podFailurePolicy?.rules ?? []) as Obj[]
  const statuses = (pod.status?.containerStatuses ?? []) as Obj[]
  for (let i = 0; i < rules.length; i++) {
    const r = rules[i]
    if (r.onExitCodes !== undefined && r.onExitCodes !== null) {
      const { containerName, operator, values } = r.onExitCodes as { containerName?: string, operator: string, values: number[] }
      const hit = statuses.find(cs => {
        if (containerName !== undefined && containerName !== null && cs.name !== containerName) return false
        const code = cs.state?.terminated?.exitCode
        if (code === undefined) return false
        return operator === 'In' ? values.includes(code) : code !== 0 && !values.includes(code)
      })
      if (hit !== undefined) {
        return { action: r.action, message: `Container ${String(hit.name)} for pod ${String(pod.metadata.namespace)}/${String(pod.metadata.name)} failed with exit code ${String(hit.state.terminated.exitCode)} matching ${String(r.action)} rule at index ${i}` }
      }
    }
    for (const pattern of (r.onPodConditions ?? []) as Obj[]) {
      const c = ((pod.status?.conditions ?? []) as Obj[]).find(x => x.type === pattern.type && x.status === (pattern.status ?? 'True'))
      if (c !== undefined) {
        return { action: r.action, message: `Pod ${String(pod.metadata.namespace)}/${String(pod.metadata.name)} has condition ${String(c.type)} matching ${String(r.action)} rule at index ${i}` }
      }
    }
  }
  return undefined
}

/** Delay before the next pod after `failures` consecutive failures: 10 s doubling, at most 6 minutes. */
export function podBackoffMs (failures: number): number {
  return failures <= 0 ? 0 : Math.min(360_000, 10_000 * 2 ** (failures - 1))
}
