// Kubernetes' Go-coded defaults (and closed value sets) that swagger does not carry, as schema data laid over the derived definitions.
//
// Keyed by orch definition name, then property name; each entry's keywords are merged onto that property
// (beside its `$ref` when it has one). Defaults here are structural: they apply when the field is absent
// and its parent object exists, which covers pod templates inside workloads as Kubernetes does too.
// Conditional defaults stay in strategies (see the notes), because a schema default cannot depend on
// another field:
// - pod: imagePullPolicy is Always for an image tagged `:latest` or untagged, else IfNotPresent;
//   enableServiceLinks true on Pods only (not templates).
// - service: targetPort = port, internalTrafficPolicy Cluster (not for ExternalName),
//   externalTrafficPolicy Cluster for NodePort/LoadBalancer, clusterIP/ipFamilies allocation.
// - namespace: spec.finalizers gets "orch" on create (Kubernetes adds "kubernetes" in PrepareForCreate),
//   status.phase Active.
// - deployment: rollingUpdate 25%/25% when strategy.type is RollingUpdate but rollingUpdate is absent.
// - job: completions 1 only when both completions and parallelism are unset.
import type { StructuralSchema } from '../types.js'

// Enum orders follow Kubernetes' messages: sorted where its validation uses a set, declared order otherwise.
export type SchemaOverlay = Record<string, Record<string, Partial<StructuralSchema>>>

const core = 'io.orch.api.core.v1.'
const apps = 'io.orch.api.apps.v1.'
const batch = 'io.orch.api.batch.v1.'
const protocol = { default: 'TCP', enum: ['SCTP', 'TCP', 'UDP'] }
const probe = {
  timeoutSeconds: { default: 1 },
  periodSeconds: { default: 10 },
  successThreshold: { default: 1 },
  failureThreshold: { default: 3 },
}
const container = {
  terminationMessagePath: { default: '/dev/termination-log' },
  terminationMessagePolicy: { default: 'File', enum: ['File', 'FallbackToLogsOnError'] },
  imagePullPolicy: { enum: ['Always', 'IfNotPresent', 'Never'] },
}

/**
 * Fields swagger marks required that Kubernetes requires only of new objects (its create validation): the schema
 * leaves them optional and the kind's strategy checks them on create. events.k8s.io/v1 reads old core events,
 * which have no eventTime.
 */
export const requiredOnCreateOnly: Readonly<Record<string, readonly string[]>> = {
  'io.orch.api.events.v1.Event': ['eventTime'],
}

/** Returns a fresh overlay (callers may keep references into it). */
export function builtinOverlay (): SchemaOverlay {
  return {
    [core + 'PodSpec']: {
      restartPolicy: { default: 'Always', enum: ['Always', 'OnFailure', 'Never'] },
      dnsPolicy: { default: 'ClusterFirst', enum: ['ClusterFirst', 'ClusterFirstWithHostNet', 'Default', 'None'] },
      schedulerName: { default: 'default-scheduler' },
      terminationGracePeriodSeconds: { default: 30 },
      securityContext: { default: {} },
    },
    [core + 'Container']: { ...container },
    [core + 'EphemeralContainer']: { ...container },
    [core + 'ContainerPort']: { protocol: { ...protocol } },
    [core + 'ServicePort']: { protocol: { ...protocol } },
    [core + 'EndpointPort']: { protocol: { ...protocol } },
    [core + 'Probe']: { ...probe },
    [core + 'HTTPGetAction']: { scheme: { default: 'HTTP', enum: ['HTTP', 'HTTPS'] } },
    [core + 'ObjectFieldSelector']: { apiVersion: { default: 'v1' } },
    [core + 'ConfigMapVolumeSource']: { defaultMode: { default: 420 } },
    [core + 'SecretVolumeSource']: { defaultMode: { default: 420 } },
    [core + 'ProjectedVolumeSource']: { defaultMode: { default: 420 } },
    [core + 'DownwardAPIVolumeSource']: { defaultMode: { default: 420 } },
    [core + 'ServiceSpec']: {
      type: { default: 'ClusterIP', enum: ['ClusterIP', 'ExternalName', 'LoadBalancer', 'NodePort'] },
      sessionAffinity: { default: 'None', enum: ['ClientIP', 'None'] },
    },
    [core + 'Secret']: { type: { default: 'Opaque' } },
    [core + 'PersistentVolumeClaimSpec']: { volumeMode: { default: 'Filesystem', enum: ['Block', 'Filesystem'] } },
    [core + 'PersistentVolumeClaimStatus']: { phase: { default: 'Pending' } },
    [core + 'PersistentVolumeSpec']: {
      persistentVolumeReclaimPolicy: { default: 'Retain', enum: ['Delete', 'Recycle', 'Retain'] },
      volumeMode: { default: 'Filesystem', enum: ['Block', 'Filesystem'] },
    },
    [core + 'PersistentVolumeStatus']: { phase: { default: 'Pending' } },
    [apps + 'DeploymentSpec']: {
      replicas: { default: 1 },
      revisionHistoryLimit: { default: 10 },
      progressDeadlineSeconds: { default: 600 },
      strategy: { default: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } } },
    },
    [apps + 'DeploymentStrategy']: { type: { default: 'RollingUpdate', enum: ['Recreate', 'RollingUpdate'] } },
    [apps + 'ReplicaSetSpec']: { replicas: { default: 1 } },
    [apps + 'StatefulSetSpec']: {
      replicas: { default: 1 },
      podManagementPolicy: { default: 'OrderedReady', enum: ['OrderedReady', 'Parallel'] },
      revisionHistoryLimit: { default: 10 },
      updateStrategy: { default: { type: 'RollingUpdate', rollingUpdate: { partition: 0 } } },
      persistentVolumeClaimRetentionPolicy: { default: { whenDeleted: 'Retain', whenScaled: 'Retain' } },
    },
    [apps + 'DaemonSetSpec']: {
      revisionHistoryLimit: { default: 10 },
      updateStrategy: { default: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } } },
    },
    [batch + 'JobSpec']: {
      parallelism: { default: 1 },
      backoffLimit: { default: 6 },
      completionMode: { default: 'NonIndexed', enum: ['NonIndexed', 'Indexed'] },
      suspend: { default: false },
    },
    [batch + 'CronJobSpec']: {
      concurrencyPolicy: { default: 'Allow', enum: ['Allow', 'Forbid', 'Replace'] },
      suspend: { default: false },
      successfulJobsHistoryLimit: { default: 3 },
      failedJobsHistoryLimit: { default: 1 },
    },
    // v1 defaults the shares only when unspecified; an explicit 0 stays 0 (spec §9.4). v1beta3's rule is in its conversion.
    ['io.orch.api.flowcontrol.v1.LimitedPriorityLevelConfiguration']: { nominalConcurrencyShares: { default: 30 } },
    ['io.orch.api.autoscaling.v1.HorizontalPodAutoscalerSpec']: { minReplicas: { default: 1 } },
    ['io.orch.api.autoscaling.v2.HorizontalPodAutoscalerSpec']: { minReplicas: { default: 1 } },
    ['io.orch.api.storage.v1.StorageClass']: {
      reclaimPolicy: { default: 'Delete', enum: ['Delete', 'Recycle', 'Retain'] },
      volumeBindingMode: { default: 'Immediate', enum: ['Immediate', 'WaitForFirstConsumer'] },
    },
    ['io.orch.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionSpec']: {
      conversion: { default: { strategy: 'None' } },
    },
  }
}
