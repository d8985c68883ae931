// The DaemonSet controller: one pod on every eligible node (selector, affinity, taints), rolled by RollingUpdate or OnDelete through ControllerRevisions.

import { QueueController, type ControllerContext, type ReconcileResult } from '../controller.js'
import { RESOURCES, type Obj } from '../client/types.js'
import { keyOf, splitKey, type SharedInformer } from '../informer.js'
import { controllerOf, labelsOf, selectorMatches } from '../labels.js'
import { isPodAvailable, isPodReady, podFromTemplate } from '../pods.js'
import { writeStatus } from '../status-patch.js'
import { nodeMatchesPod, tolerates } from '../../scheduler/node-affinity.js'
import { claimPods } from './claim.js'
import { Expectations } from '../expectations.js'
import { REVISION_HASH_LABEL, hashOf, syncRevisions, truncateHistory } from './revisions.js'

/** Tolerations every daemon pod gets, so node conditions never push it off (Kubernetes' AddOrUpdateDaemonPodTolerations). */
const DAEMON_TOLERATIONS = [
  { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' },
  { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute' },
  { key: 'node.kubernetes.io/disk-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/memory-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/pid-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' }
]

function resolveInt (v: unknown, total: number, roundUp: boolean): number {
  const s = String(v ?? '')
  if (s.endsWith('%')) { const x = Number(s.slice(0, -1)) * total / 100; return roundUp ? Math.ceil(x) : Math.floor(x) }
  return Number(s) || 0
}

export class DaemonSetController extends QueueController {
  private readonly sets: SharedInformer
  private readonly pods: SharedInformer
  private readonly nodes: SharedInformer
  private readonly revisions: SharedInformer
  private readonly expectations: Expectations

  constructor (c: ControllerContext) {
    super('daemonset', c)
    this.sets = c.informers.informer(RESOURCES.daemonSets)
    this.pods = c.informers.informer(RESOURCES.pods)
    this.nodes = c.informers.informer(RESOURCES.nodes)
    this.revisions = c.informers.informer(RESOURCES.controllerRevisions)
    this.expectations = new Expectations(() => c.clock.now())
  }

  protected watch (): void {
    this.sets.addEventHandler({ add: d => this.queue.add(keyOf(d)), update: (_o, d) => this.queue.add(keyOf(d)), delete: d => this.expectations.forget(keyOf(d)) })
    const onPod = (p: Obj, added: boolean): void => {
      const ref = controllerOf(p)
      if (ref?.kind !== 'DaemonSet') return
      const key = `${String(p.metadata.namespace)}/${String(ref.name)}`
      if (added) this.expectations.creationObserved(key)
      this.queue.add(key)
    }
    this.pods.addEventHandler({ add: p => onPod(p, true), update: (_o, p) => onPod(p, false), delete: p => onPod(p, false) })
    const all = (): void => { for (const d of this.sets.list()) this.queue.add(keyOf(d)) }
    this.nodes.addEventHandler({ add: all, update: (o, n) => { if (JSON.stringify([o.metadata?.labels, o.spec?.taints, o.spec?.unschedulable]) !== JSON.stringify([n.metadata?.labels, n.spec?.taints, n.spec?.unschedulable])) all() }, delete: all })
  }

  /** Whether a daemon pod of `ds` belongs on `node`. */
  private eligible (ds: Obj, node: Obj): boolean {
    const pod = { spec: ds.spec.template.spec }
    if (!nodeMatchesPod(pod, node)) return false
    const tolerations = [...((ds.spec.template.spec?.tolerations ?? []) as Obj[]), ...DAEMON_TOLERATIONS]
    return ((node.spec?.taints ?? []) as Obj[]).every(t => (t.effect !== 'NoSchedule' && t.effect !== 'NoExecute') || tolerates(tolerations, t))
  }

  async reconcile (key: string): Promise<ReconcileResult | void> {
    const ds = this.sets.get(key)
    if (ds === undefined) return
    const [namespace] = splitKey(key)
    const pods = (await claimPods(this.c.client, ds, 'DaemonSet', this.pods.list(namespace), l => selectorMatches(ds.spec?.selector, l)))
      .filter(p => p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed')
    if (ds.metadata?.deletionTimestamp !== undefined) return
    const revs = await syncRevisions(this.c, ds, 'DaemonSet', this.revisions.list(namespace))
    const hash = hashOf(revs.update)
    const byNode = new Map<string, Obj[]>()
    for (const p of pods) {
      const n = nodeOf(p)
      byNode.set(n, [...(byNode.get(n) ?? []), p])
    }
    const nodes = this.nodes.list()
    const wanted = nodes.filter(n => this.eligible(ds, n)).map(n => String(n.metadata.name))
    const client = this.c.client.resource(RESOURCES.pods)
    const now = this.c.clock.now()
    const minReady = ds.spec?.minReadySeconds ?? 0
    if (this.expectations.satisfied(key)) {
      const toCreate = wanted.filter(n => (byNode.get(n) ?? []).filter(p => p.metadata.deletionTimestamp === undefined).length === 0)
      const toDelete: Obj[] = []
      for (const [n, list] of byNode) {
        const live = list.filter(p => p.metadata.deletionTimestamp === undefined)
        if (!wanted.includes(n)) toDelete.push(...live)
        else if (live.length > 1) toDelete.push(...live.slice(1))
      }
      // RollingUpdate: old-revision pods go, at most maxUnavailable nodes without an available pod at a time.
      if ((ds.spec?.updateStrategy?.type ?? 'RollingUpdate') === 'RollingUpdate') {
        const maxUnavailable = Math.max(1, resolveInt(ds.spec?.updateStrategy?.rollingUpdate?.maxUnavailable ?? 1, wanted.length, false))
        let unavailable = wanted.filter(n => !(byNode.get(n) ?? []).some(p => p.metadata.deletionTimestamp === undefined && isPodAvailable(p, minReady, now))).length
        for (const n of wanted) {
          if (unavailable >= maxUnavailable) break
          const old = (byNode.get(n) ?? []).find(p => p.metadata.deletionTimestamp === undefined && labelsOf(p)[REVISION_HASH_LABEL] !== hash)
          if (old === undefined || toDelete.includes(old)) continue
          toDelete.push(old)
          if (isPodAvailable(old, minReady, now)) unavailable++
        }
      }
      this.expectations.expectCreations(key, toCreate.length)
      for (const n of toCreate) {
        const pod = podFromTemplate(ds.spec.template, namespace, `${String(ds.metadata.name)}-`, { apiVersion: 'apps/v1', kind: 'DaemonSet', name: ds.metadata.name, uid: ds.metadata.uid }, { [REVISION_HASH_LABEL]: hash })
        pod.spec.tolerations = [...(pod.spec.tolerations ?? []), ...DAEMON_TOLERATIONS]
        // Placed through the scheduler, pinned to its node by affinity (as Kubernetes does since 1.12).
        pod.spec.affinity = { ...(pod.spec.affinity ?? {}), nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [n] }] }] } } }
        try {
          const made = await client.create(namespace, pod)
          this.c.events.event(ds, 'Normal', 'SuccessfulCreate', `Created pod: ${String(made.metadata.name)}`)
        } catch (err) {
          this.expectations.creationFailed(key)
          this.c.events.event(ds, 'Warning', 'FailedCreate', `Error creating: ${(err as Error).message}`)
          throw err
        }
      }
      for (const p of toDelete) {
        try {
          await client.delete(namespace, String(p.metadata.name))
          this.c.events.event(ds, 'Normal', 'SuccessfulDelete', `Deleted pod: ${String(p.metadata.name)}`)
        } catch (err) { if ((err as { code?: number }).code !== 404) throw err }
      }
    }
    await truncateHistory(this.c, ds, revs, new Set(pods.map(p => labelsOf(p)[REVISION_HASH_LABEL])))
    const live = pods.filter(p => p.metadata.deletionTimestamp === undefined)
    const scheduled = live.filter(p => wanted.includes(nodeOf(p)))
    const status: Obj = {
      currentNumberScheduled: new Set(scheduled.map(nodeOf)).size,
      numberMisscheduled: new Set(live.filter(p => !wanted.includes(nodeOf(p)) && nodeOf(p) !== '').map(nodeOf)).size,
      desiredNumberScheduled: wanted.length,
      numberReady: scheduled.filter(isPodReady).length,
      observedGeneration: ds.metadata?.generation ?? 1,
      updatedNumberScheduled: scheduled.filter(p => labelsOf(p)[REVISION_HASH_LABEL] === hash).length,
      numberAvailable: scheduled.filter(p => isPodAvailable(p, minReady, now)).length
    }
    status.numberUnavailable = Math.max(0, wanted.length - status.numberAvailable)
    for (const k of ['numberAvailable', 'numberUnavailable', 'updatedNumberScheduled'] as const) if (status[k] === 0) delete status[k]
    if (ds.status?.collisionCount !== undefined) status.collisionCount = ds.status.collisionCount
    await writeStatus(this.c, RESOURCES.daemonSets, ds, status)
  }
}

/** The node a daemon pod is on or is pinned to. */
function nodeOf (pod: Obj): string {
  if ((pod.spec?.nodeName ?? '') !== '') return String(pod.spec.nodeName)
  const terms = pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? []
  for (const t of terms as Obj[]) for (const f of (t.matchFields ?? []) as Obj[]) if (f.key === 'metadata.name') return String(f.values?.[0] ?? '')
  return ''
}
