// Facts about pods that several controllers read: active, ready, available, and the pod a template makes.

import type { Obj } from './client/types.js'

export function isPodActive (pod: Obj): boolean {
  const phase = pod.status?.phase
  return phase !== 'Succeeded' && phase !== 'Failed' && (pod.metadata?.deletionTimestamp ?? null) === null
}

export function isTerminating (pod: Obj): boolean {
  return (pod.metadata?.deletionTimestamp ?? null) !== null
}

function readyCondition (pod: Obj): Obj | undefined {
  return ((pod.status?.conditions ?? []) as Obj[]).find(c => c.type === 'Ready')
}

export function isPodReady (pod: Obj): boolean {
  return readyCondition(pod)?.status === 'True'
}

/** Ready for at least `minReadySeconds` at `now` (ms). */
export function isPodAvailable (pod: Obj, minReadySeconds: number, now: number): boolean {
  const ready = readyCondition(pod)
  if (ready?.status !== 'True') return false
  if (minReadySeconds <= 0) return true
  const since = Date.parse(String(ready.lastTransitionTime ?? ''))
  return Number.isFinite(since) && since + minReadySeconds * 1000 <= now
}

/** Milliseconds until a ready pod becomes available, or undefined when that is not pending. */
export function msUntilAvailable (pod: Obj, minReadySeconds: number, now: number): number | undefined {
  const ready = readyCondition(pod)
  if (ready?.status !== 'True' || minReadySeconds <= 0) return undefined
  const at = Date.parse(String(ready.lastTransitionTime ?? '')) + minReadySeconds * 1000
  return Number.isFinite(at) && at > now ? at - now : undefined
}

export interface OwnerRefSource { apiVersion: string, kind: string, name: string, uid: string }

export function controllerRef (owner: OwnerRefSource): Obj {
  return { apiVersion: owner.apiVersion, kind: owner.kind, name: owner.name, uid: owner.uid, controller: true, blockOwnerDeletion: true }
}

/** The pod a controller creates from its template: labels, annotations and spec copied, owned by `owner`. */
export function podFromTemplate (template: Obj, namespace: string, generateName: string, owner: OwnerRefSource, extraLabels: Record<string, string> = {}): Obj {
  const meta = template.metadata ?? {}
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      generateName,
      namespace,
      labels: { ...(meta.labels ?? {}), ...extraLabels },
      ...(meta.annotations !== undefined ? { annotations: { ...meta.annotations } } : {}),
      ...(meta.finalizers !== undefined ? { finalizers: [...meta.finalizers] } : {}),
      ownerReferences: [controllerRef(owner)]
    },
    spec: structuredClone(template.spec ?? {})
  }
}

/** Ranks pods for deletion when scaling down, most deletable first (Kubernetes' ActivePods ordering). */
export function deletionOrder (a: Obj, b: Obj): number {
  const rank = (p: Obj): number[] => {
    const assigned = (p.spec?.nodeName ?? '') !== '' ? 1 : 0
    const phase = p.status?.phase === 'Pending' ? 0 : p.status?.phase === 'Unknown' ? 1 : 2
    const ready = isPodReady(p) ? 1 : 0
    const restarts = ((p.status?.containerStatuses ?? []) as Obj[]).reduce((n, c) => n + (c.restartCount ?? 0), 0)
    return [assigned, phase, ready, -restarts]
  }
  const ra = rank(a)
  const rb = rank(b)
  for (let i = 0; i < ra.length; i++) if (ra[i] !== rb[i]) return ra[i] - rb[i]
  // Newer pods go first.
  return String(b.metadata?.creationTimestamp ?? '').localeCompare(String(a.metadata?.creationTimestamp ?? ''))
}
