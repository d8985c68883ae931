// Legacy discovery documents (/api, /api/v1, /apis, /apis/{g}, /apis/{g}/{v}), rebuilt when the served set changes.

import { createHash } from 'node:crypto'
import { pathNotFound } from '../errors/status-error.js'
import type { Registry } from '../registry/types.js'
import type { ResourceDefinition } from '../schema/types.js'
import type { DiscoveryPath } from './request-info.js'
import { aggregatedList, aggregatedResources } from './discovery-aggregated.js'

interface GroupVersion { groupVersion: string; version: string }

export interface Discovery {
  /** The document for a discovery path, or a 404 StatusError thrown. `serverAddress` is host:port as the client reached us. */
  document(path: DiscoveryPath, serverAddress: string): Record<string, unknown>
  /** The aggregated document (APIGroupDiscoveryList) of /api (`api`) or /apis (`apis`). */
  aggregated(prefix: 'api' | 'apis'): Record<string, unknown>
  /** Drops cached documents (called when the definitions change). */
  invalidate(): void
}

/** Kubernetes' version priority: GA > beta > alpha, higher numbers first, then non-matching names alphabetically. */
export function compareKubeVersions (a: string, b: string): number {
  const rank = (v: string): [number, number, number, string] => {
    const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v)
    if (m === null) return [3, 0, 0, v]
    const stage = m[2] === undefined ? 0 : m[2] === 'beta' ? 1 : 2
    return [stage, -Number(m[1]), -Number(m[3] ?? 0), v]
  }
  const ra = rank(a)
  const rb = rank(b)
  for (let i = 0; i < 3; i++) if (ra[i] !== rb[i]) return (ra[i] as number) - (rb[i] as number)
  return ra[3] < rb[3] ? -1 : ra[3] > rb[3] ? 1 : 0
}

/** 8 bytes of sha256 over group/version/kind of the storage version, base64, as Kubernetes computes it. */
export function storageVersionHash (def: ResourceDefinition): string {
  const gv = def.group === '' ? def.storageVersion : `${def.group}/${def.storageVersion}`
  return createHash('sha256').update(`${gv}/${def.kind}`).digest().subarray(0, 8).toString('base64')
}

const SUB_VERBS = ['get', 'patch', 'update']

/** Gated parts of the documents. */
export interface DiscoveryOptions {
  /** The StorageVersionHash gate (default on): each stored resource names a hash of its storage version. */
  storageVersionHash?: boolean
}

function resourceEntries (def: ResourceDefinition, registry: Registry, o: DiscoveryOptions): Array<Record<string, unknown>> {
  const main: Record<string, unknown> = {
    name: def.plural, singularName: def.singular, namespaced: def.namespaced, kind: def.kind, verbs: def.verbs
  }
  if (def.shortNames.length > 0) main.shortNames = def.shortNames
  if (def.categories.length > 0) main.categories = def.categories
  // Create-only resources store nothing, so kube-apiserver gives them no storage version hash.
  if (def.virtual !== true && o.storageVersionHash !== false) main.storageVersionHash = storageVersionHash(def)
  const out = [main]
  if (def.subresources.status === true) {
    out.push({ name: `${def.plural}/status`, singularName: '', namespaced: def.namespaced, kind: def.kind, verbs: SUB_VERBS })
  }
  if (def.subresources.approval === true) {
    out.push({ name: `${def.plural}/approval`, singularName: '', namespaced: def.namespaced, kind: def.kind, verbs: SUB_VERBS })
  }
  // Connect-style subresources served by the HTTP layer itself (endpoints/pod-log.ts).
  if (def.group === '' && def.plural === 'pods') {
    out.push({ name: 'pods/log', singularName: '', namespaced: true, kind: 'Pod', verbs: ['get'] })
  }
  if (def.group === '' && (def.plural === 'pods' || def.plural === 'nodes' || def.plural === 'services')) {
    out.push({ name: `${def.plural}/proxy`, singularName: '', namespaced: def.namespaced, kind: def.plural === 'pods' ? 'PodProxyOptions' : def.plural === 'nodes' ? 'NodeProxyOptions' : 'ServiceProxyOptions', verbs: ['create', 'delete', 'get', 'patch', 'update'] })
  }
  if (def.subresources.scale !== undefined) {
    out.push({ name: `${def.plural}/scale`, singularName: '', namespaced: def.namespaced, group: 'autoscaling', version: 'v1', kind: 'Scale', verbs: SUB_VERBS })
  }
  // POST-only subresources with their own handlers (pods/binding, pods/eviction), named with their request kind.
  for (const name of registry.subresourceNames(def.group, def.version, def.plural)) {
    const creater = registry.subresource(def.group, def.version, def.plural, name)
    if (creater === undefined) continue
    const [groupOrVersion, maybeVersion] = creater.requestKind.apiVersions[0].split('/')
    const gv = maybeVersion === undefined ? {} : { group: groupOrVersion, version: maybeVersion }
    out.push({ name: `${def.plural}/${name}`, singularName: '', namespaced: def.namespaced, ...gv, kind: creater.requestKind.kind, verbs: ['create'] })
  }
  return out
}

