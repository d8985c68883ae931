// Computes a pod's API status (phase, conditions, container statuses) from what its worker knows.

import type { Container, ContainerState, ContainerStateTerminated, ContainerStatus, Pod, PodCondition, PodStatus } from './pod-types.js'
import { rfc3339 } from '../node/node-object.js'
import { parseQuantity } from '../config/quantity.js'

/** The worker's view of one container (the latest attempt and the one before). */
export interface ContainerRecord {
  name: string
  id?: string
  runtimeName: string
  state: 'waiting' | 'running' | 'exited'
  waitingReason?: string
  waitingMessage?: string
  startedAt?: number
  finishedAt?: number
  exitCode?: number
  reason?: string
  message?: string
  restartCount: number
  imageRef: string
  lastTerminated?: ContainerStateTerminated
  ready: boolean
  started: boolean
}

export interface PodStatusInput {
  pod: Pod
  init: ContainerRecord[]
  containers: ContainerRecord[]
  sandboxReady: boolean
  hostIP: string
  /** The sandbox's IP; absent (host network, WebAssembly) means the host's. */
  podIP?: string
  startTime?: number
  /** A terminal verdict reached earlier (Succeeded/Failed stay terminal). */
  terminal?: { phase: 'Succeeded' | 'Failed'; reason?: string; message?: string }
  previous?: PodStatus
}

function state (r: ContainerRecord | undefined): ContainerState {
  if (r === undefined) return { waiting: { reason: 'ContainerCreating' } }
  if (r.state === 'running') return { running: { startedAt: rfc3339(r.startedAt ?? 0) } }
  if (r.state === 'exited') {
    return {
      terminated: {
        exitCode: r.exitCode ?? 0,
        reason: r.reason ?? ((r.exitCode ?? 0) === 0 ? 'Completed' : 'Error'),
        ...(r.message ? { message: r.message } : {}),
        startedAt: rfc3339(r.startedAt ?? 0),
        finishedAt: rfc3339(r.finishedAt ?? 0),
        containerID: r.id ? `${r.runtimeName}://${r.id}` : undefined
      }
    }
  }
  return { waiting: { reason: r.waitingReason ?? 'ContainerCreating', ...(r.waitingMessage ? { message: r.waitingMessage } : {}) } }
}

function containerStatus (c: Container, r: ContainerRecord | undefined): ContainerStatus {
  return {
    name: c.name,
    state: state(r),
    lastState: r?.lastTerminated ? { terminated: r.lastTerminated } : {},
    ready: r?.ready ?? false,
    restartCount: r?.restartCount ?? 0,
    image: c.image,
    imageID: r?.imageRef ?? '',
    ...(r?.id ? { containerID: `${r.runtimeName}://${r.id}` } : {}),
    started: r?.started ?? false
  }
}

/** An init container is ready once it exited 0 (the probe manager's rule for non-sidecar init containers). */
function initContainerStatus (c: Container, r: ContainerRecord | undefined): ContainerStatus {
  const s = containerStatus(c, r)
  if (s.state.terminated?.exitCode === 0) s.ready = true
  return s
}

/** Kubernetes' getPhase, given that init containers are done. */
export function phaseOf (pod: Pod, statuses: ContainerStatus[]): PodStatus['phase'] {
  let waiting = 0; let running = 0; let stopped = 0; let succeeded = 0
  for (const s of statuses) {
    if (s.state.running) running++
    else if (s.state.terminated) { stopped++; if (s.state.terminated.exitCode === 0) succeeded++ }
    else if (s.lastState.terminated) stopped++
    else waiting++
  }
  if (waiting > 0) return 'Pending'
  if (running > 0) return 'Running'
  if (stopped > 0) {
    const policy = pod.spec.restartPolicy ?? 'Always'
    if (policy === 'Always') return 'Running'
    if (stopped === succeeded) return 'Succeeded'
    if (policy === 'Never') return 'Failed'
    return 'Running'
  }
  return 'Pending'
}

export function qosClass (pod: Pod): PodStatus['qosClass'] {
  const all = [...(pod.spec.initContainers ?? []), ...pod.spec.containers]
  let any = false
  let guaranteed = true
  for (const c of all) {
    const limits = c.resources?.limits ?? {}
    const requests = { ...limits, ...c.resources?.requests }
    if (Object.keys(requests).length > 0 || Object.keys(limits).length > 0) any = true
    for (const r of ['cpu', 'memory']) {
      if (limits[r] === undefined || requests[r] === undefined || parseQuantity(limits[r]!) !== parseQuantity(requests[r]!)) guaranteed = false
    }
  }
  if (!any) return 'BestEffort'
  return guaranteed ? 'Guaranteed' : 'Burstable'
}

/** The pod conditions the kubelet owns; every other condition on the API pod is kept as it is. */
const KUBELET_CONDITIONS = new Set(['PodScheduled', 'Ready', 'Initialized', 'ContainersReady', 'PodReadyToStartContainers'])

type ConditionCore = Pick<PodCondition, 'type' | 'status' | 'reason' | 'message'>

/** Go's %s of a []string, as the kubelet's condition messages print container names: `[a b]`. */
function goList (names: string[]): string { return `[${names.join(' ')}]` }

