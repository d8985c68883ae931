// A Deployment's status: replica counts over its ReplicaSets and the Available and Progressing conditions kubectl rollout reads.

import type { ControllerContext, ReconcileResult } from '../controller.js'
import { RESOURCES, type Obj } from '../client/types.js'
import { condition, surgeAndUnavailable } from './deployment-util.js'
import { writeStatus } from '../status-patch.js'
import { rfc3339 } from '../../registry/object-meta.js'

const sum = (rs: Obj[], f: (r: Obj) => number): number => rs.reduce((n, r) => n + f(r), 0)

/** Sets a condition, keeping lastTransitionTime when the status did not change. */
function setCondition (conditions: Obj[], next: Obj, now: string): Obj[] {
  const prior = conditions.find(c => c.type === next.type)
  if (prior !== undefined && prior.status === next.status && prior.reason === next.reason && prior.message === next.message) return conditions
  const lastTransitionTime = prior !== undefined && prior.status === next.status ? prior.lastTransitionTime : now
  return [...conditions.filter(c => c.type !== next.type), { ...next, lastUpdateTime: now, lastTransitionTime }]
}

/** Computes and writes the status; asks to be called again when the progress deadline is due. */
export async function deploymentStatus (c: ControllerContext, d: Obj, newRS: Obj | undefined, olds: Obj[], createdNew: boolean): Promise<ReconcileResult | void> {
  const all = newRS === undefined ? olds : [newRS, ...olds]
  const nowMs = c.clock.now()
  const now = rfc3339(nowMs)
  const replicas = d.spec?.replicas ?? 1
  const [, maxUnavailable] = surgeAndUnavailable(d)
  const available = sum(all, r => r.status?.availableReplicas ?? 0)
  const total = sum(all, r => r.spec?.replicas ?? 0)
  const status: Obj = {
    observedGeneration: d.metadata?.generation ?? 0,
    replicas: sum(all, r => r.status?.replicas ?? 0),
    updatedReplicas: newRS?.status?.replicas ?? 0,
    readyReplicas: sum(all, r => r.status?.readyReplicas ?? 0),
    availableReplicas: available,
    unavailableReplicas: Math.max(0, total - available)
  }
  if (d.status?.collisionCount !== undefined) status.collisionCount = d.status.collisionCount
  let conditions = (d.status?.conditions ?? []) as Obj[]
  conditions = setCondition(conditions, available >= replicas - maxUnavailable
    ? { type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable', message: 'Deployment has minimum availability.' }
    : { type: 'Available', status: 'False', reason: 'MinimumReplicasUnavailable', message: 'Deployment does not have minimum availability.' }, now)

  let requeue: number | undefined
  const deadline = d.spec?.progressDeadlineSeconds ?? 600
  const progressing = condition(d, 'Progressing')
  const name = String(newRS?.metadata?.name ?? '')
  if (d.spec?.paused === true) {
    conditions = setCondition(conditions, { type: 'Progressing', status: 'Unknown', reason: 'DeploymentPaused', message: 'Deployment is paused' }, now)
  } else if (progressing?.reason === 'DeploymentPaused') {
    conditions = setCondition(conditions, { type: 'Progressing', status: 'Unknown', reason: 'DeploymentResumed', message: 'Deployment is resumed' }, now)
  } else if (newRS !== undefined) {
    const complete = status.updatedReplicas === replicas && status.replicas === replicas && available === replicas
    const moved = JSON.stringify([status.replicas, status.updatedReplicas, status.readyReplicas, available]) !==
      JSON.stringify([d.status?.replicas ?? 0, d.status?.updatedReplicas ?? 0, d.status?.readyReplicas ?? 0, d.status?.availableReplicas ?? 0])
    if (complete) {
      conditions = setCondition(conditions, { type: 'Progressing', status: 'True', reason: 'NewReplicaSetAvailable', message: `ReplicaSet "${name}" has successfully progressed.` }, now)
    } else if (createdNew) {
      conditions = setCondition(conditions, { type: 'Progressing', status: 'True', reason: 'NewReplicaSetCreated', message: `Created new replica set "${name}"` }, now)
    } else if (moved || progressing === undefined || progressing.reason === 'NewReplicaSetAvailable') {
      const reason = progressing === undefined ? 'FoundNewReplicaSet' : 'ReplicaSetUpdated'
      const message = progressing === undefined ? `Found new replica set "${name}"` : `ReplicaSet "${name}" is progressing.`
      conditions = [...conditions.filter(x => x.type !== 'Progressing'), { type: 'Progressing', status: 'True', reason, message, lastUpdateTime: now,
        lastTransitionTime: progressing?.status === 'True' ? progressing.lastTransitionTime : now }]
    } else if (progressing.status === 'True' && progressing.reason !== 'ProgressDeadlineExceeded') {
      const due = Date.parse(String(progressing.lastUpdateTime)) + deadline * 1000
      if (due <= nowMs) {
        conditions = setCondition(conditions, { type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded', message: `ReplicaSet "${name}" has timed out progressing.` }, now)
        c.events.event(d, 'Warning', 'ProgressDeadlineExceeded', `Deployment "${String(d.metadata.name)}" has timed out progressing.`)
      } else {
        requeue = due - nowMs + 1
      }
    }
    if (!complete && requeue === undefined && d.spec?.paused !== true) requeue = deadline * 1000 + 1
  }
  status.conditions = conditions
  for (const k of ['readyReplicas', 'availableReplicas', 'unavailableReplicas', 'replicas', 'updatedReplicas'] as const) if (status[k] === 0) delete status[k]
  await writeStatus(c, RESOURCES.deployments, d, status)
  return requeue === undefined ? undefined : { requeueAfterMs: requeue }
}
