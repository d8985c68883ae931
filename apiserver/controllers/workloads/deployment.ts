// The Deployment controller: one ReplicaSet per template, rolled by RollingUpdate or Recreate, with revisions and the status kubectl rollout reads.

import { QueueController, type ControllerContext, type ReconcileResult } from '../controller.js'
import { RESOURCES, type Obj } from '../client/types.js'
import { keyOf, splitKey, type SharedInformer } from '../informer.js'
import { controllerOf, labelsOf, selectorMatches } from '../labels.js'
import { claimObjects } from './claim.js'
import { DESIRED_REPLICAS, MAX_REPLICAS, REVISION, equalIgnoringHash, newReplicaSet, revisionOf, surgeAndUnavailable, templateHash } from './deployment-util.js'
import { deploymentStatus } from './deployment-status.js'

const replicasOf = (rs: Obj): number => rs.spec?.replicas ?? 0
const byAge = (a: Obj, b: Obj): number => String(a.metadata?.creationTimestamp ?? '').localeCompare(String(b.metadata?.creationTimestamp ?? '')) ||
  String(a.metadata?.name).localeCompare(String(b.metadata?.name))

export class DeploymentController extends QueueController {
  private readonly deployments: SharedInformer
  private readonly replicaSets: SharedInformer
  private readonly pods: SharedInformer

  constructor (c: ControllerContext) {
    super('deployment', c)
    this.deployments = c.informers.informer(RESOURCES.deployments)
    this.replicaSets = c.informers.informer(RESOURCES.replicaSets)
    this.pods = c.informers.informer(RESOURCES.pods)
  }

  protected watch (): void {
    this.deployments.addEventHandler({ add: d => this.queue.add(keyOf(d)), update: (_o, d) => this.queue.add(keyOf(d)), delete: d => this.queue.add(keyOf(d)) })
    const onRs = (rs: Obj): void => {
      const ref = controllerOf(rs)
      if (ref !== undefined) { if (ref.kind === 'Deployment') this.queue.add(`${String(rs.metadata.namespace)}/${String(ref.name)}`); return }
      for (const d of this.deployments.list(String(rs.metadata.namespace))) if (selectorMatches(d.spec?.selector, labelsOf(rs))) this.queue.add(keyOf(d))
    }
    this.replicaSets.addEventHandler({ add: onRs, update: (_o, rs) => onRs(rs), delete: onRs })
    // Recreate waits for the old pods to be gone.
    this.pods.addEventHandler({
      delete: p => {
        const ref = controllerOf(p)
        if (ref?.kind !== 'ReplicaSet') return
        const rs = this.replicaSets.get(`${String(p.metadata.namespace)}/${String(ref.name)}`)
        if (rs !== undefined) onRs(rs)
      }
    })
  }

  async reconcile (key: string): Promise<ReconcileResult | void> {
    const d = this.deployments.get(key)
    if (d === undefined) return
    const [namespace] = splitKey(key)
    const selector = d.spec?.selector
    if (selector === undefined || (Object.keys(selector.matchLabels ?? {}).length === 0 && (selector.matchExpressions ?? []).length === 0)) {
      this.c.events.event(d, 'Warning', 'SelectingAll', 'This deployment is selecting all pods. A non-empty selector is required.')
      return
    }
    const all = await claimObjects(this.c.client, RESOURCES.replicaSets, d, 'Deployment', this.replicaSets.list(namespace),
      labels => selectorMatches(selector, labels))
    if (d.metadata?.deletionTimestamp !== undefined) return
    const rs = new RolloutState(d, all.map(r => structuredClone(r)))
    if (d.spec?.paused === true) {
      await this.scale(rs)
    } else if (rs.isScalingEvent()) {
      await this.scale(rs)
    } else if (d.spec?.strategy?.type === 'Recreate') {
      await this.recreate(rs, namespace)
    } else {
      await this.rollingUpdate(rs)
    }
    await this.cleanupHistory(rs)
    return await deploymentStatus(this.c, d, rs.newRS, rs.olds, rs.createdNew)
  }

  // ---- rollout strategies

