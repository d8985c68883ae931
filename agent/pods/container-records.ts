// Converts between the runtime's container statuses and the worker's ContainerRecord (current and last terminated state).

import type { ContainerStatus as RuntimeContainerStatus } from '../runtime/runtime.js'
import { rfc3339 } from '../node/node-object.js'
import type { ContainerRecord } from './pod-status.js'

export function nsToMs (ns: number): number { return Math.floor(ns / 1e6) }

/** The lastState.terminated of an exited record. */
export function terminatedOf (r: ContainerRecord): NonNullable<ContainerRecord['lastTerminated']> {
  return {
    exitCode: r.exitCode ?? 0,
    reason: r.reason ?? ((r.exitCode ?? 0) === 0 ? 'Completed' : 'Error'),
    ...(r.message ? { message: r.message } : {}),
    startedAt: rfc3339(r.startedAt ?? 0),
    finishedAt: rfc3339(r.finishedAt ?? 0),
    ...(r.id ? { containerID: `${r.runtimeName}://${r.id}` } : {})
  }
}

/** Copies an exited runtime status into `r` (exit code, reason, times); the message is the caller's. */
export function applyExit (r: ContainerRecord, st: RuntimeContainerStatus): void {
  r.state = 'exited'
  r.exitCode = st.exitCode
  r.reason = st.reason || (st.exitCode === 0 ? 'Completed' : 'Error')
  r.message = st.message || undefined
  if (st.startedAt > 0) r.startedAt = nsToMs(st.startedAt)
  r.finishedAt = nsToMs(st.finishedAt)
  r.ready = false
}

/**
 * The record of an adopted container: running or exited as the runtime reports it, its attempt as the
 * restart count, and the attempt before it (if still in the runtime) as the last terminated state.
 */
export function recordFromStatus (name: string, runtimeName: string, st: RuntimeContainerStatus, previous?: RuntimeContainerStatus): ContainerRecord {
  const r: ContainerRecord = { name, id: st.id, runtimeName, state: 'running', restartCount: st.metadata.attempt, imageRef: st.imageRef, ready: false, started: false, startedAt: nsToMs(st.startedAt) }
  if (st.state !== 'CONTAINER_RUNNING') applyExit(r, st)
  if (previous !== undefined && previous.state === 'CONTAINER_EXITED') {
    const p: ContainerRecord = { name, id: previous.id, runtimeName, state: 'exited', restartCount: previous.metadata.attempt, imageRef: previous.imageRef, ready: false, started: false }
    applyExit(p, previous)
    r.lastTerminated = terminatedOf(p)
  }
  return r
}
