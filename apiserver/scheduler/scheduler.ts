// The scheduler: places each pending pod of `default-scheduler` on a feasible node and binds it through pods/binding.

import type { ControllerContext } from '../controllers/controller.js'
import { RESOURCES, type Obj } from '../controllers/client/types.js'
import { keyOf, type SharedInformer } from '../controllers/informer.js'
import { isPodActive } from '../controllers/pods.js'
import { filterNode, fitErrorMessage, type CycleState } from './filters.js'
import { NodeInfo } from './node-info.js'
import { scoreNodes } from './scores.js'
import { findPreemption, type Preemption } from './preemption.js'
import { rfc3339 } from '../registry/object-meta.js'
import type { SchedulerMetrics } from '../metrics/scheduler-metrics.js'

export const DEFAULT_SCHEDULER = 'default-scheduler'

export interface SchedulerOptions {
  schedulerName?: string
  /** First retry delay of an unschedulable pod, doubled per attempt (kube-scheduler: 1 s, at most 10 s). */
  initialBackoffMs?: number
  maxBackoffMs?: number
  /** Unschedulable pods are retried at least this often even without a cluster change (kube-scheduler: 5 min). */
  unschedulableFlushMs?: number
  /** The scheduler's metrics (attempts, their latency, pending pods); none without. */
  metrics?: SchedulerMetrics
}

interface Queued { key: string, priority: number, since: number }


export class Scheduler {
  readonly name: string
  private readonly pods: SharedInformer
  private readonly nodes: SharedInformer
  private readonly infos = new Map<string, NodeInfo>()
  /** Pod key -> node of every pod counted on a node (bound, or assumed while its binding is in flight). */
  private readonly placed = new Map<string, string>()
  private readonly assumed = new Set<string>()
  private active: Queued[] = []
  private readonly queuedKeys = new Set<string>()
  private readonly unschedulable = new Map<string, number>()
  private readonly attempts = new Map<string, number>()
  private readonly gated = new Set<string>()
  private wake?: () => void
  private running = false
  private flushTimer?: { cancel(): void }
  private next = 0

  constructor (private readonly c: ControllerContext, private readonly o: SchedulerOptions = {}) {
    this.name = o.schedulerName ?? DEFAULT_SCHEDULER
    this.pods = c.informers.informer(RESOURCES.pods)
    this.nodes = c.informers.informer(RESOURCES.nodes)
    o.metrics?.readPending(() => ({ active: this.active.length, backoff: 0, unschedulable: this.unschedulable.size, gated: this.gated.size }))
  }

  private attempted (result: 'scheduled' | 'unschedulable' | 'error', startMs: number): void {
    this.o.metrics?.attempt(this.name, result, (performance.now() - startMs) / 1000)
  }

  start (): void {
    this.nodes.addEventHandler({
      add: n => { this.info(n.metadata.name).setNode(n); this.retryUnschedulable() },
      update: (_o, n) => { this.info(n.metadata.name).setNode(n); this.retryUnschedulable() },
      delete: n => { this.infos.delete(n.metadata.name) }
    })
    this.pods.addEventHandler({
      add: p => this.onPod(p),
      update: (_o, p) => this.onPod(p),
      delete: p => { this.unplace(keyOf(p)); this.dequeue(keyOf(p)); this.retryUnschedulable() }
    })
    this.running = true
    this.scheduleFlush()
    void this.loop()
  }

  stop (): void {
    this.running = false
    this.flushTimer?.cancel()
    this.wake?.()
  }

  private info (name: string): NodeInfo {
    let i = this.infos.get(name)
    if (i === undefined) { i = new NodeInfo(name); this.infos.set(name, i) }
    return i
  }

  private onPod (pod: Obj): void {
    const key = keyOf(pod)
    const node = pod.spec?.nodeName ?? ''
    if (node !== '') {
      this.dequeue(key)
      this.assumed.delete(key)
      if (isPodActive(pod) || (pod.status?.phase !== 'Succeeded' && pod.status?.phase !== 'Failed')) this.place(key, node, pod)
      else { this.unplace(key); this.retryUnschedulable() }
      return
    }
    if (this.assumed.has(key)) return
    if (!isPodActive(pod) || (pod.spec?.schedulerName ?? DEFAULT_SCHEDULER) !== this.name) { this.dequeue(key); return }
    if (((pod.spec?.schedulingGates ?? []) as Obj[]).length > 0) { this.gated.add(key); void this.markGated(pod); return }
    this.gated.delete(key)
    if (!this.unschedulable.has(key)) this.enqueue(key, pod)
  }

