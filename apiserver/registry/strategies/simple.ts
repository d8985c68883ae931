// Small strategies: field selectors of node, event, secret; the workload and job rules of workload-validation.ts.

import type { Strategy } from '../strategy.js'
import { validateJob, validateReplicatedWorkload } from './workload-validation.js'
import { fieldPathValue, type FieldGetter } from '../selectors.js'

const field = (path: string): FieldGetter => o => fieldPathValue(o, path)

export const nodeStrategy: Strategy = {
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

export const secretStrategy: Strategy = {
  fieldLabels: { type: field('type') }
}

export const replicaSetStrategy: Strategy = {
  fieldLabels: { 'status.replicas': field('status.replicas') },
  validate: validateReplicatedWorkload
}

/** Deployment, StatefulSet and DaemonSet: the selector and template rules their controllers rely on. */
export const workloadStrategy: Strategy = {
  validate: validateReplicatedWorkload
}

export const jobStrategy: Strategy = {
  fieldLabels: { 'status.successful': field('status.succeeded') },
  validate: validateJob
}
