// The CronJob controller: creates a Job at each scheduled time (cron syntax, @-macros, IANA time zones), honouring
// concurrencyPolicy, startingDeadlineSeconds, suspend and the history limits, as Kubernetes' CronJob v2 controller.

import type { CronExpressionParser } from 'cron-parser'
import { QueueController, type ControllerContext, type ReconcileResult } from '../controller.js'
import { RESOURCES, type Obj } from '../client/types.js'
import { keyOf, splitKey, type SharedInformer } from '../informer.js'
import { controllerOf } from '../labels.js'
import { writeStatus } from '../status-patch.js'
import { rfc3339 } from '../../registry/object-meta.js'

export const SCHEDULED_TIMESTAMP = 'batch.orch.io/cronjob-scheduled-timestamp'
/** More missed start times than this are reported instead of being walked one by one. */
const MAX_MISSED = 100

function jobFinished (job: Obj): 'Complete' | 'Failed' | undefined {
  const c = ((job.status?.conditions ?? []) as Obj[]).find(x => (x.type === 'Complete' || x.type === 'Failed') && x.status === 'True')
  return c?.type
}

/** The latest schedule time in (after, now], the count of missed ones, and the next one after now. */
export function scheduleTimes (parser: typeof CronExpressionParser, schedule: string, timeZone: string | undefined, after: number, now: number): { latest?: number, missed: number, next: number } {
  const tz = timeZone ?? 'UTC'
  const it = parser.parse(schedule, { currentDate: new Date(after), tz })
  let latest: number | undefined
  let missed = 0
  for (;;) {
    const t = it.next().getTime()
    if (t > now) return { latest, missed, next: t }
    latest = t
    if (++missed > MAX_MISSED) {
      // Jump: the most recent time before now is what matters.
      const back = parser.parse(schedule, { currentDate: new Date(now + 1), tz })
      latest = back.prev().getTime()
      const fwd = parser.parse(schedule, { currentDate: new Date(now), tz })
      return { latest, missed, next: fwd.next().getTime() }
    }
  }
}

export class CronJobController extends QueueController {
  private readonly cronJobs: SharedInformer
  private readonly jobs: SharedInformer
  /** cron-parser (and luxon under it) is loaded when the first CronJob is synced: most clusters have none. */
  private parser: Promise<typeof CronExpressionParser> | undefined

  constructor (c: ControllerContext) {
    super('cronjob', c)
    this.cronJobs = c.informers.informer(RESOURCES.cronJobs)
    this.jobs = c.informers.informer(RESOURCES.jobs)
  }

  protected watch (): void {
    this.cronJobs.addEventHandler({ add: j => this.queue.add(keyOf(j)), update: (_o, j) => this.queue.add(keyOf(j)) })
    const onJob = (j: Obj): void => {
      const ref = controllerOf(j)
      if (ref?.kind === 'CronJob') this.queue.add(`${String(j.metadata.namespace)}/${String(ref.name)}`)
    }
    this.jobs.addEventHandler({ add: onJob, update: (_o, j) => onJob(j), delete: onJob })
  }

  async reconcile (key: string): Promise<ReconcileResult | void> {
    const cj = this.cronJobs.get(key)
    if (cj === undefined) return
    const [namespace] = splitKey(key)
    const now = this.c.clock.now()
    const owned = this.jobs.list(namespace).filter(j => controllerOf(j)?.uid === cj.metadata.uid)
    const status: Obj = structuredClone(cj.status ?? {})
    this.syncActive(cj, status, owned)
    if (cj.metadata?.deletionTimestamp !== undefined) return
    await this.cleanupHistory(cj, owned)
    if (cj.spec?.suspend === true) { await writeStatus(this.c, RESOURCES.cronJobs, cj, status); return }

    const parser = await (this.parser ??= import('cron-parser').then(m => m.CronExpressionParser))
    let times: ReturnType<typeof scheduleTimes>
    try {
      const since = Date.parse(String(status.lastScheduleTime ?? cj.metadata.creationTimestamp))
      times = scheduleTimes(parser, String(cj.spec.schedule), cj.spec.timeZone ?? undefined, since, now)
    } catch (err) {
      this.c.events.event(cj, 'Warning', 'UnparseableSchedule', `unparseable schedule: "${String(cj.spec?.schedule)}" : ${(err as Error).message}`)
      await writeStatus(this.c, RESOURCES.cronJobs, cj, status)
      return
    }
    const again = { requeueAfterMs: Math.max(1, times.next - now + 100) }
    if (times.missed > MAX_MISSED) {
      this.c.events.event(cj, 'Warning', 'TooManyMissedTimes', `too many missed start times: ${times.missed}. Set or decrease .spec.startingDeadlineSeconds or check clock skew`)
    }
    const scheduled = times.latest
    if (scheduled === undefined) { await writeStatus(this.c, RESOURCES.cronJobs, cj, status); return again }
    const deadline = cj.spec?.startingDeadlineSeconds
    if (deadline !== undefined && deadline !== null && scheduled + deadline * 1000 < now) {
      this.c.events.event(cj, 'Warning', 'MissSchedule', `Missed scheduled time to start a job: ${rfc3339(scheduled)}`)
      await writeStatus(this.c, RESOURCES.cronJobs, cj, status)
      return again
    }
    const active = (status.active ?? []) as Obj[]
    const policy = cj.spec?.concurrencyPolicy ?? 'Allow'
    if (policy === 'Forbid' && active.length > 0) {
      this.c.logger.debug({ cronjob: key }, 'not starting a job: the prior one runs and concurrencyPolicy is Forbid')
      await writeStatus(this.c, RESOURCES.cronJobs, cj, status)
      return again
    }
    if (policy === 'Replace') {
      for (const ref of active) {
        await this.deleteJob(cj, String(ref.name))
        this.c.events.event(cj, 'Normal', 'SuccessfulDelete', `Deleted job ${String(ref.name)}`)
      }
      status.active = []
    }
    const job = await this.createJob(cj, scheduled)
    if (job !== undefined) {
      status.active = [...((status.active ?? []) as Obj[]).filter(r => r.uid !== job.metadata.uid), refOf(job)]
    }
    status.lastScheduleTime = rfc3339(scheduled)
    if ((status.active as Obj[]).length === 0) delete status.active
    await writeStatus(this.c, RESOURCES.cronJobs, cj, status)
    return again
  }

