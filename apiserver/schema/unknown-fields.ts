// Unknown fields: finding them (for fieldValidation Warn/Strict) and pruning them (Ignore, and CRD pruning).
//
// A field is unknown when its object's schema declares `properties` (or none at all) and the name is not
// among them, unless the node preserves unknown fields or maps names through `additionalProperties`.
// Embedded resources and the root always know apiVersion, kind and metadata.
import { createResolver, type SchemaResolver } from './resolve.js'
import * as fe from './field-errors.js'
import type { ResourceDefinition, StructuralSchema } from './types.js'

const typeMetaFields = new Set(['apiVersion', 'kind', 'metadata'])

type Visit = (container: Record<string, unknown>, name: string, path: string) => void

function walk (r: SchemaResolver, value: unknown, node: StructuralSchema, path: string, atResourceRoot: boolean, onUnknown: Visit): void {
  if (value === null || typeof value !== 'object') return
  const s = r.resolve(node)
  if (Array.isArray(value)) {
    if (s.items === undefined) return
    value.forEach((item, i) => walk(r, item, s.items as StructuralSchema, fe.index(path, i), false, onUnknown))
    return
  }
  if (s['x-orch-int-or-string'] === true) return
  const obj = value as Record<string, unknown>
  const preserve = s['x-orch-preserve-unknown-fields'] === true
  const embedded = atResourceRoot || s['x-orch-embedded-resource'] === true
  const extra = s.additionalProperties
  for (const name of Object.keys(obj)) {
    const prop = s.properties?.[name]
    const childPath = fe.child(path, name)
    if (prop !== undefined) walk(r, obj[name], prop, childPath, false, onUnknown)
    else if (typeof extra === 'object') walk(r, obj[name], extra, fe.key(path, name), false, onUnknown)
    else if (preserve || extra === true || (embedded && typeMetaFields.has(name))) continue
    else onUnknown(obj, name, childPath)
  }
}

/** Paths of every unknown field, in document order (`spec.foo`, `spec.containers[0].bar`). */
export function findUnknownFields (def: ResourceDefinition, obj: unknown): string[] {
  const found: string[] = []
  walk(createResolver(def.definitions), obj, def.schema, '', true, (_c, _n, path) => { found.push(path) })
  return found
}

/** Removes every unknown field in place; returns their paths. */
export function pruneUnknownFields (def: ResourceDefinition, obj: unknown): string[] {
  const pruned: string[] = []
  walk(createResolver(def.definitions), obj, def.schema, '', true, (container, name, path) => {
    delete container[name]
    pruned.push(path)
  })
  return pruned
}
