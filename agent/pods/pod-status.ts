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

function condition (type: string, ok: boolean, now: string, previous: PodCondition[] | undefined, reason?: string): PodCondition {
  const status = ok ? 'True' : 'False'
  const prev = previous?.find(c => c.type === type)
  return {
    type,
    status,
    ...(reason && !ok ? { reason } : {}),
    lastProbeTime: null,
    lastTransitionTime: prev?.status === status ? prev.lastTransitionTime : now
  }
}

export function buildPodStatus (i: PodStatusInput, nowMs: number): PodStatus {
  const { pod } = i
  const byName = (list: ContainerRecord[]) => new Map(list.map(r => [r.name, r]))
  const init = byName(i.init)
  const main = byName(i.containers)
  const initStatuses = (pod.spec.initContainers ?? []).map(c => containerStatus(c, init.get(c.name)))
  const statuses = pod.spec.containers.map(c => containerStatus(c, main.get(c.name)))
  const initialized = initStatuses.every(s => s.state.terminated?.exitCode === 0)
  let phase: PodStatus['phase'] = i.terminal?.phase ?? (initialized ? phaseOf(pod, statuses) : 'Pending')
  if (!initialized && i.terminal === undefined && (pod.spec.restartPolicy === 'Never') && initStatuses.some(s => (s.state.terminated?.exitCode ?? 0) !== 0)) phase = 'Failed'
  const containersReady = statuses.every(s => s.ready)
  const now = rfc3339(nowMs)
  const prev = i.previous?.conditions
  const status: PodStatus = {
    phase,
    conditions: [
      condition('PodReadyToStartContainers', i.sandboxReady, now, prev),
      condition('Initialized', initialized, now, prev, 'ContainersNotInitialized'),
      condition('Ready', containersReady && phase === 'Running', now, prev, 'ContainersNotReady'),
      condition('ContainersReady', containersReady, now, prev, 'ContainersNotReady'),
      condition('PodScheduled', true, now, prev)
    ],
    hostIP: i.hostIP,
    hostIPs: [{ ip: i.hostIP }],
    podIP: i.hostIP,
    podIPs: [{ ip: i.hostIP }],
    ...(i.startTime !== undefined ? { startTime: rfc3339(i.startTime) } : {}),
    ...(initStatuses.length > 0 ? { initContainerStatuses: initStatuses } : {}),
    containerStatuses: statuses,
    qosClass: qosClass(pod)
  }
  if (i.terminal?.reason) status.reason = i.terminal.reason
  if (i.terminal?.message) status.message = i.terminal.message
  return status
}