  /** status.active lists exactly the owned jobs still running; finished ones set lastSuccessfulTime. */
  private syncActive (cj: Obj, status: Obj, owned: Obj[]): void {
    const running = new Set(owned.filter(j => jobFinished(j) === undefined).map(j => j.metadata.uid))
    const before = (status.active ?? []) as Obj[]
    const kept = before.filter(r => running.has(r.uid))
    for (const j of owned) if (running.has(j.metadata.uid) && !kept.some(r => r.uid === j.metadata.uid)) kept.push(refOf(j))
    for (const r of before) {
      if (running.has(r.uid)) continue
      const j = owned.find(x => x.metadata.uid === r.uid)
      if (j !== undefined) this.c.events.event(cj, 'Normal', 'SawCompletedJob', `Saw completed job: ${String(j.metadata.name)}, status: ${jobFinished(j) ?? 'Complete'}`)
    }
    for (const j of owned) {
      if (jobFinished(j) !== 'Complete' || j.status?.completionTime === undefined) continue
      if (status.lastSuccessfulTime === undefined || Date.parse(j.status.completionTime) > Date.parse(status.lastSuccessfulTime)) status.lastSuccessfulTime = j.status.completionTime
    }
    if (kept.length > 0) status.active = kept
    else delete status.active
  }

  private async createJob (cj: Obj, scheduled: number): Promise<Obj | undefined> {
    const template = cj.spec.jobTemplate ?? {}
    const namespace = String(cj.metadata.namespace)
    const name = `${String(cj.metadata.name)}-${Math.floor(scheduled / 60_000)}`
    const job = {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: {
        name,
        namespace,
        labels: { ...(template.metadata?.labels ?? {}) },
        annotations: { ...(template.metadata?.annotations ?? {}), [SCHEDULED_TIMESTAMP]: rfc3339(scheduled) },
        ownerReferences: [{ apiVersion: 'batch/v1', kind: 'CronJob', name: cj.metadata.name, uid: cj.metadata.uid, controller: true, blockOwnerDeletion: true }]
      },
      spec: structuredClone(template.spec ?? {})
    }
    try {
      const created = await this.c.client.resource(RESOURCES.jobs).create(namespace, job)
      this.c.events.event(cj, 'Normal', 'SuccessfulCreate', `Created job ${name}`)
      return created
    } catch (err) {
      if ((err as { code?: number }).code !== 409) {
        this.c.events.event(cj, 'Warning', 'FailedCreate', `Error creating job: ${(err as Error).message}`)
        throw err
      }
      const existing = await this.c.client.resource(RESOURCES.jobs).get(namespace, name)
      return existing !== undefined && controllerOf(existing)?.uid === cj.metadata.uid ? existing : undefined
    }
  }

  /** Keeps the newest `successfulJobsHistoryLimit` (3) complete and `failedJobsHistoryLimit` (1) failed jobs. */
  private async cleanupHistory (cj: Obj, owned: Obj[]): Promise<void> {
    const byStart = (a: Obj, b: Obj): number => String(a.status?.startTime ?? a.metadata.creationTimestamp).localeCompare(String(b.status?.startTime ?? b.metadata.creationTimestamp))
    for (const [kind, limit] of [['Complete', cj.spec?.successfulJobsHistoryLimit ?? 3], ['Failed', cj.spec?.failedJobsHistoryLimit ?? 1]] as const) {
      const done = owned.filter(j => jobFinished(j) === kind && j.metadata?.deletionTimestamp === undefined).sort(byStart)
      for (const j of done.slice(0, Math.max(0, done.length - limit))) {
        await this.deleteJob(cj, String(j.metadata.name))
        this.c.events.event(cj, 'Normal', 'SuccessfulDelete', `Deleted job ${String(j.metadata.name)}`)
      }
    }
  }

  private async deleteJob (cj: Obj, name: string): Promise<void> {
    try {
      await this.c.client.resource(RESOURCES.jobs).delete(String(cj.metadata.namespace), name, { propagationPolicy: 'Background' })
    } catch (err) {
      if ((err as { code?: number }).code !== 404) throw err
    }
  }
}

function refOf (job: Obj): Obj {
  return { apiVersion: 'batch/v1', kind: 'Job', name: job.metadata.name, namespace: job.metadata.namespace, uid: job.metadata.uid, resourceVersion: job.metadata.resourceVersion }
}
