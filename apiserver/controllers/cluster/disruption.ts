// The disruption controller: keeps each PodDisruptionBudget's status (expected, healthy, allowed disruptions) current.

import { QueueController, type ControllerContext, type ReconcileResult } from '../controller.js'
import { RESOURCES, type Obj } from '../client/types.js'
import { keyOf, splitKey, type SharedInformer } from '../informer.js'
import { controllerOf, labelsOf, selectorMatches } from '../labels.js'
import { isPodReady } from '../pods.js'
import { writeStatus } from '../status-patch.js'
import { rfc3339 } from '../../registry/object-meta.js'

/** A disrupted pod the API server let go is expected to be deleted within this time (Kubernetes: 2 minutes). */
const DELETION_TIMEOUT_MS = 2 * 60_000

/** An int-or-percent of `total`, percentages rounded up (as the disruption controller rounds). */
function resolve (v: unknown, total: number): number {
  const s = String(v)
  return s.endsWith('%') ? Math.ceil(Number(s.slice(0, -1)) * total / 100) : Number(s)
}

export class DisruptionController extends QueueController {
  private readonly budgets: SharedInformer
  private readonly pods: SharedInformer
  private readonly owners: Record<string, SharedInformer>

  constructor (c: ControllerContext) {
    super('disruption', c)
    this.budgets = c.informers.informer(RESOURCES.podDisruptionBudgets)
    this.pods = c.informers.informer(RESOURCES.pods)
    this.owners = {
      ReplicaSet: c.informers.informer(RESOURCES.replicaSets),
      StatefulSet: c.informers.informer(RESOURCES.statefulSets),
      ReplicationController: c.informers.informer(RESOURCES.replicationControllers)
    }
  }

  protected watch (): void {
    this.budgets.addEventHandler({ add: b => this.queue.add(keyOf(b)), update: (_o, b) => this.queue.add(keyOf(b)) })
    const onPod = (p: Obj): void => {
      for (const b of this.budgets.list(String(p.metadata?.namespace))) if (selectorMatches(b.spec?.selector, labelsOf(p))) this.queue.add(keyOf(b))
    }
    this.pods.addEventHandler({ add: onPod, update: (_o, p) => onPod(p), delete: onPod })
  }

  /** Pods a budget covers count as expected through their controllers' replicas; a pod without one counts itself. */
  private expectedPods (pods: Obj[]): number {
    const seen = new Map<string, number>()
    let bare = 0
    for (const p of pods) {
      const ref = controllerOf(p)
      const inf = ref === undefined ? undefined : this.owners[ref.kind]
      const owner = inf?.get(`${String(p.metadata.namespace)}/${String(ref!.name)}`)
      if (owner === undefined) { bare++; continue }
      seen.set(String(owner.metadata.uid), owner.spec?.replicas ?? 1)
    }
    return bare + [...seen.values()].reduce((a, b) => a + b, 0)
  }

  async reconcile (key: string): Promise<ReconcileResult | void> {
    const pdb = this.budgets.get(key)
    if (pdb === undefined) return
    const [namespace] = splitKey(key)
    const now = this.c.clock.now()
    const pods = this.pods.list(namespace).filter(p => selectorMatches(pdb.spec?.selector, labelsOf(p)))
    const disrupted: Record<string, string> = {}
    let recheck: number | undefined
    for (const [name, at] of Object.entries((pdb.status?.disruptedPods ?? {}) as Record<string, string>)) {
      const pod = pods.find(p => p.metadata.name === name)
      const expires = Date.parse(at) + DELETION_TIMEOUT_MS
      if (pod === undefined || pod.metadata.deletionTimestamp !== undefined || expires <= now) continue
      disrupted[name] = at
      recheck = Math.min(recheck ?? Infinity, expires - now + 1)
    }
    const healthy = pods.filter(p => p.metadata.deletionTimestamp === undefined && isPodReady(p) && disrupted[String(p.metadata.name)] === undefined).length
    let expected: number
    let desired: number
    if (pdb.spec?.maxUnavailable !== undefined && pdb.spec.maxUnavailable !== null) {
      expected = this.expectedPods(pods)
      desired = Math.max(0, expected - resolve(pdb.spec.maxUnavailable, expected))
    } else {
      const min = pdb.spec?.minAvailable ?? 1
      expected = typeof min === 'string' && min.endsWith('%') ? this.expectedPods(pods) : pods.length
      desired = resolve(min, expected)
    }
    const allowed = Math.max(0, healthy - desired)
    const prior = ((pdb.status?.conditions ?? []) as Obj[]).find(c => c.type === 'DisruptionAllowed')
    const condition = allowed > 0
      ? { type: 'DisruptionAllowed', status: 'True', reason: 'SufficientPods', message: '' }
      : { type: 'DisruptionAllowed', status: 'False', reason: 'InsufficientPods', message: '' }
    const status: Obj = {
      observedGeneration: pdb.metadata?.generation ?? 1,
      disruptionsAllowed: allowed,
      currentHealthy: healthy,
      desiredHealthy: desired,
      expectedPods: expected,
      conditions: [{ ...condition, observedGeneration: pdb.metadata?.generation ?? 1,
        lastTransitionTime: prior?.status === condition.status ? prior.lastTransitionTime : rfc3339(now) }]
    }
    if (Object.keys(disrupted).length > 0) status.disruptedPods = disrupted
    await writeStatus(this.c, RESOURCES.podDisruptionBudgets, pdb, status)
    return recheck === undefined ? undefined : { requeueAfterMs: recheck }
  }
}
