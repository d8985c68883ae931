// What an HPA's scaleTargetRef names: the resource whose scale subresource is read and written.

import type { Obj, Resource } from '../client/types.js'
import { formatAmount as format } from '../../admission/quantity.js'

const KNOWN: Record<string, Resource> = {
  'apps/Deployment': { group: 'apps', version: 'v1', resource: 'deployments', namespaced: true },
  'apps/ReplicaSet': { group: 'apps', version: 'v1', resource: 'replicasets', namespaced: true },
  'apps/StatefulSet': { group: 'apps', version: 'v1', resource: 'statefulsets', namespaced: true },
  '/ReplicationController': { group: '', version: 'v1', resource: 'replicationcontrollers', namespaced: true }
}

function groupVersion (ref: Obj): [string, string] {
  const av = String(ref.apiVersion ?? '')
  const slash = av.indexOf('/')
  return slash < 0 ? ['', av] : [av.slice(0, slash), av.slice(slash + 1)]
}

/** The lower-case plural Kubernetes would guess for the kind (as the RESTMapper does for custom kinds). */
export function pluralOf (ref: Obj): string {
  const kind = String(ref.kind ?? '').toLowerCase()
  if (kind.endsWith('s')) return kind + 'es'
  if (kind.endsWith('y')) return kind.slice(0, -1) + 'ies'
  return kind + 's'
}

/** The resource of a scaleTargetRef (built-in workloads by kind; other kinds by apiVersion and the guessed plural). */
export function scaleTargetResource (ref: Obj): Resource | undefined {
  if (typeof ref.kind !== 'string' || typeof ref.name !== 'string') return undefined
  const [group, version] = groupVersion(ref)
  const known = KNOWN[`${group}/${ref.kind}`]
  if (known !== undefined) return known
  if (version === '') return undefined
  return { group, version, resource: pluralOf(ref), namespaced: true }
}

/** A usage in the calculator's unit (millicores for cpu) as a quantity. */
export function formatAmount (resource: string, value: number): string {
  return format(resource, Math.round(value))
}
