// Deployment arithmetic: template hashes, revisions, surge and unavailability, as Kubernetes' deployment utilities compute them.

import { createHash } from 'node:crypto'
import type { Obj } from '../client/types.js'

export const REVISION = 'deployment.kubernetes.io/revision'
export const REVISION_HISTORY = 'deployment.kubernetes.io/revision-history'
export const DESIRED_REPLICAS = 'deployment.kubernetes.io/desired-replicas'
export const MAX_REPLICAS = 'deployment.kubernetes.io/max-replicas'
export const HASH_LABEL = 'pod-template-hash'

/** Annotations a Deployment never copies to its ReplicaSets. */
const SKIPPED = new Set([REVISION, REVISION_HISTORY, DESIRED_REPLICAS, MAX_REPLICAS, 'kubectl.kubernetes.io/last-applied-configuration'])

const ALPHANUMS = 'bcdfghjklmnpqrstvwxz2456789'

/** JSON with sorted keys, so equal templates hash equally whatever their key order. */
function stable (v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stable).join(',')}]`
  if (v !== null && typeof v === 'object') return `{${Object.keys(v).sort().map(k => `${JSON.stringify(k)}:${stable((v as Obj)[k])}`).join(',')}}`
  return JSON.stringify(v)
}

/** Drops nulls and empty objects and lists, which Go's semantic equality reads as unset (`creationTimestamp: null`, `resources: {}`). */
function normalize (v: unknown): unknown {
  if (Array.isArray(v)) return v.map(normalize)
  if (v === null || typeof v !== 'object') return v
  const out: Obj = {}
  for (const [k, x] of Object.entries(v)) {
    const n = normalize(x)
    if (n === null || n === undefined) continue
    if (typeof n === 'object' && (Array.isArray(n) ? n.length === 0 : Object.keys(n).length === 0)) continue
    out[k] = n
  }
  return out
}

/** The pod-template-hash label value: a 32-bit hash of the template (and collision count), in Kubernetes' safe alphabet. */
export function templateHash (template: Obj, collisionCount?: number): string {
  const h = createHash('sha256').update(stable(normalize(template)))
  if (collisionCount !== undefined && collisionCount !== null) h.update(String(collisionCount))
  const n = h.digest().readUInt32BE(0)
  return [...String(n)].map(ch => ALPHANUMS[ch.charCodeAt(0) % ALPHANUMS.length]).join('')
}

/** Templates equal but for the pod-template-hash label. */
export function equalIgnoringHash (a: Obj, b: Obj): boolean {
  const strip = (t: Obj): string => {
    const copy = structuredClone(t ?? {})
    if (copy.metadata?.labels !== undefined) {
      delete copy.metadata.labels[HASH_LABEL]
      if (Object.keys(copy.metadata.labels).length === 0) delete copy.metadata.labels
    }
    return stable(normalize(copy))
  }
  return strip(a) === strip(b)
}

export function revisionOf (rs: Obj): number {
  const v = Number(rs.metadata?.annotations?.[REVISION] ?? 0)
  return Number.isFinite(v) ? v : 0
}

/** An int-or-percent of `total`; percentages round up for surge, down for unavailability. */
function resolve (v: unknown, total: number, roundUp: boolean): number {
  if (typeof v === 'number') return v
  const s = String(v ?? '')
  if (s.endsWith('%')) {
    const x = Number(s.slice(0, -1)) * total / 100
    return roundUp ? Math.ceil(x) : Math.floor(x)
  }
  return Number(s) || 0
}

/** [maxSurge, maxUnavailable] of a RollingUpdate Deployment; both zero is read as one unavailable. */
export function surgeAndUnavailable (d: Obj): [number, number] {
  if (d.spec?.strategy?.type === 'Recreate') return [0, 0]
  const replicas = d.spec?.replicas ?? 1
  const ru = d.spec?.strategy?.rollingUpdate ?? {}
  const surge = resolve(ru.maxSurge ?? '25%', replicas, true)
  const unavailable = resolve(ru.maxUnavailable ?? '25%', replicas, false)
  return surge === 0 && unavailable === 0 ? [0, 1] : [surge, unavailable]
}

/** The ReplicaSet a Deployment template makes (replicas set by the caller). */
export function newReplicaSet (d: Obj, hash: string, revision: number, replicas: number): Obj {
  const template = structuredClone(d.spec.template)
  template.metadata = { ...(template.metadata ?? {}), labels: { ...(template.metadata?.labels ?? {}), [HASH_LABEL]: hash } }
  const selector = structuredClone(d.spec.selector ?? {})
  selector.matchLabels = { ...(selector.matchLabels ?? {}), [HASH_LABEL]: hash }
  const annotations: Record<string, string> = {}
  for (const [k, v] of Object.entries((d.metadata?.annotations ?? {}) as Record<string, string>)) if (!SKIPPED.has(k)) annotations[k] = v
  annotations[REVISION] = String(revision)
  const [surge] = surgeAndUnavailable(d)
  annotations[DESIRED_REPLICAS] = String(d.spec.replicas ?? 1)
  annotations[MAX_REPLICAS] = String((d.spec.replicas ?? 1) + surge)
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: {
      name: `${String(d.metadata.name)}-${hash}`,
      namespace: d.metadata.namespace,
      labels: { ...(template.metadata.labels ?? {}) },
      annotations,
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: d.metadata.name, uid: d.metadata.uid, controller: true, blockOwnerDeletion: true }]
    },
    spec: { replicas, minReadySeconds: d.spec.minReadySeconds ?? 0, selector, template }
  }
}

export function condition (d: Obj, type: string): Obj | undefined {
  return ((d.status?.conditions ?? []) as Obj[]).find(c => c.type === type)
}
