// Unknown fields: finding them (for fieldValidation Warn/Strict) and pruning them (Ignore, and CRD pruning).
//
// A field is unknown when its object's schema declares `properties` (or none at all) and the name is not
// among them, unless the node preserves unknown fields or maps names through `additionalProperties`.
// Embedded resources and the root always know apiVersion, kind and metadata.
import { resolverFor, type SchemaResolver } from './resolve.js'
import * as fe from './field-errors.js'
import type { ResourceDefinition, StructuralSchema } from './types.js'

const typeMetaFields = new Set(['apiVersion', 'kind', 'metadata'])

type Visit = (container: Record<string, unknown>, name: string, path: string) => void

/**
 * One step of the path to the node being walked: a field's name, an item's index, or a map key (boxed, to tell it from
 * a field). The path's text is made only for an unknown field, and only map keys allocate a step: this walk runs on
 * every write, and building a string (then an object) per node was most of its cost.
 */
type Step = string | number | { key: string }

function pathText (steps: Step[]): string {
  let path = ''
  for (const s of steps) {
    path = typeof s === 'string' ? fe.child(path, s) : typeof s === 'number' ? fe.index(path, s) : fe.key(path, s.key)
  }
  return path
}

interface Walk { r: SchemaResolver, steps: Step[], onUnknown: Visit }

function walk (w: Walk, value: unknown, node: StructuralSchema, atResourceRoot: boolean): void {
  if (value === null || typeof value !== 'object') return
  const s = w.r.resolve(node)
  if (Array.isArray(value)) {
    if (s.items === undefined) return
    for (let i = 0; i < value.length; i++) {
      w.steps.push(i)
      walk(w, value[i], s.items, false)
      w.steps.pop()
    }
    return
  }
  if (s['x-orch-int-or-string'] === true) return
  const obj = value as Record<string, unknown>
  const preserve = s['x-orch-preserve-unknown-fields'] === true
  const embedded = atResourceRoot || s['x-orch-embedded-resource'] === true
  const extra = s.additionalProperties
  // Keys are listed first: pruning deletes from `obj` while walking it.
  for (const name of Object.keys(obj)) {
    const prop = s.properties?.[name]
    if (prop !== undefined || typeof extra === 'object') {
      w.steps.push(prop !== undefined ? name : { key: name })
      walk(w, obj[name], prop ?? extra as StructuralSchema, false)
      w.steps.pop()
    } else if (preserve || extra === true || (embedded && typeMetaFields.has(name))) continue
    else {
      w.steps.push(name)
      w.onUnknown(obj, name, pathText(w.steps))
      w.steps.pop()
    }
  }
}

/** Paths of every unknown field, in document order (`spec.foo`, `spec.containers[0].bar`). */
export function findUnknownFields (def: ResourceDefinition, obj: unknown): string[] {
  const found: string[] = []
  walk({ r: resolverFor(def), steps: [], onUnknown: (_c, _n, path) => { found.push(path) } }, obj, def.schema, true)
  return found
}

/** Removes every unknown field in place; returns their paths. */
export function pruneUnknownFields (def: ResourceDefinition, obj: unknown): string[] {
  const pruned: string[] = []
  walk({
    r: resolverFor(def),
    steps: [],
    onUnknown: (container, name, path) => {
      delete container[name]
      pruned.push(path)
    }
  }, obj, def.schema, true)
  return pruned
}
