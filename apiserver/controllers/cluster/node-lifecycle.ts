// The node lifecycle controller: a node that stops reporting turns Unknown, NotReady and unreachable nodes get
// NoExecute taints, pressure conditions become NoSchedule taints, and pods that do not tolerate NoExecute taints are
// evicted once their tolerationSeconds pass.

import { QueueController, type ControllerContext, type ReconcileResult } from '../controller.js'
import { RESOURCES, type Obj } from '../client/types.js'
import type { SharedInformer } from '../informer.js'
import { rfc3339 } from '../../registry/object-meta.js'
import { withConditionTaints } from './condition-taints.js'

export const NOT_READY_TAINT = 'node.kubernetes.io/not-ready'
export const UNREACHABLE_TAINT = 'node.kubernetes.io/unreachable'

export interface NodeLifecycleOptions {
  /** How long a node may go without a heartbeat (status or Lease) before it is Unknown (kube-controller-manager: 40 s). */
  gracePeriodMs?: number
  /** How often nodes are checked (5 s). */
  monitorPeriodMs?: number
}

function tolerationFor (pod: Obj, taint: Obj): Obj | undefined {
  return ((pod.spec?.tolerations ?? []) as Obj[]).find(t =>
    (t.effect === undefined || t.effect === '' || t.effect === taint.effect) &&
    (((t.key ?? '') === '' && t.operator === 'Exists') || (t.key === taint.key && (t.operator === 'Exists' || (t.value ?? '') === (taint.value ?? '')))))
}

export class NodeLifecycleController extends QueueController {
  private readonly nodes: SharedInformer
  private readonly leases: SharedInformer
  private readonly pods: SharedInformer
  private readonly grace: number
  private readonly period: number

  constructor (c: ControllerContext, o: NodeLifecycleOptions = {}) {
    super('nodelifecycle', c)
    this.nodes = c.informers.informer(RESOURCES.nodes)
    this.leases = c.informers.informer(RESOURCES.leases)
    this.pods = c.informers.informer(RESOURCES.pods)
    this.grace = o.gracePeriodMs ?? c.settings.nodeMonitorGracePeriodMs ?? 40_000
    this.period = o.monitorPeriodMs ?? c.settings.nodeMonitorPeriodMs ?? 5_000
  }

  protected watch (): void {
    this.nodes.addEventHandler({ add: n => this.queue.add(String(n.metadata.name)), update: (_o, n) => this.queue.add(String(n.metadata.name)) })
    this.pods.addEventHandler({ add: p => { if (p.spec?.nodeName) this.queue.add(String(p.spec.nodeName)) } })
  }

  /** The newest sign of life: the Ready condition's heartbeat or the node Lease's renewal. */
  private lastHeartbeat (node: Obj): number {
    const ready = ((node.status?.conditions ?? []) as Obj[]).find(c => c.type === 'Ready')
    const times = [Date.parse(String(ready?.lastHeartbeatTime ?? '')), Date.parse(String(node.metadata?.creationTimestamp ?? ''))]
    for (const ns of ['orch-node-lease', 'kube-node-lease']) {
      const lease = this.leases.get(`${ns}/${String(node.metadata.name)}`)
      times.push(Date.parse(String(lease?.spec?.renewTime ?? '')))
    }
    return Math.max(...times.filter(Number.isFinite))
  }

  async reconcile (name: string): Promise<ReconcileResult | void> {
    const node = this.nodes.get(name)
    if (node === undefined) return
    const now = this.c.clock.now()
    let conditions = (node.status?.conditions ?? []) as Obj[]
    const ready = conditions.find(c => c.type === 'Ready')
    const silentFor = now - this.lastHeartbeat(node)
    if (silentFor > this.grace && ready?.status !== 'Unknown') {
      conditions = conditions.map(c => ({ ...c, status: 'Unknown', reason: 'NodeStatusUnknown', message: 'Kubelet stopped posting node status.', lastTransitionTime: rfc3339(now) }))
      if (conditions.length === 0) conditions = [{ type: 'Ready', status: 'Unknown', reason: 'NodeStatusNeverUpdated', message: 'Kubelet never posted node status.', lastHeartbeatTime: null, lastTransitionTime: rfc3339(now) }]
      await this.c.client.resource(RESOURCES.nodes).patch('', name, { status: { conditions } }, 'status')
      this.c.events.event({ ...node, metadata: { ...node.metadata, namespace: 'default' } }, 'Normal', 'NodeNotReady', `Node ${name} status is now: NodeNotReady`)
    }
    const state = conditions.find(c => c.type === 'Ready')?.status
    const wanted = state === 'Unknown' ? UNREACHABLE_TAINT : state === 'False' ? NOT_READY_TAINT : undefined
    const taints = (node.spec?.taints ?? []) as Obj[]
    const kept = taints.filter(t => (t.key !== NOT_READY_TAINT && t.key !== UNREACHABLE_TAINT) || t.key === wanted)
    let current = kept
    if (wanted !== undefined && !kept.some(t => t.key === wanted && t.effect === 'NoExecute')) {
      current = [...kept, { key: wanted, effect: 'NoExecute', timeAdded: rfc3339(now) }]
      if (!kept.some(t => t.key === wanted && t.effect === 'NoSchedule')) current.push({ key: wanted, effect: 'NoSchedule' })
    } else if (wanted !== undefined && !kept.some(t => t.key === wanted && t.effect === 'NoSchedule')) {
      current = [...kept, { key: wanted, effect: 'NoSchedule' }]
    }
    current = withConditionTaints(current, conditions)
    if (JSON.stringify(current) !== JSON.stringify(taints)) {
      await this.c.client.resource(RESOURCES.nodes).patch('', name, { spec: { taints: current.length > 0 ? current : null } })
    }
    const next = await this.evict(name, current, now)
    const check = silentFor > this.grace ? this.period : Math.min(this.period, this.grace - silentFor + 1)
    return { requeueAfterMs: Math.max(1, Math.min(check, next ?? Infinity)) }
  }

  /** Deletes pods on the node that do not tolerate its NoExecute taints (now, or after their tolerationSeconds). */
  private async evict (nodeName: string, taints: Obj[], now: number): Promise<number | undefined> {
    const noExecute = taints.filter(t => t.effect === 'NoExecute')
    if (noExecute.length === 0) return undefined
    let soonest: number | undefined
    for (const pod of this.pods.list().filter(p => p.spec?.nodeName === nodeName && (p.metadata?.deletionTimestamp ?? null) === null)) {
      let evictAt = -Infinity
      for (const taint of noExecute) {
        const t = tolerationFor(pod, taint)
        const added = Date.parse(String(taint.timeAdded ?? '')) || now
        if (t === undefined) evictAt = Math.max(evictAt, now)
        else if (t.tolerationSeconds !== undefined && t.tolerationSeconds !== null) evictAt = Math.max(evictAt, added + Math.max(0, t.tolerationSeconds) * 1000)
        else evictAt = Infinity
      }
      if (evictAt === Infinity) continue
      if (evictAt <= now) {
        try {
          await this.c.client.resource(RESOURCES.pods).delete(String(pod.metadata.namespace), String(pod.metadata.name))
          this.c.events.event(pod, 'Normal', 'TaintManagerEviction', `Marking for deletion Pod ${String(pod.metadata.namespace)}/${String(pod.metadata.name)}`)
        } catch (err) {
          if ((err as { code?: number }).code !== 404) throw err
        }
      } else {
        soonest = Math.min(soonest ?? Infinity, evictAt - now + 1)
      }
    }
    return soonest
  }
}
