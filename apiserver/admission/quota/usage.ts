// What an object charges against a ResourceQuota, and a namespace's usage computed afresh, as Kubernetes' evaluators.

import type { Registry } from '../../registry/types.js'
import { amount } from '../quantity.js'
import { listObjects, type Obj } from '../lookup.js'

/** The legacy object-count names (`pods`, `services`, ...) of core resources. */
const LEGACY_COUNTS = new Set(['pods', 'services', 'configmaps', 'secrets', 'persistentvolumeclaims', 'replicationcontrollers', 'resourcequotas'])
const COMPUTE = /^(requests\.|limits\.)?(cpu|memory|ephemeral-storage)$/

const active = (p: Obj): boolean => p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed'
const terminating = (p: Obj): boolean => typeof p.spec?.activeDeadlineSeconds === 'number'
const containersOf = (p: Obj, key: 'containers' | 'initContainers'): Obj[] => (p.spec?.[key] ?? []) as Obj[]
const bestEffort = (p: Obj): boolean => [...containersOf(p, 'containers'), ...containersOf(p, 'initContainers')]
  .every(c => Object.keys(c.resources?.requests ?? {}).length === 0 && Object.keys(c.resources?.limits ?? {}).length === 0)

/** The name a count of `plural` in `group` goes by: `count/pods`, `count/deployments.apps`. */
export const countName = (group: string, plural: string): string => group === '' ? `count/${plural}` : `count/${plural}.${group}`

/** Whether a quota's scopes (Terminating, NotTerminating, BestEffort, NotBestEffort, PriorityClass) take this pod. */
export function podInScopes (quota: Obj, pod: Obj): boolean {
  for (const s of (quota.spec?.scopes ?? []) as string[]) {
    if (s === 'Terminating' && !terminating(pod)) return false
    if (s === 'NotTerminating' && terminating(pod)) return false
    if (s === 'BestEffort' && !bestEffort(pod)) return false
    if (s === 'NotBestEffort' && bestEffort(pod)) return false
  }
  for (const e of (quota.spec?.scopeSelector?.matchExpressions ?? []) as Obj[]) {
    if (e.scopeName !== 'PriorityClass') continue
    const name = String(pod.spec?.priorityClassName ?? '')
    const values = (e.values ?? []) as string[]
    if (e.operator === 'In' && !values.includes(name)) return false
    if (e.operator === 'NotIn' && values.includes(name)) return false
    if (e.operator === 'Exists' && name === '') return false
    if (e.operator === 'DoesNotExist' && name !== '') return false
  }
  return true
}

export const hasScopes = (quota: Obj): boolean =>
  ((quota.spec?.scopes ?? []) as unknown[]).length > 0 || ((quota.spec?.scopeSelector?.matchExpressions ?? []) as unknown[]).length > 0

/** A compute resource of a pod: the containers' sum or the largest init container, requests falling back to limits. */
export function podCompute (pod: Obj, kind: 'requests' | 'limits', resource: string): number {
  const one = (c: Obj): number => {
    const v = c.resources?.[kind]?.[resource] ?? (kind === 'requests' ? c.resources?.limits?.[resource] : undefined)
    return v === undefined ? 0 : amount(resource, v)
  }
  const sum = containersOf(pod, 'containers').reduce((s, c) => s + one(c), 0)
  return Math.max(sum, ...containersOf(pod, 'initContainers').map(one)) + (pod.spec?.overhead?.[resource] !== undefined ? amount(resource, pod.spec.overhead[resource]) : 0)
}

/** Containers lacking `kind.resource` (a quota on it requires every container to say it). */
export function podMissing (pod: Obj, quotaName: string): string[] {
  const m = COMPUTE.exec(quotaName)
  if (m === null) return []
  const kind = m[1] === 'limits.' ? 'limits' : 'requests'
  return [...containersOf(pod, 'initContainers'), ...containersOf(pod, 'containers')]
    .filter(c => c.resources?.[kind]?.[m[2]] === undefined && (kind === 'limits' || c.resources?.limits?.[m[2]] === undefined))
    .map(c => String(c.name))
}

/** What one object of `group`/`plural` charges against the quota resource `name` (0: nothing). */
export function charge (group: string, plural: string, obj: Obj, name: string): number {
  if (name === countName(group, plural) || (group === '' && LEGACY_COUNTS.has(name) && name === plural)) return 1
  if (group !== '') return 0
  if (plural === 'pods') {
    if (!active(obj)) return 0
    const m = COMPUTE.exec(name)
    return m === null ? 0 : podCompute(obj, m[1] === 'limits.' ? 'limits' : 'requests', m[2])
  }
  if (plural === 'services') {
    const type = obj.spec?.type
    if (name === 'services.loadbalancers') return type === 'LoadBalancer' ? 1 : 0
    if (name === 'services.nodeports') return type === 'NodePort' || type === 'LoadBalancer' ? ((obj.spec?.ports ?? []) as unknown[]).length : 0
  }
  if (plural === 'persistentvolumeclaims' && name === 'requests.storage') {
    const v = obj.spec?.resources?.requests?.storage
    return v === undefined ? 0 : amount('storage', v)
  }
  return 0
}

/** The group and plural a quota resource name counts (undefined: not an object count). */
function counted (name: string): { group: string, plural: string } | undefined {
  if (LEGACY_COUNTS.has(name)) return { group: '', plural: name }
  if (!name.startsWith('count/')) return undefined
  const rest = name.slice('count/'.length)
  const dot = rest.indexOf('.')
  return dot < 0 ? { group: '', plural: rest } : { group: rest.slice(dot + 1), plural: rest.slice(0, dot) }
}

/** Current usage of `name` in a namespace, computed from what is stored (when the quota's status does not say). */
export async function currentUsage (registry: Registry, quota: Obj, namespace: string, name: string): Promise<number> {
  const c = counted(name)
  const source = c ?? (name.startsWith('services.') ? { group: '', plural: 'services' } : name === 'requests.storage' ? { group: '', plural: 'persistentvolumeclaims' } : { group: '', plural: 'pods' })
  const def = registry.definitions().find(d => d.group === source.group && d.plural === source.plural)
  if (def === undefined) return 0
  let items = await listObjects(registry, def.group, def.version, def.plural, namespace)
  if (source.plural === 'pods' && source.group === '') items = items.filter(p => active(p) && podInScopes(quota, p))
  return items.reduce((n, o) => n + charge(source.group, source.plural, o, name), 0)
}
