// The merge structure of a served kind, read from its structural schema's markers (spec §4.11.7).
// Built-in kinds: properties are struct fields; lists follow x-orch-list-type, else a `merge` patch strategy
// (a map keyed by the merge key, or a set), else atomic. Custom resources: objects are granular (every key
// is recorded) and lists atomic unless the schema carries list markers.

import { createResolver, type SchemaResolver } from '../../schema/resolve.js'
import type { ResourceDefinition, StructuralSchema } from '../../schema/types.js'
import type { Json } from '../patch/json-pointer.js'
import { DEDUCED, SCALAR, type ListType, type MapType, type MergeType } from './merge-type.js'

/** The merge type of a kind's objects; one per definition (types are built lazily and cached per schema node). */
export function mergeTypeOf (def: ResourceDefinition): MergeType {
  const resolver = createResolver(def.definitions)
  const structured = new SchemaTypes(resolver, false)
  if (def.custom === undefined) return structured.typeOf(def.schema)
  // A custom resource's metadata is ObjectMeta, typed as for built-in kinds (finalizers a set, owners keyed by uid).
  const root = new SchemaTypes(resolver, true).typeOf(def.schema)
  const metadata = def.schema.properties?.metadata
  if (root.kind !== 'map' || metadata === undefined) return root
  const metaType = structured.typeOf(metadata)
  return { ...root, fieldType: (name) => name === 'metadata' ? metaType : root.fieldType(name) }
}

class SchemaTypes {
  private readonly cache = new WeakMap<StructuralSchema, MergeType>()

  constructor (private readonly resolver: SchemaResolver, private readonly unstructured: boolean) {}

  typeOf (node: StructuralSchema): MergeType {
    const hit = this.cache.get(node)
    if (hit !== undefined) return hit
    const s = this.resolve(node)
    const t = this.build(s)
    this.cache.set(node, t)
    return t
  }

  private build (s: StructuralSchema): MergeType {
    if (s['x-orch-int-or-string'] === true) return SCALAR
    if (s.type === 'array' || (s.type === undefined && s.items !== undefined)) return this.list(s)
    if (s.type === 'object' || s.properties !== undefined || s.additionalProperties !== undefined) return this.map(s)
    if (s.type === undefined) return DEDUCED
    return SCALAR
  }

  private map (s: StructuralSchema): MergeType {
    const props = s.properties
    const extra = typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined
    const preserve = s['x-orch-preserve-unknown-fields'] === true || s.additionalProperties === true
    if (props === undefined && extra === undefined && !this.unstructured) return DEDUCED
    const fields = new Map<string, MergeType>()
    let element: MergeType | undefined
    const t: MapType = {
      kind: 'map',
      atomic: s['x-orch-map-type'] === 'atomic',
      fieldType: (name) => {
        // Declared fields are remembered first: the merge walks ask for every key of every object they visit.
        const known = fields.get(name)
        if (known !== undefined) return known
        const prop = props?.[name]
        if (prop !== undefined) {
          const f = this.typeOf(prop)
          fields.set(name, f)
          return f
        }
        if (extra !== undefined) return (element ??= this.typeOf(extra))
        return preserve || this.unstructured ? DEDUCED : undefined
      },
      // `fields` holds only declared names (keys of other maps are not remembered: they are unbounded).
      declares: (name) => !this.unstructured && (fields.has(name) || props?.[name] !== undefined)
    }
    return t
  }

  private list (s: StructuralSchema): ListType {
    const itemsNode = s.items ?? {}
    const items = this.resolve(itemsNode)
    let element: MergeType | undefined
    const marker = s['x-orch-list-type']
    const strategy = (s['x-orch-patch-strategy'] ?? '').split(',')
    const mergeKey = s['x-orch-patch-merge-key']
    let relationship: ListType['relationship'] = 'atomic'
    let keys: string[] = []
    if (marker === 'map') {
      relationship = 'map'
      keys = s['x-orch-list-map-keys'] ?? (mergeKey !== undefined ? [mergeKey] : [])
    } else if (marker === 'set') {
      relationship = 'set'
    } else if (marker === undefined && !this.unstructured && strategy.includes('merge')) {
      if (mergeKey !== undefined && mergeKey !== '') {
        relationship = 'map'
        keys = [mergeKey]
      } else {
        relationship = 'set'
      }
    }
    const t: ListType = {
      kind: 'list',
      relationship,
      keys,
      keyDefault: (name) => this.resolver.property(items, name)?.default as Json | undefined,
      get element () { return element ??= types.typeOf(itemsNode) }
    }
    const types = this
    return t
  }

  /** `$ref` followed, and `allOf: [{$ref}]` (OpenAPI v3's way of annotating a reference) read as the reference. */
  private resolve (node: StructuralSchema): StructuralSchema {
    const s = this.resolver.resolve(node)
    if (s.properties === undefined && s.type === undefined && s.allOf !== undefined && s.allOf.length === 1) {
      const { allOf, ...rest } = s
      return { ...this.resolve(allOf[0]), ...rest }
    }
    return s
  }
}
