// The schema lookup strategic merge patch is driven by: per field, the sub-schema and its patch strategy and merge key.
// One implementation walks orch's structural schemas (built-in kinds, and any OpenAPI document converted to them).

import { createResolver, type SchemaResolver } from '../../schema/resolve.js'
import type { ResourceDefinition, StructuralSchema } from '../../schema/types.js'
import { SmpError } from './smp-values.js'

export interface PatchMeta {
  /** `merge`, `replace`, `retainKeys` or `merge,retainKeys` split on the comma; empty when none. */
  strategies: string[]
  /** The merge key of a merging list of objects; '' when none. */
  mergeKey: string
}

/** What the algorithm asks of a schema (Kubernetes' LookupPatchMeta). Lookups throw SmpError for unknown fields. */
export interface PatchSchema {
  /** The schema of field `key` holding an object, and the field's patch metadata. */
  lookupStruct (key: string): [PatchSchema, PatchMeta]
  /** The schema of the items of list field `key`, and the field's patch metadata. */
  lookupSlice (key: string): [PatchSchema, PatchMeta]
  /** The type's name, for error messages. */
  name (): string
}

const NO_META: PatchMeta = { strategies: [], mergeKey: '' }

/** A value the schema says nothing about (free-form JSON): maps merge key by key, lists are replaced. */
export const OPAQUE_SCHEMA: PatchSchema = {
  lookupStruct: () => [OPAQUE_SCHEMA, NO_META],
  lookupSlice: () => [OPAQUE_SCHEMA, NO_META],
  name: () => 'Object'
}

/** The patch schema of a served kind (built-in kinds carry the v1.29 markers in their definitions). */
export function patchSchemaOf (def: ResourceDefinition): PatchSchema {
  return structuralPatchSchema(def.schema, createResolver(def.definitions), def.kind)
}

/** A PatchSchema over a structural schema node; `x-orch-patch-strategy` / `x-orch-patch-merge-key` give the metadata. */
export function structuralPatchSchema (node: StructuralSchema, resolver: SchemaResolver, typeName = 'Object'): PatchSchema {
  let resolved: StructuralSchema | undefined
  const self = (): StructuralSchema => (resolved ??= resolveNode(node, resolver))

  function field (key: string): [StructuralSchema, PatchMeta, string] | undefined {
    const s = self()
    const prop = s.properties?.[key]
    if (prop !== undefined) return [prop, metaOf(resolveNode(prop, resolver)), refName(prop) ?? key]
    if (s.additionalProperties !== null && typeof s.additionalProperties === 'object') {
      return [s.additionalProperties, NO_META, refName(s.additionalProperties) ?? typeName]
    }
    if (isFreeForm(s)) return undefined
    throw new SmpError(`unable to find api field in struct ${typeName} for the json field "${key}"`)
  }

  const schema: PatchSchema = {
    lookupStruct (key) {
      const f = field(key)
      if (f === undefined) return [OPAQUE_SCHEMA, NO_META]
      return [structuralPatchSchema(f[0], resolver, f[2]), f[1]]
    },
    lookupSlice (key) {
      const f = field(key)
      if (f === undefined) return [OPAQUE_SCHEMA, NO_META]
      const items = resolveNode(f[0], resolver).items
      // A field that is an object where a list was met is looked up as that object (as Kubernetes does).
      const target = items ?? f[0]
      return [structuralPatchSchema(target, resolver, refName(target) ?? f[2]), f[1]]
    },
    name: () => typeName
  }
  return schema
}

/** The node with `$ref` followed, and `allOf: [{$ref}]` (OpenAPI v3's way to annotate a reference) read as the reference. */
function resolveNode (node: StructuralSchema, resolver: SchemaResolver): StructuralSchema {
  const s = resolver.resolve(node)
  if (s.properties === undefined && s.allOf !== undefined && s.allOf.length > 0) {
    const { allOf, ...rest } = s
    return { ...resolveNode(allOf[0], resolver), ...stripUndefined(rest) }
  }
  return s
}

function stripUndefined (s: StructuralSchema): StructuralSchema {
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(s)) if (v !== undefined && k !== 'description') out[k] = v
  return out as StructuralSchema
}

function metaOf (s: StructuralSchema): PatchMeta {
  const strategy = s['x-orch-patch-strategy']
  return {
    strategies: typeof strategy === 'string' && strategy !== '' ? strategy.split(',') : [],
    mergeKey: typeof s['x-orch-patch-merge-key'] === 'string' ? s['x-orch-patch-merge-key'] : ''
  }
}

/** Free-form JSON: preserved unknown fields without declared properties, or a node with no type at all. */
function isFreeForm (s: StructuralSchema): boolean {
  if (s.properties !== undefined) return false
  if (s['x-orch-preserve-unknown-fields'] === true || s['x-orch-int-or-string'] === true) return true
  return s.type === undefined && s.items === undefined
}

function refName (node: StructuralSchema): string | undefined {
  const ref = node.$ref ?? node.allOf?.[0]?.$ref
  if (ref === undefined) return undefined
  const last = ref.split('/').pop() ?? ref
  return last.split('.').pop()
}