  private async rollingUpdate (s: RolloutState): Promise<void> {
    const d = s.d
    const replicas = d.spec.replicas ?? 1
    const [surge, maxUnavailable] = surgeAndUnavailable(d)
    const current = s.all().reduce((n, r) => n + replicasOf(r), 0)
    const newRS = await this.ensureNewRS(s, () => {
      const room = Math.max(0, replicas + surge - current)
      return Math.min(room, replicas)
    })
    // Scale up the new ReplicaSet within maxSurge.
    if (replicasOf(newRS) > replicas) { await this.scaleTo(s, newRS, replicas); return }
    if (replicasOf(newRS) < replicas) {
      const total = s.all().reduce((n, r) => n + replicasOf(r), 0)
      const up = Math.min(replicas + surge - total, replicas - replicasOf(newRS))
      if (up > 0) { await this.scaleTo(s, newRS, replicasOf(newRS) + up); return }
    }
    // Scale down old ReplicaSets within maxUnavailable: unhealthy replicas first, then available ones.
    const olds = s.olds.filter(r => replicasOf(r) > 0).sort(byAge)
    if (olds.length === 0) return
    const allPods = s.all().reduce((n, r) => n + replicasOf(r), 0)
    const minAvailable = replicas - maxUnavailable
    const newUnavailable = replicasOf(newRS) - (newRS.status?.availableReplicas ?? 0)
    const maxCleanup = allPods - minAvailable - newUnavailable
    if (maxCleanup <= 0) return
    let cleaned = 0
    for (const r of olds) {
      if (cleaned >= maxCleanup) break
      const unhealthy = replicasOf(r) - (r.status?.availableReplicas ?? 0)
      if (unhealthy <= 0) continue
      const n = Math.min(maxCleanup - cleaned, unhealthy)
      await this.scaleTo(s, r, replicasOf(r) - n)
      cleaned += n
    }
    const available = s.all().reduce((n, r) => n + Math.min(replicasOf(r), r.status?.availableReplicas ?? 0), 0)
    let down = available - minAvailable
    for (const r of olds) {
      if (down <= 0) break
      if (replicasOf(r) === 0) continue
      const n = Math.min(replicasOf(r), down)
      await this.scaleTo(s, r, replicasOf(r) - n)
      down -= n
    }
  }

  private async recreate (s: RolloutState, namespace: string): Promise<void> {
    let scaled = false
    for (const r of s.olds) if (replicasOf(r) > 0) { await this.scaleTo(s, r, 0); scaled = true }
    if (scaled) return
    const oldUids = new Set(s.olds.map(r => r.metadata.uid))
    const oldPodsRunning = this.pods.list(namespace).some(p => {
      const ref = controllerOf(p)
      return ref !== undefined && oldUids.has(ref.uid) && p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed'
    })
    if (oldPodsRunning) return
    const newRS = await this.ensureNewRS(s, () => s.d.spec.replicas ?? 1)
    if (replicasOf(newRS) !== (s.d.spec.replicas ?? 1)) await this.scaleTo(s, newRS, s.d.spec.replicas ?? 1)
  }

  /** Scaling without a template change (or while paused): active ReplicaSets follow `spec.replicas` in proportion. */
  private async scale (s: RolloutState): Promise<void> {
    const d = s.d
    const replicas = d.spec.replicas ?? 1
    const active = s.all().filter(r => replicasOf(r) > 0)
    const newRS = s.newRS
    if (active.length === 0 && newRS !== undefined) { await this.scaleTo(s, newRS, replicas); return }
    if (active.length === 1) { await this.scaleTo(s, active[0], replicas); return }
    if (newRS !== undefined && replicasOf(newRS) === replicas && (newRS.status?.availableReplicas ?? 0) >= replicas) {
      for (const r of s.olds) if (replicasOf(r) > 0) await this.scaleTo(s, r, 0)
      return
    }
    if (active.length === 0) return
    const [surge] = surgeAndUnavailable(d)
    const allowed = replicas + (d.spec?.paused === true ? 0 : surge)
    const total = active.reduce((n, r) => n + replicasOf(r), 0)
    let toAdd = allowed - total
    if (toAdd === 0) { for (const r of active) await this.scaleTo(s, r, replicasOf(r)); return }
    // Larger ReplicaSets take the larger share; the rest goes to the largest (newest on ties).
    const sorted = [...active].sort((a, b) => replicasOf(b) - replicasOf(a) || byAge(b, a))
    const shares = sorted.map(r => Math.trunc(replicasOf(r) * toAdd / total))
    let rest = toAdd - shares.reduce((a, b) => a + b, 0)
    for (let i = 0; i < sorted.length; i++) {
      let target = replicasOf(sorted[i]) + shares[i] + (i === 0 ? rest : 0)
      if (target < 0) { rest = target; target = 0 } else rest = 0
      toAdd -= target - replicasOf(sorted[i])
      await this.scaleTo(s, sorted[i], target)
    }
  }

  // ---- ReplicaSet writes

