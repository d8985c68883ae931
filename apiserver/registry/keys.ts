// Storage key layout of API objects: /<group or core>/<plural>/<namespace>/<name>, cluster scope without namespace.

import type { ResourceDefinition } from '../schema/types.js'

type KeyedDefinition = Pick<ResourceDefinition, 'group' | 'plural' | 'namespaced'> & { storageGroup?: string }

/** Prefix of every object of the resource (all namespaces); ends with '/'. Shared by all versions of a kind. */
export function resourcePrefix (def: KeyedDefinition): string {
  const group = def.storageGroup ?? def.group
  return `/${group === '' ? 'core' : group}/${def.plural}/`
}

/** Prefix of the objects in one namespace ('' = all namespaces, and always for cluster scope). */
export function namespacePrefix (def: KeyedDefinition, namespace: string): string {
  const base = resourcePrefix(def)
  return def.namespaced && namespace !== '' ? `${base}${namespace}/` : base
}

/** The key of one object. */
export function objectKey (def: KeyedDefinition, namespace: string, name: string): string {
  return def.namespaced ? `${resourcePrefix(def)}${namespace}/${name}` : `${resourcePrefix(def)}${name}`
}

/** Namespace and name from a key under `resourcePrefix(def)`. */
export function splitKey (def: KeyedDefinition, key: string): { namespace: string, name: string } {
  const rest = key.slice(resourcePrefix(def).length)
  if (!def.namespaced) return { namespace: '', name: rest }
  const slash = rest.indexOf('/')
  return { namespace: rest.slice(0, slash), name: rest.slice(slash + 1) }
}

/** The smallest key sorting after `key` (for paging: the next chunk starts there). */
export function keyAfter (key: string): string {
  return key + '\x00'
}
