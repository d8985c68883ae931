// Reads structured-merge-diff's schema format (the conformance cases' schemas) into merge types, for tests.
// Named types resolve lazily, so recursive schemas work; `__untyped_deduced_` is the deduced type.

import { parse } from 'yaml'
import { DEDUCED, SCALAR, type ListType, type MapType, type MergeType } from './merge-type.js'

interface TypeDef { name?: string; scalar?: string; map?: MapDef; list?: ListDef; namedType?: string }
interface MapDef { fields?: Array<{ name: string; type: TypeDef; default?: unknown }>; elementType?: TypeDef; elementRelationship?: string }
interface ListDef { elementType: TypeDef; elementRelationship?: string; keys?: string[] }

/** The merge type named `root` in a schema document (`types: [...]`). */
export function smdSchemaType (yamlText: string, root: string): MergeType {
  const doc = parse(yamlText) as { types: TypeDef[] }
  const named = new Map<string, TypeDef>(doc.types.map(t => [t.name ?? '', t]))
  const built = new Map<string, MergeType>()

  function ref (t: TypeDef): MergeType {
    if (t.namedType !== undefined) return namedType(t.namedType)
    return build(t)
  }

  function namedType (name: string): MergeType {
    if (name === '__untyped_deduced_' || name === '__untyped_atomic_') return DEDUCED
    const hit = built.get(name)
    if (hit !== undefined) return hit
    const def = named.get(name)
    if (def === undefined) throw new Error(`schema names no type ${name}`)
    const t = build(def)
    built.set(name, t)
    return t
  }

  function build (t: TypeDef): MergeType {
    if (t.map !== undefined) return mapType(t.map)
    if (t.list !== undefined) return listType(t.list)
    return SCALAR
  }

  function mapType (m: MapDef): MapType {
    const fields = new Map((m.fields ?? []).map(f => [f.name, f.type]))
    return {
      kind: 'map',
      atomic: m.elementRelationship === 'atomic',
      fieldType: (name) => {
        const f = fields.get(name)
        if (f !== undefined) return ref(f)
        return m.elementType !== undefined ? ref(m.elementType) : undefined
      },
      declares: (name) => fields.has(name)
    }
  }

  function listType (l: ListDef): ListType {
    const keys = l.keys ?? []
    const relationship = l.elementRelationship === 'associative' ? (keys.length > 0 ? 'map' : 'set') : 'atomic'
    return { kind: 'list', relationship, keys, keyDefault: () => undefined, get element () { return ref(l.elementType) } }
  }

  return namedType(root)
}
