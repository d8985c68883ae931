// Structural defaulting from schema `default`s, as CRDs do: a default fills an absent field whose parent object exists.
//
// Defaults are copied (never shared) and then themselves defaulted, so a defaulted object gets its
// nested defaults too. A null counts as absent for built-in kinds (Go decodes null as the zero value)
// and, for custom kinds, where the node is not nullable (Kubernetes prunes such nulls before defaulting).
import { createResolver, type SchemaResolver } from './resolve.js'
import type { ResourceDefinition, StructuralSchema } from './types.js'

export function applyDefaults (def: ResourceDefinition, obj: unknown): void {
  const r = createResolver(def.definitions)
  defaultNode(r, obj, def.schema, def.custom === undefined)
}

function defaultNode (r: SchemaResolver, value: unknown, node: StructuralSchema, builtin: boolean): void {
  if (value === null || typeof value !== 'object') return
  const s = r.resolve(node)
  if (Array.isArray(value)) {
    if (s.items !== undefined) for (const item of value) defaultNode(r, item, s.items, builtin)
    return
  }
  const obj = value as Record<string, unknown>
  for (const [name, propNode] of Object.entries(s.properties ?? {})) {
    const prop = r.resolve(propNode)
    if (prop.default === undefined) continue
    const current = obj[name]
    if (current === undefined || (current === null && (builtin || prop.nullable !== true))) {
      obj[name] = structuredClone(prop.default)
    }
  }
  const extra = typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined
  for (const [name, v] of Object.entries(obj)) {
    const prop = s.properties?.[name]
    if (prop !== undefined) defaultNode(r, v, prop, builtin)
    else if (extra !== undefined) defaultNode(r, v, extra, builtin)
  }
}
