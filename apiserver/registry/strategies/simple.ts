// Small strategies: field selectors of node, event, secret; the workload and job rules of workload-validation.ts.

import type { Strategy } from '../strategy.js'
import { defaultJob, validateJob, validateReplicatedWorkload, validateWorkloadUpdate } from './workload-validation.js'
import { fieldPathValue, type FieldGetter } from '../selectors.js'

const field = (path: string): FieldGetter => o => fieldPathValue(o, path)

export const nodeStrategy: Strategy = {
  keepsStatusOnCreate: true,
  fieldLabels: { 'spec.unschedulable': o => fieldPathValue(o, 'spec.unschedulable') === 'true' ? 'true' : 'false' }
}

export const eventStrategy: Strategy = {
  fieldLabels: {
    'involvedObject.kind': field('involvedObject.kind'),
    'involvedObject.namespace': field('involvedObject.namespace'),
    'involvedObject.name': field('involvedObject.name'),
    'involvedObject.uid': field('involvedObject.uid'),
    'involvedObject.apiVersion': field('involvedObject.apiVersion'),
    'involvedObject.resourceVersion': field('involvedObject.resourceVersion'),
    'involvedObject.fieldPath': field('involvedObject.fieldPath'),
    reason: field('reason'),
    reportingComponent: field('reportingComponent'),
    source: field('source.component'),
    type: field('type')
  }
}

/** Secrets: `stringData` is write-only, merged into `data` (base64) on every write, as Kubernetes does. */
function mergeStringData (obj: Record<string, unknown>): void {
  const stringData = obj.stringData
  if (stringData === null || typeof stringData !== 'object') { delete obj.stringData; return }
  const data = { ...(obj.data as Record<string, string> | undefined) }
  for (const [k, v] of Object.entries(stringData as Record<string, unknown>)) {
    if (typeof v === 'string') data[k] = Buffer.from(v, 'utf8').toString('base64')
  }
  obj.data = data
  delete obj.stringData
}

export const secretStrategy: Strategy = {
  fieldLabels: { type: field('type') },
  prepareForCreate (obj) {
    mergeStringData(obj)
    obj.type ??= 'Opaque'
  },
  prepareForUpdate (obj) { mergeStringData(obj) }
}

export const replicaSetStrategy: Strategy = {
  fieldLabels: { 'status.replicas': field('status.replicas') },
  validate: validateReplicatedWorkload,
  validateUpdate: validateWorkloadUpdate
}

/** Deployment, StatefulSet and DaemonSet: the selector and template rules their controllers rely on. */
export const workloadStrategy: Strategy = {
  validate: validateReplicatedWorkload,
  validateUpdate: validateWorkloadUpdate
}

export const jobStrategy: Strategy = {
  fieldLabels: { 'status.successful': field('status.succeeded') },
  prepareForCreate (obj) { defaultJob(obj, String((obj.metadata as { uid?: string } | undefined)?.uid ?? '')) },
  validate: validateJob,
  validateUpdate: (obj, old) => {
    const a = JSON.stringify((obj.spec as { selector?: unknown } | undefined)?.selector ?? null)
    const b = JSON.stringify((old.spec as { selector?: unknown } | undefined)?.selector ?? null)
    return a === b ? [] : validateWorkloadUpdate(obj, old)
  }
}

/** PersistentVolumes and claims start in phase Pending, as Kubernetes' defaulting sets it. */
export const volumePhaseStrategy: Strategy = {
  prepareForCreate (obj) {
    const status = (obj.status ?? {}) as Record<string, unknown>
    status.phase ??= 'Pending'
    obj.status = status
  }
}