/** Kubernetes' GenerateContainersReadyCondition (status/generate.go). */
export function containersReadyCondition (statuses: ContainerStatus[], phase: PodStatus['phase']): ConditionCore {
  if (phase === 'Succeeded') return { type: 'ContainersReady', status: 'False', reason: 'PodCompleted' }
  if (phase === 'Failed') return { type: 'ContainersReady', status: 'False', reason: 'PodFailed' }
  const unready = statuses.filter(s => !s.ready).map(s => s.name)
  if (unready.length > 0) return { type: 'ContainersReady', status: 'False', reason: 'ContainersNotReady', message: `containers with unready status: ${goList(unready)}` }
  return { type: 'ContainersReady', status: 'True' }
}

/** Kubernetes' GeneratePodReadyCondition: ContainersReady, then the pod's readiness gates. */
export function podReadyCondition (pod: Pod, conditions: ConditionCore[], containersReady: ConditionCore): ConditionCore {
  if (containersReady.status !== 'True') return { ...containersReady, type: 'Ready' }
  const unready: string[] = []
  for (const gate of pod.spec.readinessGates ?? []) {
    const c = conditions.find(x => x.type === gate.conditionType)
    if (c === undefined) unready.push(`corresponding condition of pod readiness gate "${gate.conditionType}" does not exist.`)
    else if (c.status !== 'True') unready.push(`the status of pod readiness gate "${gate.conditionType}" is not "True", but ${c.status}`)
  }
  if (unready.length > 0) return { type: 'Ready', status: 'False', reason: 'ReadinessGatesNotReady', message: unready.join(', ') }
  return { type: 'Ready', status: 'True' }
}

/** Kubernetes' GeneratePodInitializedCondition. */
export function initializedCondition (initStatuses: ContainerStatus[], statuses: ContainerStatus[], phase: PodStatus['phase']): ConditionCore {
  if (phase === 'Succeeded') return { type: 'Initialized', status: 'True', reason: 'PodCompleted' }
  // A regular container that started means the pod was initialized before (sidecars may be restarting).
  if (statuses.some(s => s.state.running !== undefined || s.state.terminated !== undefined)) return { type: 'Initialized', status: 'True' }
  const incomplete = initStatuses.filter(s => !s.ready).map(s => s.name)
  if (incomplete.length > 0) return { type: 'Initialized', status: 'False', reason: 'ContainersNotInitialized', message: `containers with incomplete status: ${goList(incomplete)}` }
  return { type: 'Initialized', status: 'True' }
}

function stamp (c: ConditionCore, now: string, previous: PodCondition[] | undefined): PodCondition {
  const prev = previous?.find(p => p.type === c.type)
  return {
    type: c.type,
    status: c.status,
    ...(c.reason ? { reason: c.reason } : {}),
    ...(c.message ? { message: c.message } : {}),
    lastProbeTime: null,
    lastTransitionTime: prev?.status === c.status ? prev.lastTransitionTime : now
  }
}

export function buildPodStatus (i: PodStatusInput, nowMs: number): PodStatus {
  const { pod } = i
  const byName = (list: ContainerRecord[]) => new Map(list.map(r => [r.name, r]))
  const init = byName(i.init)
  const main = byName(i.containers)
  const initStatuses = (pod.spec.initContainers ?? []).map(c => initContainerStatus(c, init.get(c.name)))
  const statuses = pod.spec.containers.map(c => containerStatus(c, main.get(c.name)))
  const initDone = initStatuses.every(s => s.state.terminated?.exitCode === 0)
  let phase: PodStatus['phase'] = i.terminal?.phase ?? (initDone ? phaseOf(pod, statuses) : 'Pending')
  if (!initDone && i.terminal === undefined && (pod.spec.restartPolicy === 'Never') && initStatuses.some(s => (s.state.terminated?.exitCode ?? 0) !== 0)) phase = 'Failed'
  // Pods are not allowed to transition out of a terminal phase the API server already shows.
  const apiPhase = pod.status?.phase
  if ((apiPhase === 'Succeeded' || apiPhase === 'Failed') && phase !== apiPhase) phase = apiPhase
  const now = rfc3339(nowMs)
  const prev = i.previous?.conditions
  // Conditions other components own (readiness gates, DisruptionTarget) are kept, ahead of the kubelet's.
  const foreign = (pod.status?.conditions ?? []).filter(c => !KUBELET_CONDITIONS.has(c.type))
  const containersReady = containersReadyCondition(statuses, phase)
  const podIP = i.podIP || i.hostIP
  const status: PodStatus = {
    phase,
    conditions: [
      ...foreign,
      stamp({ type: 'PodReadyToStartContainers', status: i.sandboxReady ? 'True' : 'False' }, now, prev),
      stamp(initializedCondition(initStatuses, statuses, phase), now, prev),
      stamp(podReadyCondition(pod, foreign, containersReady), now, prev),
      stamp(containersReady, now, prev),
      stamp({ type: 'PodScheduled', status: 'True' }, now, prev)
    ],
    hostIP: i.hostIP,
    hostIPs: [{ ip: i.hostIP }],
    podIP,
    podIPs: [{ ip: podIP }],
    ...(i.startTime !== undefined ? { startTime: rfc3339(i.startTime) } : {}),
    ...(initStatuses.length > 0 ? { initContainerStatuses: initStatuses } : {}),
    containerStatuses: statuses,
    qosClass: qosClass(pod)
  }
  if (i.terminal?.reason) status.reason = i.terminal.reason
  if (i.terminal?.message) status.message = i.terminal.message
  return status
}
