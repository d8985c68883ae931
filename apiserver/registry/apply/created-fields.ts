// The FieldsV1 tree of a create's Update entry, encoded in one walk of the object: what compare({}, object) finds
// added, less the system fields no manager owns, as FieldSet.toFieldsV1 would spell it. Every create records one, so it
// skips building the set of paths only to encode it.

import type { Json, JsonObject } from '../patch/json-pointer.js'
import type { PathElement } from './field-path.js'
import { atomFor, fits, type MergeType } from './merge-type.js'
import { emptyish, fieldTypeOf, isAtomic, itemElement } from './typed-sets.js'

type Tree = Record<string, unknown>

export interface CreatedFieldsFilter {
  /** Top-level elements dropped with everything below them (`f:apiVersion`, `f:kind`, `f:status` with a status subresource). */
  top: ReadonlySet<PathElement>
  /** Elements below `f:metadata` no one owns (`f:name`, `f:uid`, ...); `f:metadata` itself is not owned either. */
  metadata: ReadonlySet<PathElement>
}

/** The tree, or undefined when the object's type is not a granular map (the general path then handles it). */
export function createdFieldsV1 (object: JsonObject, type: MergeType, filter: CreatedFieldsFilter): Tree | undefined {
  const t = atomFor(type, object)
  if (t.kind !== 'map' || t.atomic) return undefined
  const out: Tree = {}
  for (const k of Object.keys(object).sort()) {
    const pe = 'f:' + k
    if (filter.top.has(pe)) continue
    const sub = encodeAdded(fieldTypeOf(t, k), object[k], k === 'metadata' ? filter.metadata : undefined)
    // The metadata member is not owned: only what lies below it, without the system fields.
    if (k === 'metadata') delete sub['.']
    if (!isEmptyTree(sub)) out[pe] = sub
  }
  return out
}

function isEmptyTree (t: Tree): boolean {
  for (const _ in t) return false
  return true
}

/**
 * What addAll records for a value absent before, as a member: `{}` for a leaf, else `'.'` and each field or item.
 * `skip`: fields left out (the system metadata no one owns).
 */
function encodeAdded (type: MergeType, v: Json, skip?: ReadonlySet<PathElement>): Tree {
  const t = atomFor(type, v)
  if (t.kind === 'scalar' || !fits(t, v) || isAtomic(t) || emptyish(v)) return {}
  const out: Tree = { '.': {} }
  if (t.kind === 'map') {
    // Field elements share their `f:` prefix, so sorting the names sorts the elements.
    const m = v as JsonObject
    for (const k of Object.keys(m).sort()) {
      const pe = 'f:' + k
      if (skip?.has(pe) === true) continue
      out[pe] = encodeAdded(fieldTypeOf(t, k), m[k])
    }
    return out
  }
  // Items of a map or set list are all `k:` or all `v:` elements: ordered by their text.
  const items = v as Json[]
  const pes = items.map((item, i) => itemElement(t, item, i))
  const order = pes.map((_, i) => i).sort((a, b) => pes[a] < pes[b] ? -1 : pes[a] > pes[b] ? 1 : a - b)
  for (let j = 0; j < order.length; j++) {
    const i = order[j]
    const pe = pes[i]
    if (j > 0 && pes[order[j - 1]] === pe) continue
    // A key given twice is owned as one item, not descended into.
    const duplicated = j + 1 < order.length && pes[order[j + 1]] === pe
    out[pe] = duplicated ? {} : encodeAdded(t.element, items[i])
  }
  return out
}
