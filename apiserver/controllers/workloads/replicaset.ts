// The ReplicaSet (and ReplicationController) controller: keeps `spec.replicas` active pods matching the selector, and reports status.

import { QueueController, type ControllerContext, type ReconcileResult } from '../controller.js'
import { RESOURCES, type Obj, type Resource } from '../client/types.js'
import { Expectations } from '../expectations.js'
import { keyOf, splitKey, type SharedInformer } from '../informer.js'
import { controllerOf, labelsOf, mapSelectorMatches, selectorMatches } from '../labels.js'
import { deletionOrder, isPodActive, isPodAvailable, isPodReady, msUntilAvailable, podFromTemplate } from '../pods.js'
import { claimPods } from './claim.js'
import { writeStatus } from '../status-patch.js'

/** What differs between ReplicaSets and ReplicationControllers. */
export interface ReplicatedKind {
  resource: Resource
  kind: string
  apiVersion: string
  matches(owner: Obj, labels: Record<string, string>): boolean
}

export const REPLICA_SET: ReplicatedKind = {
  resource: RESOURCES.replicaSets, kind: 'ReplicaSet', apiVersion: 'apps/v1',
  matches: (rs, labels) => selectorMatches(rs.spec?.selector, labels)
}

export const REPLICATION_CONTROLLER: ReplicatedKind = {
  resource: RESOURCES.replicationControllers, kind: 'ReplicationController', apiVersion: 'v1',
  matches: (rc, labels) => mapSelectorMatches(rc.spec?.selector ?? rc.spec?.template?.metadata?.labels, labels)
}

/** Most pods created or deleted in one pass (kube-controller-manager's burstReplicas). */
const BURST = 500

export class ReplicaSetController extends QueueController {
  private readonly owners: SharedInformer
  private readonly pods: SharedInformer
  readonly expectations: Expectations

  constructor (c: ControllerContext, private readonly k: ReplicatedKind = REPLICA_SET) {
    super(k === REPLICA_SET ? 'replicaset' : 'replicationcontroller', c)
    this.owners = c.informers.informer(k.resource)
    this.pods = c.informers.informer(RESOURCES.pods)
    this.expectations = new Expectations(() => c.clock.now())
  }

  protected watch (): void {
    this.owners.addEventHandler({
      add: o => this.queue.add(keyOf(o)),
      update: (_old, o) => this.queue.add(keyOf(o)),
      delete: o => { this.expectations.forget(keyOf(o)); this.queue.add(keyOf(o)) }
    })
    this.pods.addEventHandler({
      add: p => {
        const owner = this.ownerKey(p)
        if (owner !== undefined) { this.expectations.creationObserved(owner); this.queue.add(owner) } else this.enqueueMatching(p)
      },
      update: (old, p) => {
        const owner = this.ownerKey(p)
        const before = this.ownerKey(old)
        if (before !== undefined && before !== owner) this.queue.add(before)
        if (owner !== undefined) this.queue.add(owner)
        else if (JSON.stringify(labelsOf(old)) !== JSON.stringify(labelsOf(p))) this.enqueueMatching(p)
        if (owner === undefined) this.enqueueMatching(p)
        if (p.metadata?.deletionTimestamp !== undefined && old.metadata?.deletionTimestamp === undefined && owner !== undefined) {
          this.expectations.deletionObserved(owner, keyOf(p))
        }
      },
      delete: p => {
        const owner = this.ownerKey(p)
        if (owner === undefined) return
        this.expectations.deletionObserved(owner, keyOf(p))
        this.queue.add(owner)
      }
    })
  }

  private ownerKey (pod: Obj): string | undefined {
    const ref = controllerOf(pod)
    if (ref === undefined || ref.kind !== this.k.kind) return undefined
    const key = `${String(pod.metadata?.namespace)}/${String(ref.name)}`
    const owner = this.owners.get(key)
    return owner !== undefined && owner.metadata?.uid === ref.uid ? key : undefined
  }

  private enqueueMatching (pod: Obj): void {
    for (const o of this.owners.list(String(pod.metadata?.namespace))) {
      if (this.k.matches(o, labelsOf(pod))) this.queue.add(keyOf(o))
    }
  }