interface Index {
  /** group -> versions sorted by priority. */
  groups: Map<string, string[]>
  /** "group/version" -> definitions. */
  byGroupVersion: Map<string, ResourceDefinition[]>
  /** Named groups in first-seen order (as the registry orders definitions). */
  groupOrder: string[]
}

function buildIndex (defs: ResourceDefinition[]): Index {
  const groups = new Map<string, string[]>()
  const byGroupVersion = new Map<string, ResourceDefinition[]>()
  const groupOrder: string[] = []
  for (const d of defs) {
    const key = `${d.group}/${d.version}`
    const list = byGroupVersion.get(key)
    if (list === undefined) byGroupVersion.set(key, [d])
    else list.push(d)
    const versions = groups.get(d.group)
    if (versions === undefined) {
      groups.set(d.group, [d.version])
      if (d.group !== '') groupOrder.push(d.group)
    } else if (!versions.includes(d.version)) versions.push(d.version)
  }
  for (const v of groups.values()) v.sort(compareKubeVersions)
  return { groups, byGroupVersion, groupOrder }
}

function groupDoc (name: string, versions: string[]): Record<string, unknown> {
  const gvs: GroupVersion[] = versions.map(v => ({ groupVersion: `${name}/${v}`, version: v }))
  return { name, versions: gvs, preferredVersion: gvs[0] }
}

export function createDiscovery (registry: Registry, o: DiscoveryOptions = {}): Discovery {
  let index: Index | undefined
  const current = (): Index => (index ??= buildIndex(registry.definitions()))
  return {
    invalidate () { index = undefined },
    aggregated (prefix) {
      const idx = current()
      const names = prefix === 'api' ? (idx.groups.has('') ? [''] : []) : idx.groupOrder
      return aggregatedList(names.map(name => ({
        name,
        versions: (idx.groups.get(name) ?? []).map(version => ({
          version,
          resources: aggregatedResources(name, version, (idx.byGroupVersion.get(`${name}/${version}`) ?? []).flatMap(d => resourceEntries(d, registry, o)))
        }))
      })))
    },
    document (path, serverAddress) {
      const idx = current()
      if (path.apiPrefix === 'api') {
        if (path.version === undefined) {
          return {
            kind: 'APIVersions',
            versions: idx.groups.get('') ?? [],
            serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }]
          }
        }
        return resourceList(idx, '', path.version, registry, o)
      }
      if (path.group === undefined) {
        return {
          kind: 'APIGroupList',
          apiVersion: 'v1',
          groups: idx.groupOrder.map(g => groupDoc(g, idx.groups.get(g) ?? []))
        }
      }
      const versions = idx.groups.get(path.group)
      if (path.group === '' || versions === undefined) throw pathNotFound()
      if (path.version === undefined) return { kind: 'APIGroup', apiVersion: 'v1', ...groupDoc(path.group, versions) }
      return resourceList(idx, path.group, path.version, registry, o)
    }
  }
}

function resourceList (idx: Index, group: string, version: string, registry: Registry, o: DiscoveryOptions): Record<string, unknown> {
  const defs = idx.byGroupVersion.get(`${group}/${version}`)
  if (defs === undefined) throw pathNotFound()
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: group === '' ? version : `${group}/${version}`,
    resources: defs.flatMap(d => resourceEntries(d, registry, o))
  }
}
