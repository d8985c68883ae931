// The parts of the Pod API the orchlet reads and writes, typed loosely enough to pass objects through unchanged.

import type { ProjectedSource } from './projected-volume.js'

export interface ObjectMeta {
  name: string
  namespace: string
  uid: string
  resourceVersion?: string
  generation?: number
  creationTimestamp?: string
  deletionTimestamp?: string
  deletionGracePeriodSeconds?: number
  labels?: Record<string, string>
  annotations?: Record<string, string>
  ownerReferences?: Array<Record<string, unknown>>
}

export interface EnvVar { name: string; value?: string; valueFrom?: Record<string, unknown> }
export interface VolumeMount { name: string; mountPath: string; subPath?: string; readOnly?: boolean }

export interface HTTPGetAction { path?: string; port: number | string; host?: string; scheme?: 'HTTP' | 'HTTPS'; httpHeaders?: Array<{ name: string; value: string }> }
export interface Probe {
  exec?: { command?: string[] }
  httpGet?: HTTPGetAction
  tcpSocket?: { port: number | string; host?: string }
  initialDelaySeconds?: number
  timeoutSeconds?: number
  periodSeconds?: number
  successThreshold?: number
  failureThreshold?: number
  terminationGracePeriodSeconds?: number
}

export interface ContainerPort { name?: string; containerPort: number; protocol?: string; hostPort?: number }

export interface Container {
  name: string
  image: string
  command?: string[]
  args?: string[]
  workingDir?: string
  env?: EnvVar[]
  ports?: ContainerPort[]
  volumeMounts?: VolumeMount[]
  resources?: { limits?: Record<string, string>; requests?: Record<string, string> }
  livenessProbe?: Probe
  readinessProbe?: Probe
  startupProbe?: Probe
  imagePullPolicy?: 'Always' | 'IfNotPresent' | 'Never'
  restartPolicy?: 'Always'
  stdin?: boolean
  tty?: boolean
  terminationMessagePath?: string
  terminationMessagePolicy?: 'File' | 'FallbackToLogsOnError'
}

export interface Volume {
  name: string
  emptyDir?: { medium?: string; sizeLimit?: string }
  hostPath?: { path: string; type?: string }
  configMap?: { name: string; items?: Array<{ key: string; path: string; mode?: number }>; defaultMode?: number; optional?: boolean }
  secret?: { secretName: string; items?: Array<{ key: string; path: string; mode?: number }>; defaultMode?: number; optional?: boolean }
  projected?: { sources?: ProjectedSource[]; defaultMode?: number }
  downwardAPI?: { items?: Array<{ path: string; fieldRef?: { fieldPath: string }; resourceFieldRef?: { containerName?: string; resource: string; divisor?: string }; mode?: number }>; defaultMode?: number }
}

export interface PodSpec {
  containers: Container[]
  initContainers?: Container[]
  volumes?: Volume[]
  restartPolicy?: 'Always' | 'OnFailure' | 'Never'
  terminationGracePeriodSeconds?: number
  activeDeadlineSeconds?: number
  nodeName?: string
  hostNetwork?: boolean
  hostname?: string
  runtimeClassName?: string
  priority?: number
  priorityClassName?: string
  readinessGates?: Array<{ conditionType: string }>
  /** Pod overhead, set at admission from the RuntimeClass's podFixed. */
  overhead?: Record<string, string>
}

export interface ContainerStateWaiting { reason?: string; message?: string }
export interface ContainerStateRunning { startedAt?: string }
export interface ContainerStateTerminated { exitCode: number; signal?: number; reason?: string; message?: string; startedAt?: string; finishedAt?: string; containerID?: string }
export interface ContainerState { waiting?: ContainerStateWaiting; running?: ContainerStateRunning; terminated?: ContainerStateTerminated }

export interface ContainerStatus {
  name: string
  state: ContainerState
  lastState: ContainerState
  ready: boolean
  restartCount: number
  image: string
  imageID: string
  containerID?: string
  started?: boolean
}

export interface PodCondition { type: string; status: 'True' | 'False' | 'Unknown'; reason?: string; message?: string; lastProbeTime: string | null; lastTransitionTime: string }

export interface PodStatus {
  phase: 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown'
  conditions?: PodCondition[]
  message?: string
  reason?: string
  hostIP?: string
  hostIPs?: Array<{ ip: string }>
  podIP?: string
  podIPs?: Array<{ ip: string }>
  startTime?: string
  initContainerStatuses?: ContainerStatus[]
  containerStatuses?: ContainerStatus[]
  qosClass?: 'Guaranteed' | 'Burstable' | 'BestEffort'
}

export interface Pod {
  apiVersion: 'v1'
  kind: 'Pod'
  metadata: ObjectMeta
  spec: PodSpec
  status?: PodStatus
}

/** Where a pod came from: the API server, or a static source (file, http). */
export type PodSource = 'api' | 'file' | 'http'

export const ANNOTATION_CONFIG_SOURCE = 'orch.io/config.source'
export const ANNOTATION_CONFIG_HASH = 'orch.io/config.hash'
export const ANNOTATION_CONFIG_MIRROR = 'orch.io/config.mirror'

export function podKey (pod: { metadata: { namespace: string; name: string } }): string {
  return `${pod.metadata.namespace}/${pod.metadata.name}`
}

export function podSourceOf (pod: Pod): PodSource {
  const s = pod.metadata.annotations?.[ANNOTATION_CONFIG_SOURCE]
  return s === 'file' || s === 'http' ? s : 'api'
}

export function isStaticPod (pod: Pod): boolean { return podSourceOf(pod) !== 'api' }
export function isMirrorPod (pod: { metadata: { annotations?: Record<string, string> } }): boolean {
  return pod.metadata.annotations?.[ANNOTATION_CONFIG_MIRROR] !== undefined
}

/** The grace period a pod is stopped with: the deletion's, else the spec's, else the API default of 30 s. */
export function gracePeriodOf (pod: Pod): number {
  return pod.metadata.deletionGracePeriodSeconds ?? pod.spec.terminationGracePeriodSeconds ?? 30
}
