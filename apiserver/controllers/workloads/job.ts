// The Job controller: runs pods to `completions` with `parallelism`, back-off, deadlines, Indexed mode, failure policy and suspension; tracks finished pods with a finalizer.

import { QueueController, type ControllerContext, type ReconcileResult } from '../controller.js'
import { RESOURCES, type Obj } from '../client/types.js'
import { keyOf, splitKey, type SharedInformer } from '../informer.js'
import { controllerOf, selectorMatches } from '../labels.js'
import { isPodReady, podFromTemplate } from '../pods.js'
import { writeStatus } from '../status-patch.js'
import { claimPods } from './claim.js'
import { Expectations } from '../expectations.js'
import { COMPLETION_INDEX, INDEX_FAILURE_COUNT, JOB_TRACKING_FINALIZER, failurePolicyAction, formatIndexes, indexOf, parseIndexes, podBackoffMs } from './job-util.js'
import { rfc3339 } from '../../registry/object-meta.js'

const isTerminal = (p: Obj): boolean => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed'
const isDeleting = (p: Obj): boolean => (p.metadata?.deletionTimestamp ?? null) !== null

function finished (job: Obj): boolean {
  return ((job.status?.conditions ?? []) as Obj[]).some(c => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True')
}

export class JobController extends QueueController {
  private readonly jobs: SharedInformer
  private readonly pods: SharedInformer
  /** Last failure time per job, for the pod back-off (kept in memory as kube-controller-manager does). */
  private readonly lastFailure = new Map<string, { at: number, count: number }>()
  /** Uids already counted per job: the informer may still show a released pod with its finalizer. */
  private readonly counted = new Map<string, Set<string>>()
  private readonly expectations: Expectations

  constructor (c: ControllerContext) {
    super('job', c)
    this.jobs = c.informers.informer(RESOURCES.jobs)
    this.pods = c.informers.informer(RESOURCES.pods)
    this.expectations = new Expectations(() => c.clock.now())
  }

  protected watch (): void {
    this.jobs.addEventHandler({ add: j => this.queue.add(keyOf(j)), update: (_o, j) => this.queue.add(keyOf(j)), delete: j => this.queue.add(keyOf(j)) })
    const onPod = (p: Obj): string | undefined => {
      const ref = controllerOf(p)
      if (ref?.kind !== 'Job') return undefined
      const key = `${String(p.metadata.namespace)}/${String(ref.name)}`
      this.queue.add(key)
      return key
    }
    this.pods.addEventHandler({
      add: p => { const k = onPod(p); if (k !== undefined) this.expectations.creationObserved(k) },
      update: (_o, p) => { onPod(p) },
      delete: p => { onPod(p) }
    })
  }

  async reconcile (key: string): Promise<ReconcileResult | void> {
    const job = this.jobs.get(key)
    if (job === undefined) { this.lastFailure.delete(key); this.counted.delete(key); this.expectations.forget(key); return }
    const [namespace] = splitKey(key)
    const pods = await claimPods(this.c.client, job, 'Job', this.pods.list(namespace), l => selectorMatches(job.spec?.selector, l))
    const now = this.c.clock.now()
    const status: Obj = structuredClone(job.status ?? {})
    if (finished(job)) {
      await this.removeFinalizers(pods.filter(p => this.hasFinalizer(p)))
      await this.deletePods(job, pods.filter(p => !isTerminal(p) && !isDeleting(p)))
      return
    }
    // The final status write is a diff against what is stored, which countFinished may have changed.
    const base = await this.countFinished(job, pods, status)
    const active = pods.filter(p => !isTerminal(p) && !isDeleting(p))
    const suspended = job.spec?.suspend === true
    if (!suspended && status.startTime === undefined) status.startTime = rfc3339(now)
    let requeue: number | undefined

    if (perIndexLimit(job) !== undefined) status.failedIndexes = formatIndexes(failedIndexes(job, pods, status))
    const failure = this.failureReason(job, pods, status, now)
    if (failure !== undefined) {
      await this.deletePods(job, active)
      this.finish(job, status, 'Failed', failure.reason, failure.message, now)
      this.c.events.event(job, 'Warning', failure.reason, failure.message)
    } else if (this.complete(job, status, active)) {
      this.finish(job, status, 'Complete', undefined, undefined, now)
      this.c.events.event(job, 'Normal', 'Completed', 'Job completed')
    } else if (suspended) {
      await this.deletePods(job, active)
      setCondition(status, { type: 'Suspended', status: 'True', reason: 'JobSuspended', message: 'Job suspended' }, now)
      delete status.startTime
      if (active.length > 0) this.c.events.event(job, 'Normal', 'Suspended', 'Job suspended')
    } else {
      if (((status.conditions ?? []) as Obj[]).some(c => c.type === 'Suspended' && c.status === 'True')) {
        setCondition(status, { type: 'Suspended', status: 'False', reason: 'JobResumed', message: 'Job resumed' }, now)
        this.c.events.event(job, 'Normal', 'Resumed', 'Job resumed')
      }
      if (this.expectations.satisfied(key)) requeue = await this.manageActive(key, job, pods, active, status, now)
      const deadline = job.spec?.activeDeadlineSeconds
      if (deadline !== undefined && deadline !== null && status.startTime !== undefined) {
        const left = Date.parse(status.startTime) + deadline * 1000 - now
        requeue = Math.min(requeue ?? Infinity, Math.max(1, left + 1))
      }
    }
    status.active = pods.filter(p => !isTerminal(p) && !isDeleting(p)).length
    status.ready = pods.filter(p => !isTerminal(p) && !isDeleting(p) && isPodReady(p)).length
    if (status.active === 0 && !finished({ status }) && job.status?.active === undefined) delete status.active
    await writeStatus(this.c, RESOURCES.jobs, base, status)
    return requeue === undefined || !Number.isFinite(requeue) ? undefined : { requeueAfterMs: requeue }
  }

  private hasFinalizer (p: Obj): boolean {
    return ((p.metadata?.finalizers ?? []) as string[]).includes(JOB_TRACKING_FINALIZER)
  }

  /**
   * Finished pods still holding the tracking finalizer are recorded in `uncountedTerminatedPods` (written first),
   * then released, then moved into the succeeded/failed counts: a pod is never counted twice or lost.
   */
  private async countFinished (job: Obj, pods: Obj[], status: Obj): Promise<Obj> {
    const uncounted = { succeeded: [...(status.uncountedTerminatedPods?.succeeded ?? [])] as string[], failed: [...(status.uncountedTerminatedPods?.failed ?? [])] as string[] }
    const counted = this.counted.get(keyOf(job)) ?? new Set<string>()
    this.counted.set(keyOf(job), counted)
    const done = pods.filter(p => this.hasFinalizer(p) && (isTerminal(p) || isDeleting(p)) && !counted.has(p.metadata.uid))
    const fresh = done.filter(p => !uncounted.succeeded.includes(p.metadata.uid) && !uncounted.failed.includes(p.metadata.uid))
    for (const p of fresh) (p.status?.phase === 'Succeeded' ? uncounted.succeeded : uncounted.failed).push(p.metadata.uid)
    if (fresh.length > 0) {
      await writeStatus(this.c, RESOURCES.jobs, job, { ...status, uncountedTerminatedPods: uncounted })
      job = { ...job, status: { ...status, uncountedTerminatedPods: uncounted } }
    }
    await this.removeFinalizers(done)
    const indexes = parseIndexes(status.completedIndexes)
    const byUid = new Map(pods.map(p => [p.metadata.uid, p]))
    for (const uid of [...uncounted.succeeded, ...uncounted.failed]) counted.add(uid)
    for (const uid of uncounted.succeeded) {
      status.succeeded = (status.succeeded ?? 0) + 1
      const i = byUid.get(uid) === undefined ? undefined : indexOf(byUid.get(uid)!)
      if (i !== undefined) indexes.add(i)
    }
    for (const uid of uncounted.failed) {
      const p = byUid.get(uid)
      const action = p === undefined ? undefined : failurePolicyAction(job, p)
      if (action?.action === 'Ignore') continue
      status.failed = (status.failed ?? 0) + 1
    }
    // The back-off counts failures recorded in status; it restarts from the time a new failure is seen.
    if (fresh.some(p => p.status?.phase !== 'Succeeded' && failurePolicyAction(job, p)?.action !== 'Ignore')) {
      this.lastFailure.set(keyOf(job), { at: this.c.clock.now(), count: status.failed ?? 0 })
    }
    if (job.spec?.completionMode === 'Indexed') status.completedIndexes = formatIndexes(indexes)
    status.uncountedTerminatedPods = {}
    for (const k of ['succeeded', 'failed'] as const) if (status[k] === 0) delete status[k]
    return job
  }

  private failureReason (job: Obj, pods: Obj[], status: Obj, now: number): { reason: string, message: string } | undefined {
    for (const p of pods) {
      if (p.status?.phase !== 'Failed') continue
      const a = failurePolicyAction(job, p)
      if (a?.action === 'FailJob') return { reason: 'PodFailurePolicy', message: a.message }
    }
    if (perIndexLimit(job) !== undefined) {
      const failedCount = parseIndexes(status.failedIndexes).size
      const max = job.spec?.maxFailedIndexes
      if (max !== undefined && max !== null && failedCount > max) return { reason: 'MaxFailedIndexesExceeded', message: 'Job has exceeded the specified maximal number of failed indexes' }
      const settled = new Set([...parseIndexes(status.completedIndexes), ...parseIndexes(status.failedIndexes)])
      if (failedCount > 0 && settled.size >= (job.spec?.completions ?? 0)) return { reason: 'FailedIndexes', message: 'Job has failed indexes' }
    } else if ((status.failed ?? 0) > (job.spec?.backoffLimit ?? 6)) {
      return { reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit' }
    }
    const deadline = job.spec?.activeDeadlineSeconds
    if (deadline !== undefined && deadline !== null && status.startTime !== undefined && Date.parse(status.startTime) + deadline * 1000 <= now) {
      return { reason: 'DeadlineExceeded', message: 'Job was active longer than specified deadline' }
    }
    return undefined
  }

  private complete (job: Obj, status: Obj, active: Obj[]): boolean {
    const completions = job.spec?.completions
    if (completions === undefined || completions === null) return (status.succeeded ?? 0) > 0 && active.length === 0
    if (job.spec?.completionMode === 'Indexed') return parseIndexes(status.completedIndexes).size >= completions
    return (status.succeeded ?? 0) >= completions
  }

  private finish (job: Obj, status: Obj, type: 'Complete' | 'Failed', reason: string | undefined, message: string | undefined, now: number): void {
    if (type === 'Complete') status.completionTime = rfc3339(now)
    setCondition(status, { type, status: 'True', ...(reason !== undefined ? { reason } : {}), ...(message !== undefined ? { message } : {}) }, now)
    void job
  }

  /** Creates the pods still wanted (after the failure back-off); returns when to look again. */
  private async manageActive (key: string, job: Obj, pods: Obj[], active: Obj[], status: Obj, now: number): Promise<number | undefined> {
    const parallelism = job.spec?.parallelism ?? 1
    const completions = job.spec?.completions
    const replaceOnlyFailed = job.spec?.podReplacementPolicy === 'Failed'
    const busy = replaceOnlyFailed ? pods.filter(p => !isTerminal(p)).length : active.length
    let want: number
    const indexed = job.spec?.completionMode === 'Indexed'
    const done = indexed ? parseIndexes(status.completedIndexes).size + parseIndexes(status.failedIndexes).size : (status.succeeded ?? 0)
    if (completions === undefined || completions === null) want = (status.succeeded ?? 0) > 0 ? 0 : parallelism - busy
    else want = Math.min(parallelism, completions - done) - busy
    if (want <= 0) {
      if (want < 0) await this.deletePods(job, active.slice(0, -want))
      return undefined
    }
    const failure = this.lastFailure.get(key)
    // With a per-index limit, each index backs off on its own count (kept on its pods), not the job's.
    if (failure !== undefined && perIndexLimit(job) === undefined) {
      const wait = failure.at + podBackoffMs(failure.count) - now
      if (wait > 0) return wait + 1
    }
    const owner = { apiVersion: 'batch/v1', kind: 'Job', name: job.metadata.name, uid: job.metadata.uid }
    const ns = String(job.metadata.namespace)
    const taken = new Set([...parseIndexes(status.completedIndexes), ...parseIndexes(status.failedIndexes), ...pods.filter(p => !isTerminal(p) || p.status?.phase === 'Succeeded').map(indexOf).filter((i): i is number => i !== undefined)])
    const client = this.c.client.resource(RESOURCES.pods)
    this.expectations.expectCreations(key, want)
    for (let n = 0, i = 0; n < want; n++) {
      let pod: Obj
      if (indexed) {
        while (taken.has(i)) i++
        if (i >= completions) { for (let k = n; k < want; k++) this.expectations.creationFailed(key); break }
        taken.add(i)
        pod = this.indexedPod(job, ns, owner, i)
        if (perIndexLimit(job) !== undefined) {
          pod.metadata.annotations = { ...pod.metadata.annotations, [INDEX_FAILURE_COUNT]: String(indexFailures(pods, i)) }
        }
      } else {
        pod = podFromTemplate(job.spec.template, ns, `${String(job.metadata.name)}-`, owner)
      }
      pod.metadata.finalizers = [...(pod.metadata.finalizers ?? []), JOB_TRACKING_FINALIZER]
      try {
        const created = await client.create(ns, pod)
        this.c.events.event(job, 'Normal', 'SuccessfulCreate', `Created pod: ${String(created.metadata.name)}`)
      } catch (err) {
        for (let k = n; k < want; k++) this.expectations.creationFailed(key)
        this.c.events.event(job, 'Warning', 'FailedCreate', `Error creating: ${(err as Error).message}`)
        throw err
      }
    }
    return undefined
  }

  private indexedPod (job: Obj, ns: string, owner: { apiVersion: string, kind: string, name: string, uid: string }, index: number): Obj {
    const pod = podFromTemplate(job.spec.template, ns, `${String(job.metadata.name)}-${index}-`, owner, { [COMPLETION_INDEX]: String(index) })
    pod.metadata.annotations = { ...(pod.metadata.annotations ?? {}), [COMPLETION_INDEX]: String(index) }
    pod.spec.hostname ??= `${String(job.metadata.name)}-${index}`
    for (const c of [...(pod.spec.containers ?? []), ...(pod.spec.initContainers ?? [])] as Obj[]) {
      c.env = [...(c.env ?? []), { name: 'JOB_COMPLETION_INDEX', valueFrom: { fieldRef: { fieldPath: `metadata.annotations['${COMPLETION_INDEX}']` } } }]
    }
    return pod
  }

  private async removeFinalizers (pods: Obj[]): Promise<void> {
    const client = this.c.client.resource(RESOURCES.pods)
    await Promise.all(pods.filter(p => this.hasFinalizer(p)).map(async p => {
      const finalizers = ((p.metadata.finalizers ?? []) as string[]).filter(f => f !== JOB_TRACKING_FINALIZER)
      try {
        await client.patch(String(p.metadata.namespace), String(p.metadata.name), { metadata: { finalizers: finalizers.length > 0 ? finalizers : null } })
      } catch (err) {
        if ((err as { code?: number }).code !== 404) throw err
      }
    }))
  }

  private async deletePods (job: Obj, pods: Obj[]): Promise<void> {
    const client = this.c.client.resource(RESOURCES.pods)
    await Promise.all(pods.map(async p => {
      try {
        await client.delete(String(p.metadata.namespace), String(p.metadata.name))
        this.c.events.event(job, 'Normal', 'SuccessfulDelete', `Deleted pod: ${String(p.metadata.name)}`)
      } catch (err) {
        if ((err as { code?: number }).code !== 404) throw err
      }
    }))
  }
}

function setCondition (status: Obj, c: Obj, now: number): void {
  const list = (status.conditions ?? []) as Obj[]
  const prior = list.find(x => x.type === c.type)
  if (prior !== undefined && prior.status === c.status && prior.reason === c.reason) return
  const time = rfc3339(now)
  status.conditions = [...list.filter(x => x.type !== c.type), { ...c, lastProbeTime: time, lastTransitionTime: time }]
}

/** backoffLimitPerIndex of an Indexed Job, or undefined. */
function perIndexLimit (job: Obj): number | undefined {
  const v = job.spec?.backoffLimitPerIndex
  return job.spec?.completionMode === 'Indexed' && v !== undefined && v !== null ? Number(v) : undefined
}

/** Failures so far of one index: the most any of its failed pods counted (its annotation, plus its own failure). */
function indexFailures (pods: Obj[], index: number): number {
  let n = 0
  for (const p of pods) {
    if (indexOf(p) !== index || p.status?.phase !== 'Failed') continue
    n = Math.max(n, Number(p.metadata?.annotations?.[INDEX_FAILURE_COUNT] ?? 0) + 1)
  }
  return n
}

/** Indexes past their backoffLimitPerIndex, or failed by a FailIndex rule, added to those already recorded. */
function failedIndexes (job: Obj, pods: Obj[], status: Obj): Set<number> {
  const limit = perIndexLimit(job) ?? Infinity
  const out = parseIndexes(status.failedIndexes)
  const completed = parseIndexes(status.completedIndexes)
  for (const p of pods) {
    const i = indexOf(p)
    if (i === undefined || p.status?.phase !== 'Failed' || completed.has(i)) continue
    if (indexFailures(pods, i) > limit || failurePolicyAction(job, p)?.action === 'FailIndex') out.add(i)
  }
  return out
}
