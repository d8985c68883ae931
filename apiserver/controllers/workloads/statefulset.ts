// The StatefulSet controller: pods with stable names and ordinals, claims from volumeClaimTemplates, OrderedReady or
// Parallel management, and RollingUpdate (with partition) or OnDelete through ControllerRevisions.

import { QueueController, type ControllerContext, type ReconcileResult } from '../controller.js'
import { RESOURCES, type Obj } from '../client/types.js'
import { keyOf, splitKey, type SharedInformer } from '../informer.js'
import { controllerOf, labelsOf, selectorMatches } from '../labels.js'
import { controllerRef, isPodAvailable, isPodReady, podFromTemplate } from '../pods.js'
import { writeStatus } from '../status-patch.js'
import { claimPods } from './claim.js'
import { REVISION_HASH_LABEL, hashOf, syncRevisions, templateOf, truncateHistory } from './revisions.js'

export const POD_NAME_LABEL = 'statefulset.kubernetes.io/pod-name'
export const POD_INDEX_LABEL = 'apps.kubernetes.io/pod-index'

function ordinalOf (sts: Obj, pod: Obj): number | undefined {
  const name = String(pod.metadata?.name ?? '')
  const prefix = `${String(sts.metadata.name)}-`
  if (!name.startsWith(prefix)) return undefined
  const rest = name.slice(prefix.length)
  return /^\d+$/.test(rest) ? Number(rest) : undefined
}

const running = (p: Obj): boolean => p.status?.phase === 'Running' && isPodReady(p) && p.metadata?.deletionTimestamp === undefined

export class StatefulSetController extends QueueController {
  private readonly sets: SharedInformer
  private readonly pods: SharedInformer
  private readonly revisions: SharedInformer

  constructor (c: ControllerContext) {
    super('statefulset', c)
    this.sets = c.informers.informer(RESOURCES.statefulSets)
    this.pods = c.informers.informer(RESOURCES.pods)
    this.revisions = c.informers.informer(RESOURCES.controllerRevisions)
  }

  protected watch (): void {
    this.sets.addEventHandler({ add: s => this.queue.add(keyOf(s)), update: (_o, s) => this.queue.add(keyOf(s)) })
    const onPod = (p: Obj): void => {
      const ref = controllerOf(p)
      if (ref?.kind === 'StatefulSet') this.queue.add(`${String(p.metadata.namespace)}/${String(ref.name)}`)
    }
    this.pods.addEventHandler({ add: onPod, update: (_o, p) => onPod(p), delete: onPod })
  }

  async reconcile (key: string): Promise<ReconcileResult | void> {
    const sts = this.sets.get(key)
    if (sts === undefined) return
    const [namespace] = splitKey(key)
    const pods = await claimPods(this.c.client, sts, 'StatefulSet', this.pods.list(namespace), l => selectorMatches(sts.spec?.selector, l))
    if (sts.metadata?.deletionTimestamp !== undefined) return
    const revs = await syncRevisions(this.c, sts, 'StatefulSet', this.revisions.list(namespace))
    const updateHash = hashOf(revs.update)
    const currentRev = revs.all.find(r => r.metadata.name === sts.status?.currentRevision) ?? revs.update
    const replicas = sts.spec?.replicas ?? 1
    const parallel = sts.spec?.podManagementPolicy === 'Parallel'
    const byOrdinal = new Map<number, Obj>()
    for (const p of pods) { const o = ordinalOf(sts, p); if (o !== undefined) byOrdinal.set(o, p) }
    const start = sts.spec?.ordinals?.start ?? 0
    let blocked = false
    // Failed pods are replaced; missing pods created in order (OrderedReady waits for each to be Running and Ready).
    for (let i = start; i < start + replicas; i++) {
      const pod = byOrdinal.get(i)
      if (pod !== undefined && (pod.status?.phase === 'Failed' || pod.status?.phase === 'Succeeded') && pod.metadata.deletionTimestamp === undefined) {
        await this.deletePod(sts, pod)
        if (!parallel) { blocked = true; break }
        continue
      }
      if (pod === undefined) {
        const rev = i - start < (sts.spec?.updateStrategy?.rollingUpdate?.partition ?? 0) ? currentRev : revs.update
        await this.createPod(sts, i, rev)
        if (!parallel) { blocked = true; break }
        continue
      }
      if (!parallel && !running(pod)) { blocked = true; break }
    }
    // Scale down: highest ordinal first, one at a time unless Parallel.
    if (!blocked) {
      const extra = [...byOrdinal.entries()].filter(([o]) => o < start || o >= start + replicas).sort((a, b) => b[0] - a[0])
      for (const [, p] of extra) {
        if (p.metadata.deletionTimestamp !== undefined) { if (!parallel) { blocked = true; break } continue }
        await this.deletePod(sts, p)
        if (!parallel) { blocked = true; break }
      }
    }
    // RollingUpdate: from the highest ordinal down to the partition, one pod at a time, each Ready before the next.
    if (!blocked && (sts.spec?.updateStrategy?.type ?? 'RollingUpdate') === 'RollingUpdate') {
      const partition = sts.spec?.updateStrategy?.rollingUpdate?.partition ?? 0
      for (let i = start + replicas - 1; i >= start + partition; i--) {
        const p = byOrdinal.get(i)
        if (p === undefined) break
        if (labelsOf(p)[REVISION_HASH_LABEL] !== updateHash) {
          if (p.metadata.deletionTimestamp === undefined) await this.deletePod(sts, p)
          break
        }
        if (!running(p)) break
      }
    }
    await truncateHistory(this.c, sts, revs, new Set(pods.map(p => labelsOf(p)[REVISION_HASH_LABEL])))
    await this.updateStatus(sts, pods, revs.update, currentRev)
  }

