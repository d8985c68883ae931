// The kubelet's pod and container events (reasons and messages as Kubernetes words them), recorded for one pod.

import type { EventRecorder, EventType, ObjectReference } from '../events/recorder.js'
import type { Pod } from './pod-types.js'

export interface PodEvents {
  /** An event about one container (involvedObject.fieldPath `spec.containers{name}`). */
  container(name: string, type: EventType, reason: string, message: string): void
  /** An event about the pod itself. */
  pod(type: EventType, reason: string, message: string): void
  /** A sink for the image puller, bound to one container. */
  forImage(name: string): (type: EventType, reason: string, message: string) => void
}

/** The reference of a pod, or of one of its containers when `container` is given. */
export function podReference (pod: Pod, container?: string): ObjectReference {
  const m = pod.metadata
  const ref: ObjectReference = { kind: 'Pod', namespace: m.namespace, name: m.name, uid: m.uid, apiVersion: pod.apiVersion ?? 'v1' }
  if (m.resourceVersion !== undefined) ref.resourceVersion = m.resourceVersion
  if (container !== undefined) {
    const init = (pod.spec.initContainers ?? []).some(c => c.name === container)
    ref.fieldPath = `${init ? 'spec.initContainers' : 'spec.containers'}{${container}}`
  }
  return ref
}

export function createPodEvents (recorder: EventRecorder, pod: () => Pod): PodEvents {
  const container = (name: string, type: EventType, reason: string, message: string): void => recorder.event(podReference(pod(), name), type, reason, message)
  return {
    container,
    pod: (type, reason, message) => recorder.event(podReference(pod()), type, reason, message),
    forImage: (name) => (type, reason, message) => container(name, type, reason, message)
  }
}

/** Go's time.Duration text for the `Successfully pulled image` message (e.g. 512ms, 1.234s). */
export function goDuration (ms: number): string {
  if (ms < 1) return `${Math.round(ms * 1000)}µs`
  if (ms < 1000) return `${Number(ms.toFixed(3))}ms`
  if (ms < 60_000) return `${Number((ms / 1000).toFixed(3))}s`
  const m = Math.floor(ms / 60_000)
  return `${m}m${Number(((ms - m * 60_000) / 1000).toFixed(3))}s`
}