  private place (key: string, node: string, pod: Obj): void {
    const before = this.placed.get(key)
    if (before !== undefined && before !== node) this.infos.get(before)?.removePod(key)
    this.placed.set(key, node)
    this.info(node).addPod(key, pod)
  }

  private unplace (key: string): void {
    const node = this.placed.get(key)
    if (node === undefined) return
    this.placed.delete(key)
    this.assumed.delete(key)
    this.infos.get(node)?.removePod(key)
  }

  private enqueue (key: string, pod: Obj): void {
    if (this.queuedKeys.has(key)) return
    this.queuedKeys.add(key)
    const item = { key, priority: Number(pod.spec?.priority ?? 0), since: Date.parse(String(pod.metadata?.creationTimestamp ?? '')) || 0 }
    // Higher priority first, then older pods: a sorted insert keeps the head the next pod to try.
    let i = this.active.length
    while (i > 0 && (this.active[i - 1].priority < item.priority || (this.active[i - 1].priority === item.priority && this.active[i - 1].since > item.since))) i--
    this.active.splice(i, 0, item)
    this.wake?.()
  }

  private dequeue (key: string): void {
    this.gated.delete(key)
    this.unschedulable.delete(key)
    this.attempts.delete(key)
    if (!this.queuedKeys.delete(key)) return
    this.active = this.active.filter(q => q.key !== key)
  }

  /** A cluster change may have made room: move unschedulable pods whose back-off has passed to the active queue. */
  private retryUnschedulable (): void {
    const now = this.c.clock.now()
    for (const [key, notBefore] of this.unschedulable) {
      const pod = this.pods.get(key)
      if (pod === undefined) { this.unschedulable.delete(key); continue }
      if (notBefore > now) { this.c.clock.after(notBefore - now, () => this.retryOne(key)); continue }
      this.unschedulable.delete(key)
      this.enqueue(key, pod)
    }
  }

  private retryOne (key: string): void {
    const pod = this.pods.get(key)
    if (pod === undefined || !this.unschedulable.has(key)) return
    this.unschedulable.delete(key)
    this.enqueue(key, pod)
  }

  private scheduleFlush (): void {
    const every = this.o.unschedulableFlushMs ?? 60_000
    this.flushTimer = this.c.clock.after(every, () => {
      if (!this.running) return
      for (const key of [...this.unschedulable.keys()]) this.retryOne(key)
      this.scheduleFlush()
    })
  }

  private async loop (): Promise<void> {
    await this.c.informers.waitForSync()
    while (this.running) {
      const item = this.active.shift()
      if (item === undefined) {
        await new Promise<void>(resolve => { this.wake = resolve })
        this.wake = undefined
        continue
      }
      this.queuedKeys.delete(item.key)
      const pod = this.pods.get(item.key)
      if (pod === undefined || (pod.spec?.nodeName ?? '') !== '' || !isPodActive(pod)) continue
      const start = performance.now()
      try {
        this.scheduleOne(item.key, pod, start)
      } catch (err) {
        this.attempted('error', start)
        this.c.logger.warn({ err, pod: item.key }, 'scheduling failed')
      }
      // Let informer events and bindings in flight progress between cycles.
      if (this.active.length % 16 === 0) await new Promise(resolve => setImmediate(resolve))
    }
  }

  /** One scheduling cycle: filter, score, assume, bind in the background. */
  scheduleOne (key: string, pod: Obj, start = performance.now()): string | undefined {
    const all = [...this.infos.values()].filter(n => n.node !== undefined)
    const state: CycleState = { nodes: all }
    const feasible: NodeInfo[] = []
    const reasons = new Map<string, number>()
    for (const n of all) {
      const why = filterNode(pod, n, state)
      if (why.length === 0) feasible.push(n)
      for (const r of why) reasons.set(r, (reasons.get(r) ?? 0) + 1)
    }
    if (feasible.length === 0) {
      this.attempted('unschedulable', start)
      void this.recordUnschedulable(key, pod, fitErrorMessage(all.length, reasons))
      const plan = findPreemption(pod, all)
      if (plan !== undefined) void this.preempt(pod, plan)
      return undefined
    }
    const scores = scoreNodes(pod, feasible)
    const best = Math.max(...scores)
    const top = feasible.filter((_, i) => scores[i] === best)
    const chosen = top[this.next++ % top.length]
    this.assumed.add(key)
    this.place(key, chosen.name, pod)
    void this.bind(key, pod, chosen.name, start)
    return chosen.name
  }

