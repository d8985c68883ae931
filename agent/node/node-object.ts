// Builds the Node object and its status conditions from what the orchlet knows; no I/O here.

import type { CapacityReport, MachineFacts } from './node-info.js'
import type { NodeImage } from './node-images.js'

/** Set on the Node when --enable-controller-attach-detach: the attach/detach controller, not the orchlet, attaches volumes. */
export const ANNOTATION_CONTROLLER_ATTACH_DETACH = 'volumes.orch.io/controller-managed-attach-detach'

export interface Taint { key: string; value?: string; effect: string }

export interface NodeSpecInput {
  nodeName: string
  labels: Record<string, string>
  taints: Taint[]
  providerID?: string
  podCIDR?: string
  unschedulable: boolean
  /** --enable-controller-attach-detach (absent: false). */
  controllerManagedAttachDetach?: boolean
}

export interface NodeHealth {
  ready: boolean
  readyMessage: string
  memoryPressure: boolean
  diskPressure: boolean
  pidPressure: boolean
}

export interface NodeStatusInput {
  facts: MachineFacts
  capacity: CapacityReport
  addresses: Array<{ type: string; address: string }>
  runtimeVersion: string
  orchletVersion: string
  port: number
  health: NodeHealth
  /** Images on the node, already sorted and cut to --node-status-max-images. */
  images?: NodeImage[]
}

/** RFC 3339 with seconds, the precision of meta/v1 Time. */
export function rfc3339 (ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z')
}

/** RFC 3339 with microseconds, the precision of meta/v1 MicroTime. */
export function microTime (ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z')
}

/** The well-known node labels, under orch's prefixes and Kubernetes' (so standard node selectors match). */
export function defaultNodeLabels (nodeName: string, facts: MachineFacts): Record<string, string> {
  const labels: Record<string, string> = {}
  for (const prefix of ['orch.io', 'kubernetes.io']) {
    labels[`${prefix}/hostname`] = nodeName
    labels[`${prefix}/os`] = 'linux'
    labels[`${prefix}/arch`] = facts.architecture
    labels[`beta.${prefix}/os`] = 'linux'
    labels[`beta.${prefix}/arch`] = facts.architecture
  }
  return labels
}

export function buildNode (spec: NodeSpecInput, facts: MachineFacts): Record<string, unknown> {
  const nodeSpec: Record<string, unknown> = {}
  if (spec.taints.length > 0) nodeSpec.taints = spec.taints.map(t => ({ key: t.key, ...(t.value ? { value: t.value } : {}), effect: t.effect }))
  if (spec.providerID) nodeSpec.providerID = spec.providerID
  if (spec.podCIDR) { nodeSpec.podCIDR = spec.podCIDR; nodeSpec.podCIDRs = [spec.podCIDR] }
  if (spec.unschedulable) nodeSpec.unschedulable = true
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: spec.nodeName,
      labels: { ...defaultNodeLabels(spec.nodeName, facts), ...spec.labels },
      ...(spec.controllerManagedAttachDetach === true ? { annotations: { [ANNOTATION_CONTROLLER_ATTACH_DETACH]: 'true' } } : {})
    },
    spec: nodeSpec
  }
}

interface Condition { type: string; status: string; reason: string; message: string; lastHeartbeatTime: string; lastTransitionTime: string }

function condition (type: string, on: boolean, reasons: [string, string], messages: [string, string], now: string, previous?: Condition): Condition {
  const status = on ? 'True' : 'False'
  return {
    type,
    status,
    reason: on ? reasons[0] : reasons[1],
    message: on ? messages[0] : messages[1],
    lastHeartbeatTime: now,
    lastTransitionTime: previous !== undefined && previous.status === status ? previous.lastTransitionTime : now
  }
}

/** The status the orchlet posts; `previous` keeps lastTransitionTime stable while a condition holds. */
export function buildNodeStatus (input: NodeStatusInput, nowMs: number, previous: Condition[] = []): Record<string, unknown> {
  const now = rfc3339(nowMs)
  const prev = (type: string): Condition | undefined => previous.find(c => c.type === type)
  const h = input.health
  const conditions = [
    condition('MemoryPressure', h.memoryPressure, ['OrchletHasInsufficientMemory', 'OrchletHasSufficientMemory'],
      ['orchlet has insufficient memory available', 'orchlet has sufficient memory available'], now, prev('MemoryPressure')),
    condition('DiskPressure', h.diskPressure, ['OrchletHasDiskPressure', 'OrchletHasNoDiskPressure'],
      ['orchlet has disk pressure', 'orchlet has no disk pressure'], now, prev('DiskPressure')),
    condition('PIDPressure', h.pidPressure, ['OrchletHasInsufficientPID', 'OrchletHasSufficientPID'],
      ['orchlet has insufficient PID available', 'orchlet has sufficient PID available'], now, prev('PIDPressure')),
    condition('Ready', h.ready, ['OrchletReady', 'OrchletNotReady'],
      ['orchlet is posting ready status', h.readyMessage], now, prev('Ready'))
  ]
  const f = input.facts
  return {
    capacity: input.capacity.capacity,
    allocatable: input.capacity.allocatable,
    conditions,
    addresses: input.addresses,
    daemonEndpoints: { kubeletEndpoint: { Port: input.port } },
    ...(input.images !== undefined && input.images.length > 0 ? { images: input.images } : {}),
    nodeInfo: {
      machineID: f.machineID,
      systemUUID: f.systemUUID,
      bootID: f.bootID,
      kernelVersion: f.kernelVersion,
      osImage: f.osImage,
      containerRuntimeVersion: input.runtimeVersion,
      kubeletVersion: input.orchletVersion,
      kubeProxyVersion: '',
      operatingSystem: 'linux',
      architecture: f.architecture
    }
  }
}