  private async createPod (sts: Obj, ordinal: number, rev: Obj): Promise<void> {
    const ns = String(sts.metadata.namespace)
    const name = `${String(sts.metadata.name)}-${ordinal}`
    const template = templateOf(rev)
    const pod = podFromTemplate(template, ns, '', { apiVersion: 'apps/v1', kind: 'StatefulSet', name: sts.metadata.name, uid: sts.metadata.uid },
      { [REVISION_HASH_LABEL]: hashOf(rev), [POD_NAME_LABEL]: name, [POD_INDEX_LABEL]: String(ordinal) })
    delete pod.metadata.generateName
    pod.metadata.name = name
    pod.spec.hostname = name
    if (sts.spec?.serviceName) pod.spec.subdomain = sts.spec.serviceName
    const volumes = [...((pod.spec.volumes ?? []) as Obj[])]
    for (const t of (sts.spec?.volumeClaimTemplates ?? []) as Obj[]) {
      const claim = `${String(t.metadata?.name)}-${name}`
      await this.ensureClaim(sts, t, claim)
      const i = volumes.findIndex(v => v.name === t.metadata?.name)
      const volume = { name: t.metadata?.name, persistentVolumeClaim: { claimName: claim } }
      if (i >= 0) volumes[i] = volume
      else volumes.push(volume)
    }
    if (volumes.length > 0) pod.spec.volumes = volumes
    try {
      await this.c.client.resource(RESOURCES.pods).create(ns, pod)
      this.c.events.event(sts, 'Normal', 'SuccessfulCreate', `create Pod ${name} in StatefulSet ${String(sts.metadata.name)} successful`)
    } catch (err) {
      if ((err as { code?: number }).code === 409) return
      this.c.events.event(sts, 'Warning', 'FailedCreate', `create Pod ${name} in StatefulSet ${String(sts.metadata.name)} failed error: ${(err as Error).message}`)
      throw err
    }
  }

  /** The claim of one pod from a template; kept when the set scales down (the Retain policy). */
  private async ensureClaim (sts: Obj, template: Obj, name: string): Promise<void> {
    const ns = String(sts.metadata.namespace)
    const claims = this.c.client.resource({ group: '', version: 'v1', resource: 'persistentvolumeclaims', namespaced: true })
    if (await claims.get(ns, name) !== undefined) return
    const claim: Obj = {
      apiVersion: 'v1', kind: 'PersistentVolumeClaim',
      metadata: { name, namespace: ns, labels: { ...(template.metadata?.labels ?? {}), ...(sts.spec?.selector?.matchLabels ?? {}) }, annotations: template.metadata?.annotations },
      spec: structuredClone(template.spec ?? {})
    }
    if (sts.spec?.persistentVolumeClaimRetentionPolicy?.whenDeleted === 'Delete') {
      claim.metadata.ownerReferences = [{ ...controllerRef({ apiVersion: 'apps/v1', kind: 'StatefulSet', name: sts.metadata.name, uid: sts.metadata.uid }), controller: false }]
    }
    try {
      await claims.create(ns, claim)
      this.c.events.event(sts, 'Normal', 'SuccessfulCreate', `create Claim ${name} for Pod ${name.slice(String(template.metadata?.name).length + 1)} in StatefulSet ${String(sts.metadata.name)} success`)
    } catch (err) { if ((err as { code?: number }).code !== 409) throw err }
  }

  private async deletePod (sts: Obj, pod: Obj): Promise<void> {
    try {
      await this.c.client.resource(RESOURCES.pods).delete(String(pod.metadata.namespace), String(pod.metadata.name))
      this.c.events.event(sts, 'Normal', 'SuccessfulDelete', `delete Pod ${String(pod.metadata.name)} in StatefulSet ${String(sts.metadata.name)} successful`)
    } catch (err) { if ((err as { code?: number }).code !== 404) throw err }
  }

  private async updateStatus (sts: Obj, pods: Obj[], update: Obj, current: Obj): Promise<void> {
    const now = this.c.clock.now()
    const live = pods.filter(p => p.metadata.deletionTimestamp === undefined)
    const updateHash = hashOf(update)
    const updated = live.filter(p => labelsOf(p)[REVISION_HASH_LABEL] === updateHash).length
    const replicas = sts.spec?.replicas ?? 1
    // Once every pod runs the update revision, it becomes the current one.
    const done = updated === replicas && live.length === replicas && live.every(running)
    const currentName = done ? update.metadata.name : current.metadata.name
    const status: Obj = {
      observedGeneration: sts.metadata?.generation ?? 1,
      replicas: live.length,
      readyReplicas: live.filter(isPodReady).length,
      currentReplicas: live.filter(p => labelsOf(p)[REVISION_HASH_LABEL] === (done ? updateHash : hashOf(current))).length,
      updatedReplicas: updated,
      currentRevision: currentName,
      updateRevision: update.metadata.name,
      availableReplicas: live.filter(p => isPodAvailable(p, sts.spec?.minReadySeconds ?? 0, now)).length,
      collisionCount: sts.status?.collisionCount ?? 0
    }
    for (const k of ['readyReplicas', 'currentReplicas', 'updatedReplicas'] as const) if (status[k] === 0) delete status[k]
    await writeStatus(this.c, RESOURCES.statefulSets, sts, status)
  }
}
