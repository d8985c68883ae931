// The merge structure server-side apply walks: scalars, maps (structs and granular or atomic maps) and lists
// (atomic, set, or map keyed by fields), as structured-merge-diff's schema atoms; plus `deduced`, typed by the value.

import type { Json } from '../patch/json-pointer.js'

export interface ScalarType { kind: 'scalar' }

export interface MapType {
  kind: 'map'
  /** Replaced wholesale and owned as one field. */
  atomic: boolean
  /** The type of a declared field, or of any other key (`elementType`); undefined for a key the schema does not know. */
  fieldType: (name: string) => MergeType | undefined
  /**
   * Whether `name` is a declared struct field. A key that is not (a granular map's entry, every key of a
   * deduced object) is itself recorded as owned, besides its leaves.
   */
  declares: (name: string) => boolean
}

export interface ListType {
  kind: 'list'
  relationship: 'atomic' | 'set' | 'map'
  /** Key fields of a `map` list. */
  keys: string[]
  /** A key field's default when an item omits it (e.g. `protocol: TCP` of container ports). */
  keyDefault: (name: string) => Json | undefined
  element: MergeType
}

/** Free-form JSON: objects are granular maps of deduced values, lists are atomic, anything else a scalar. */
export interface DeducedType { kind: 'deduced' }

export type MergeType = ScalarType | MapType | ListType | DeducedType

export const SCALAR: ScalarType = { kind: 'scalar' }
export const DEDUCED: DeducedType = { kind: 'deduced' }

const DEDUCED_MAP: MapType = { kind: 'map', atomic: false, fieldType: () => DEDUCED, declares: () => false }
const DEDUCED_LIST: ListType = { kind: 'list', relationship: 'atomic', keys: [], keyDefault: () => undefined, element: DEDUCED }

/** The concrete type for a value: a deduced type takes the value's shape; a typed one stays as declared. */
export function atomFor (t: MergeType, value: Json | undefined): ScalarType | MapType | ListType {
  if (t.kind !== 'deduced') return t
  if (value !== null && typeof value === 'object') return Array.isArray(value) ? DEDUCED_LIST : DEDUCED_MAP
  return SCALAR
}

/** Whether a value has the shape its type wants (a mismatch is treated as one leaf, replaced whole). */
export function fits (t: ScalarType | MapType | ListType, value: Json | undefined): boolean {
  if (value === undefined || value === null) return true
  if (t.kind === 'map') return typeof value === 'object' && !Array.isArray(value)
  if (t.kind === 'list') return Array.isArray(value)
  return typeof value !== 'object'
}