  /** The ReplicaSet of the current template, created (or its revision raised) as needed. */
  private async ensureNewRS (s: RolloutState, initialReplicas: () => number): Promise<Obj> {
    const d = s.d
    const maxOld = Math.max(0, ...s.olds.map(revisionOf))
    const revision = maxOld + 1
    const rsClient = this.c.client.resource(RESOURCES.replicaSets)
    const namespace = String(d.metadata.namespace)
    if (s.newRS !== undefined) {
      const r = s.newRS
      const ann = (r.metadata.annotations ??= {})
      let changed = false
      if (revisionOf(r) < revision) { ann[REVISION] = String(revision); changed = true }
      if ((r.spec.minReadySeconds ?? 0) !== (d.spec.minReadySeconds ?? 0)) { r.spec.minReadySeconds = d.spec.minReadySeconds ?? 0; changed = true }
      if (changed) s.replace(await rsClient.update(namespace, r))
      await this.setDeploymentRevision(d, revisionOf(s.newRS!))
      return s.newRS!
    }
    let collisions = d.status?.collisionCount ?? 0
    for (;;) {
      const hash = templateHash(d.spec.template, collisions === 0 ? undefined : collisions)
      const created = newReplicaSet(d, hash, revision, initialReplicas())
      try {
        const r = await rsClient.create(namespace, created)
        s.setNew(r)
        this.c.events.event(d, 'Normal', 'ScalingReplicaSet', `Scaled up replica set ${String(r.metadata.name)} to ${replicasOf(r)}`)
        await this.setDeploymentRevision(d, revision)
        return r
      } catch (err) {
        if ((err as { code?: number }).code !== 409) throw err
        const existing = await rsClient.get(namespace, String(created.metadata.name))
        if (existing !== undefined && controllerOf(existing)?.uid === d.metadata.uid && equalIgnoringHash(existing.spec.template, d.spec.template)) {
          s.setNew(existing)
          return existing
        }
        // A hash collision with another template: count it and hash again, as Kubernetes does.
        collisions++
        await this.c.client.resource(RESOURCES.deployments).patch(namespace, String(d.metadata.name), { status: { collisionCount: collisions } }, 'status')
      }
    }
  }

  private async setDeploymentRevision (d: Obj, revision: number): Promise<void> {
    if (d.metadata?.annotations?.[REVISION] === String(revision)) return
    await this.c.client.resource(RESOURCES.deployments).patch(String(d.metadata.namespace), String(d.metadata.name),
      { metadata: { annotations: { [REVISION]: String(revision) } } })
  }

  /** Sets a ReplicaSet's replicas and its desired/max annotations; records the scaling event. */
  private async scaleTo (s: RolloutState, rs: Obj, replicas: number): Promise<void> {
    const d = s.d
    const [surge] = surgeAndUnavailable(d)
    const desired = String(d.spec.replicas ?? 1)
    const max = String((d.spec.replicas ?? 1) + surge)
    const ann = rs.metadata.annotations ?? {}
    const before = replicasOf(rs)
    if (before === replicas && ann[DESIRED_REPLICAS] === desired && ann[MAX_REPLICAS] === max) return
    const next = { ...rs, metadata: { ...rs.metadata, annotations: { ...ann, [DESIRED_REPLICAS]: desired, [MAX_REPLICAS]: max } }, spec: { ...rs.spec, replicas } }
    s.replace(await this.c.client.resource(RESOURCES.replicaSets).update(String(rs.metadata.namespace), next))
    if (before !== replicas) {
      const verb = replicas > before ? 'up' : 'down'
      this.c.events.event(d, 'Normal', 'ScalingReplicaSet', `Scaled ${verb} replica set ${String(rs.metadata.name)} to ${replicas} from ${before}`)
    }
  }

  /** Deletes the oldest inactive ReplicaSets beyond `revisionHistoryLimit` (default 10). */
  private async cleanupHistory (s: RolloutState): Promise<void> {
    const limit = s.d.spec?.revisionHistoryLimit ?? 10
    const idle = s.olds.filter(r => replicasOf(r) === 0 && (r.status?.replicas ?? 0) === 0 && r.metadata?.deletionTimestamp === undefined)
      .sort((a, b) => revisionOf(a) - revisionOf(b) || byAge(a, b))
    const excess = idle.length - limit
    for (const r of idle.slice(0, Math.max(0, excess))) {
      try {
        await this.c.client.resource(RESOURCES.replicaSets).delete(String(r.metadata.namespace), String(r.metadata.name))
      } catch (err) {
        if ((err as { code?: number }).code !== 404) throw err
      }
    }
  }
}

/** The ReplicaSets of one Deployment during one reconcile, kept current as they are written. */
class RolloutState {
  newRS?: Obj
  olds: Obj[]
  createdNew = false

  constructor (readonly d: Obj, all: Obj[]) {
    // The oldest ReplicaSet with the current template is the new one (duplicates are treated as old).
    const matching = all.filter(r => equalIgnoringHash(r.spec?.template, d.spec?.template)).sort(byAge)
    this.newRS = matching[0]
    this.olds = all.filter(r => r !== this.newRS)
  }

  all (): Obj[] { return this.newRS === undefined ? [...this.olds] : [this.newRS, ...this.olds] }

  setNew (rs: Obj): void { this.newRS = rs; this.createdNew = true }

  replace (rs: Obj): void {
    if (this.newRS?.metadata.uid === rs.metadata.uid) { this.newRS = rs; return }
    this.olds = this.olds.map(r => (r.metadata.uid === rs.metadata.uid ? rs : r))
  }

  /** Some active ReplicaSet was sized for another `spec.replicas` (its desired-replicas annotation says so). */
  isScalingEvent (): boolean {
    const want = String(this.d.spec?.replicas ?? 1)
    return this.all().some(r => replicasOf(r) > 0 && r.metadata?.annotations?.[DESIRED_REPLICAS] !== undefined &&
      r.metadata.annotations[DESIRED_REPLICAS] !== want)
  }
}