  private async bind (key: string, pod: Obj, node: string, start: number): Promise<void> {
    const ns = String(pod.metadata.namespace)
    const name = String(pod.metadata.name)
    try {
      await this.c.client.resource(RESOURCES.pods).createSubresource(ns, name, 'binding', {
        apiVersion: 'v1', kind: 'Binding', metadata: { name, namespace: ns, uid: pod.metadata.uid }, target: { apiVersion: 'v1', kind: 'Node', name: node }
      })
      this.attempted('scheduled', start)
      this.o.metrics?.scheduled((this.attempts.get(key) ?? 0) + 1)
      this.attempts.delete(key)
      this.c.events.event(pod, 'Normal', 'Scheduled', `Successfully assigned ${ns}/${name} to ${node}`)
    } catch (err) {
      this.assumed.delete(key)
      this.unplace(key)
      this.attempted('error', start)
      const code = (err as { code?: number }).code
      if (code === 404) return
      this.c.logger.debug({ err, pod: key }, 'binding failed; retrying')
      const fresh = this.pods.get(key)
      if (fresh !== undefined && (fresh.spec?.nodeName ?? '') === '') this.backOff(key)
    }
  }

  /** Nominates the node and deletes the victims; the pod is tried again as they go. */
  private async preempt (pod: Obj, plan: Preemption): Promise<void> {
    const ns = String(pod.metadata.namespace)
    const name = String(pod.metadata.name)
    const pods = this.c.client.resource(RESOURCES.pods)
    try {
      await pods.patch(ns, name, { status: { nominatedNodeName: plan.node } }, 'status')
      for (const v of plan.victims) {
        const conditions = [...((v.status?.conditions ?? []) as Obj[]).filter(c => c.type !== 'DisruptionTarget'),
          { type: 'DisruptionTarget', status: 'True', reason: 'PreemptionByScheduler', message: `${this.name}: preempting to accommodate a higher priority pod`, lastTransitionTime: rfc3339(this.c.clock.now()) }]
        await pods.patch(String(v.metadata.namespace), String(v.metadata.name), { status: { conditions } }, 'status').catch(() => {})
        await pods.delete(String(v.metadata.namespace), String(v.metadata.name))
        this.c.events.event(v, 'Normal', 'Preempted', `Preempted by pod ${String(pod.metadata.uid)} on node ${plan.node}`)
      }
    } catch (err) {
      if ((err as { code?: number }).code !== 404) this.c.logger.warn({ err, pod: `${ns}/${name}` }, 'preemption failed')
    }
  }

  private backOff (key: string): void {
    const n = this.attempts.get(key) ?? 0
    this.attempts.set(key, n + 1)
    const delay = Math.min(this.o.maxBackoffMs ?? 10_000, (this.o.initialBackoffMs ?? 1_000) * 2 ** n)
    this.unschedulable.set(key, this.c.clock.now() + delay)
    this.c.clock.after(delay, () => this.retryOne(key))
  }

  private async recordUnschedulable (key: string, pod: Obj, message: string): Promise<void> {
    this.backOff(key)
    this.c.events.event(pod, 'Warning', 'FailedScheduling', message)
    await this.setScheduledCondition(pod, { type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message })
  }

  private async markGated (pod: Obj): Promise<void> {
    await this.setScheduledCondition(pod, { type: 'PodScheduled', status: 'False', reason: 'SchedulingGated', message: 'Scheduling is blocked due to non-empty scheduling gates' })
  }

  private async setScheduledCondition (pod: Obj, condition: Obj): Promise<void> {
    const conditions = (pod.status?.conditions ?? []) as Obj[]
    const prior = conditions.find(c => c.type === 'PodScheduled')
    if (prior?.status === condition.status && prior?.reason === condition.reason && prior?.message === condition.message) return
    const next = [...conditions.filter(c => c.type !== 'PodScheduled'),
      { ...condition, lastProbeTime: null, lastTransitionTime: prior !== undefined && prior.status === condition.status ? prior.lastTransitionTime : rfc3339(this.c.clock.now()) }]
    try {
      await this.c.client.resource(RESOURCES.pods).patch(String(pod.metadata.namespace), String(pod.metadata.name), { status: { conditions: next } }, 'status')
    } catch (err) {
      this.c.logger.debug({ err }, 'pod condition not written')
    }
  }
}
