// Computed Table cells of the workload kinds (Deployment, ReplicaSet, DaemonSet, StatefulSet, Job, CronJob).

import { formatLabels, humanDuration, selectorString, since, timeOf } from './print-format.js'

type Obj = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any
type Printer = (object: Obj, now: number) => unknown

/** The pod template's containers (`.spec.template`, or a CronJob's `.spec.jobTemplate.spec.template`). */
function containersOf (o: Obj): Obj[] {
  const template = o.spec?.jobTemplate !== undefined ? o.spec.jobTemplate.spec?.template : o.spec?.template
  return template?.spec?.containers ?? []
}

/** The workload's label selector (`.spec.selector`, or a CronJob's job template selector). */
function selectorOf (o: Obj): unknown {
  return o.spec?.jobTemplate !== undefined ? o.spec.jobTemplate.spec?.selector : o.spec?.selector
}

/** printJob's COMPLETIONS: `1/3`, or `0/1 of 2` for a parallel job without completions. */
function jobCompletions (job: Obj): string {
  const succeeded = job.status?.succeeded ?? 0
  const completions = job.spec?.completions
  if (completions !== undefined && completions !== null) return `${succeeded}/${completions}`
  const parallelism = job.spec?.parallelism ?? 0
  return parallelism > 1 ? `${succeeded}/1 of ${parallelism}` : `${succeeded}/1`
}

/** printJob's DURATION: start to completion, or start to now while running; empty before it starts. */
function jobDuration (job: Obj, now: number): string {
  const start = timeOf(job.status?.startTime)
  if (start === undefined) return ''
  const end = timeOf(job.status?.completionTime)
  return humanDuration((end ?? now) - start)
}

export const WORKLOAD_PRINTERS: Readonly<Record<string, Printer>> = {
  replicasReady: o => `${o.status?.readyReplicas ?? 0}/${o.spec?.replicas ?? 1}`,
  templateContainers: o => containersOf(o).map(c => c.name ?? '').join(','),
  templateImages: o => containersOf(o).map(c => c.image ?? '').join(','),
  /** metav1.FormatLabelSelector: `<none>` for a selector that selects everything. */
  templateSelector: o => selectorString(selectorOf(o)) || '<none>',
  daemonSetNodeSelector: ds => formatLabels(ds.spec?.template?.spec?.nodeSelector),
  jobCompletions,
  jobDuration,
  cronJobTimeZone: cj => (typeof cj.spec?.timeZone === 'string' ? cj.spec.timeZone : '<none>'),
  cronJobSuspend: cj => (typeof cj.spec?.suspend === 'boolean' ? (cj.spec.suspend ? 'True' : 'False') : '<unset>'),
  cronJobActive: cj => (cj.status?.active ?? []).length,
  cronJobLastSchedule: (cj, now) => (cj.status?.lastScheduleTime ? since(cj.status.lastScheduleTime, now) : '<none>'),
  /** autoscaling/v1 Scale (printScale): DESIRED and AVAILABLE. */
  scaleDesired: s => s.spec?.replicas ?? 0,
  scaleAvailable: s => s.status?.replicas ?? 0
}
