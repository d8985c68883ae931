// The TTL-after-finished controller: deletes a finished Job (and, in the background, its pods) `ttlSecondsAfterFinished` after it finished.

import { QueueController, type ControllerContext, type ReconcileResult } from '../controller.js'
import { RESOURCES, type Obj } from '../client/types.js'
import { keyOf, splitKey, type SharedInformer } from '../informer.js'

/** When a Job finished: its completionTime, else the time its Complete or Failed condition turned True. */
export function finishedAt (job: Obj): number | undefined {
  const c = ((job.status?.conditions ?? []) as Obj[]).find(x => (x.type === 'Complete' || x.type === 'Failed') && x.status === 'True')
  if (c === undefined) return undefined
  const t = Date.parse(String(job.status?.completionTime ?? c.lastTransitionTime ?? ''))
  return Number.isFinite(t) ? t : undefined
}

export class TTLAfterFinishedController extends QueueController {
  private readonly jobs: SharedInformer

  constructor (c: ControllerContext) {
    super('ttlafterfinished', c)
    this.jobs = c.informers.informer(RESOURCES.jobs)
  }

  protected watch (): void {
    const onJob = (j: Obj): void => { if (j.spec?.ttlSecondsAfterFinished !== undefined && j.spec.ttlSecondsAfterFinished !== null) this.queue.add(keyOf(j)) }
    this.jobs.addEventHandler({ add: onJob, update: (_o, j) => onJob(j) })
  }

  async reconcile (key: string): Promise<ReconcileResult | void> {
    const job = this.jobs.get(key)
    const ttl = job?.spec?.ttlSecondsAfterFinished
    if (job === undefined || ttl === undefined || ttl === null || job.metadata?.deletionTimestamp !== undefined) return
    const done = finishedAt(job)
    if (done === undefined) return
    const left = done + ttl * 1000 - this.c.clock.now()
    if (left > 0) return { requeueAfterMs: left + 1 }
    const [ns, name] = splitKey(key)
    try {
      await this.c.client.resource(RESOURCES.jobs).delete(ns, name, { propagationPolicy: 'Background', preconditions: { uid: job.metadata.uid, resourceVersion: job.metadata.resourceVersion } })
    } catch (err) {
      const code = (err as { code?: number }).code
      if (code !== 404 && code !== 409) throw err
    }
  }
}
