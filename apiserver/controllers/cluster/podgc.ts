// The pod garbage collector: removes finished pods beyond the threshold (oldest first), pods bound to nodes that no
// longer exist, and unscheduled pods stuck terminating; every 20 s, as kube-controller-manager's podgc.

import { QueueController, type ControllerContext, type ReconcileResult } from '../controller.js'
import { RESOURCES, type Obj } from '../client/types.js'
import type { SharedInformer } from '../informer.js'

const CHECK_PERIOD_MS = 20_000
const KEY = 'all'

export class PodGCController extends QueueController {
  private readonly pods: SharedInformer
  private readonly nodes: SharedInformer
  /** Nodes seen missing once: a pod is orphaned only if its node is still missing at the next pass (the quarantine). */
  private readonly missing = new Set<string>()

  constructor (c: ControllerContext) {
    super('podgc', c)
    this.pods = c.informers.informer(RESOURCES.pods)
    this.nodes = c.informers.informer(RESOURCES.nodes)
  }

  protected watch (): void {
    this.queue.addAfter(KEY, CHECK_PERIOD_MS)
  }

  async reconcile (): Promise<ReconcileResult> {
    if (!this.pods.hasSynced() || !this.nodes.hasSynced()) return { requeueAfterMs: CHECK_PERIOD_MS }
    const pods = this.pods.list()
    const threshold = this.c.settings.terminatedPodGCThreshold ?? 12_500
    if (threshold > 0) {
      const done = pods.filter(p => (p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed') && p.metadata?.deletionTimestamp === undefined)
        .sort((a, b) => String(a.metadata.creationTimestamp).localeCompare(String(b.metadata.creationTimestamp)))
      for (const p of done.slice(0, Math.max(0, done.length - threshold))) await this.remove(p, undefined)
    }
    const nowMissing = new Set<string>()
    for (const p of pods) {
      const node = p.spec?.nodeName ?? ''
      if (node === '' || this.nodes.get(node) !== undefined) continue
      nowMissing.add(node)
      if (this.missing.has(node)) await this.remove(p, 0, 'PodGC', 'PodGC: node no longer exists')
    }
    this.missing.clear()
    for (const n of nowMissing) this.missing.add(n)
    for (const p of pods) {
      if ((p.spec?.nodeName ?? '') === '' && p.metadata?.deletionTimestamp !== undefined) await this.remove(p, 0)
    }
    return { requeueAfterMs: CHECK_PERIOD_MS }
  }

  private async remove (pod: Obj, gracePeriodSeconds: number | undefined, reason?: string, message?: string): Promise<void> {
    const ns = String(pod.metadata.namespace)
    const name = String(pod.metadata.name)
    const client = this.c.client.resource(RESOURCES.pods)
    try {
      if (reason !== undefined) {
        const conditions = [...((pod.status?.conditions ?? []) as Obj[]).filter(c => c.type !== 'DisruptionTarget'),
          { type: 'DisruptionTarget', status: 'True', reason, message, lastTransitionTime: new Date(this.c.clock.now()).toISOString().replace(/\.\d{3}Z$/, 'Z') }]
        await client.patch(ns, name, { status: { phase: 'Failed', conditions } }, 'status')
      }
      await client.delete(ns, name, gracePeriodSeconds === undefined ? {} : { gracePeriodSeconds })
    } catch (err) {
      if ((err as { code?: number }).code !== 404) throw err
    }
  }
}