  async reconcile (key: string): Promise<ReconcileResult | void> {
    const owner = this.owners.get(key)
    if (owner === undefined) { this.expectations.forget(key); return }
    const [namespace] = splitKey(key)
    const pods = await claimPods(this.c.client, owner, this.k.kind, this.pods.list(namespace), labels => this.k.matches(owner, labels))
    const active = pods.filter(isPodActive)
    let createError: Error | undefined
    if (this.expectations.satisfied(key) && owner.metadata?.deletionTimestamp === undefined) {
      createError = await this.manageReplicas(key, owner, active)
    }
    return await this.updateStatus(owner, pods, active, createError)
  }

  private async manageReplicas (key: string, owner: Obj, active: Obj[]): Promise<Error | undefined> {
    const wanted = owner.spec?.replicas ?? 1
    const diff = active.length - wanted
    const pods = this.c.client.resource(RESOURCES.pods)
    const namespace = String(owner.metadata.namespace)
    if (diff < 0) {
      const n = Math.min(-diff, BURST)
      this.expectations.expectCreations(key, n)
      const ref = { apiVersion: this.k.apiVersion, kind: this.k.kind, name: owner.metadata.name, uid: owner.metadata.uid }
      // Slow start: batches of 1, 2, 4, ... so a failing template costs one error, not hundreds.
      let created = 0
      for (let batch = 1; created < n; batch *= 2) {
        const size = Math.min(batch, n - created)
        const results = await Promise.allSettled(Array.from({ length: size }, async () =>
          await pods.create(namespace, podFromTemplate(owner.spec.template, namespace, `${String(owner.metadata.name)}-`, ref))))
        created += size
        const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected')
        for (const r of results) if (r.status === 'fulfilled') this.c.events.event(owner, 'Normal', 'SuccessfulCreate', `Created pod: ${String(r.value.metadata.name)}`)
        if (failed.length > 0) {
          for (let i = 0; i < failed.length + (n - created); i++) this.expectations.creationFailed(key)
          const err = failed[0].reason as Error
          this.c.events.event(owner, 'Warning', 'FailedCreate', `Error creating: ${err.message}`)
          return err
        }
      }
    } else if (diff > 0) {
      const victims = [...active].sort(deletionOrder).slice(0, Math.min(diff, BURST))
      this.expectations.expectDeletions(key, victims.map(keyOf))
      await Promise.all(victims.map(async p => {
        try {
          await pods.delete(namespace, String(p.metadata.name))
          this.c.events.event(owner, 'Normal', 'SuccessfulDelete', `Deleted pod: ${String(p.metadata.name)}`)
        } catch (err) {
          this.expectations.deletionObserved(key, keyOf(p))
          if ((err as { code?: number }).code !== 404) throw err
        }
      }))
    }
    return undefined
  }

  private async updateStatus (owner: Obj, pods: Obj[], active: Obj[], createError: Error | undefined): Promise<ReconcileResult | void> {
    const now = this.c.clock.now()
    const minReady = owner.spec?.minReadySeconds ?? 0
    const templateLabels = (owner.spec?.template?.metadata?.labels ?? {}) as Record<string, string>
    const status: Obj = {
      ...(owner.status ?? {}),
      replicas: active.length,
      fullyLabeledReplicas: active.filter(p => Object.entries(templateLabels).every(([k, v]) => labelsOf(p)[k] === v)).length,
      readyReplicas: active.filter(isPodReady).length,
      availableReplicas: active.filter(p => isPodAvailable(p, minReady, now)).length,
      observedGeneration: owner.metadata?.generation ?? 0
    }
    const conditions = ((owner.status?.conditions ?? []) as Obj[]).filter(c => c.type !== 'ReplicaFailure')
    if (createError !== undefined) {
      conditions.push({ type: 'ReplicaFailure', status: 'True', reason: 'FailedCreate', message: createError.message,
        lastTransitionTime: new Date(now).toISOString().replace(/\.\d{3}Z$/, 'Z') })
    }
    if (conditions.length > 0) status.conditions = conditions
    else delete status.conditions
    for (const k of ['readyReplicas', 'availableReplicas', 'fullyLabeledReplicas'] as const) if (status[k] === 0) delete status[k]
    await writeStatus(this.c, this.k.resource, owner, status)
    const waits = active.map(p => msUntilAvailable(p, minReady, now)).filter((ms): ms is number => ms !== undefined)
    return waits.length > 0 ? { requeueAfterMs: Math.min(...waits) + 1 } : undefined
  }
}
