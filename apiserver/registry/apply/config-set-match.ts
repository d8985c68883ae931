// Whether a configuration sets exactly the fields of a given set, found in one walk that builds no set: an applier
// that sends the same structure again (new values, as a new image) keeps its set instead of a new equal one being
// made and compared.

import type { Json, JsonObject } from '../patch/json-pointer.js'
import { fieldElement, firstDuplicate, type PathElement } from './field-path.js'
import type { FieldSet } from './field-set.js'
import { atomFor, fits, type MergeType } from './merge-type.js'
import { fieldTypeOf, isAtomic, itemElement } from './typed-sets.js'

/**
 * The fields a write may not own, when they are dropped as FieldSet.dropShallow drops them: elements at the top (with
 * what lies below them), and members below the top element `under` (`under` itself is dropped as a member only).
 */
export interface DroppedFields {
  readonly top: ReadonlySet<PathElement>
  readonly under: PathElement
  readonly members: ReadonlySet<PathElement>
}

/** What a value contributes to its parent node: one member, nothing, a node with paths, or not `target`'s part. */
type Visit = 'leaf' | 'none' | 'node' | false

/**
 * Whether `toFieldSet(config, type)` with `dropped` dropped equals `target` (FieldSet.equals). False also when the
 * walk cannot tell cheaply (duplicate items, dropped top fields that are not scalars): ask toFieldSet then. It
 * computes every list item's element as toFieldSet does, so a configuration toFieldSet refuses is refused here too
 * (or false is returned first).
 */
export function setsExactly (config: Json, type: MergeType, target: FieldSet, dropped: DroppedFields): boolean {
  const t = atomFor(type, config)
  if (t.kind !== 'map' || isAtomic(t) || config === null || typeof config !== 'object' || Array.isArray(config)) return false
  const r = visitMap(type, config, target, dropped, undefined)
  return r === 'node' || (r === 'none' && target.empty())
}

function visit (type: MergeType, v: Json, target: FieldSet | undefined, droppedMembers?: ReadonlySet<PathElement>): Visit {
  const t = atomFor(type, v)
  if (t.kind === 'scalar' || !fits(t, v) || isAtomic(t)) return 'leaf'
  if (v === null) return 'none'
  if (t.kind === 'list') {
    const items = v as Json[]
    if (items.length === 0) return 'none'
    const pes = items.map((item, i) => itemElement(t, item, i))
    if (target === undefined || firstDuplicate(pes) !== undefined) return false
    let children = 0
    for (let i = 0; i < items.length; i++) {
      if (!target.members.has(pes[i])) return false
      const r = visit(t.element, items[i], target.children.get(pes[i]))
      if (r === false) return false
      if (r === 'node') children++
    }
    return items.length === target.members.size && children === nonEmptyChildren(target) ? 'node' : false
  }
  return visitMap(type, v as JsonObject, target, undefined, droppedMembers)
}

/** A map's node; `dropped` at the top, `droppedMembers` below its `under` element. */
function visitMap (type: MergeType, m: JsonObject, target: FieldSet | undefined, dropped: DroppedFields | undefined,
  droppedMembers: ReadonlySet<PathElement> | undefined): Visit {
  const t = atomFor(type, m)
  if (t.kind !== 'map') return false
  let members = 0
  let children = 0
  for (const k in m) {
    const child = m[k]
    const kpe = fieldElement(k)
    if (dropped?.top.has(kpe) === true) {
      // Dropped with all below: only a scalar is certain to hold nothing toFieldSet would refuse.
      if (child === null || typeof child === 'object') return false
      continue
    }
    const childTarget = target?.children.get(kpe)
    const r = visit(fieldTypeOf(t, k), child, childTarget, dropped?.under === kpe ? dropped.members : undefined)
    if (r === false) return false
    const member = r === 'leaf' || child === null || (typeof child === 'object' && !Array.isArray(child) && isEmptyObject(child)) || !t.declares(k)
    if (member && droppedMembers?.has(kpe) !== true && dropped?.under !== kpe) {
      if (target?.members.has(kpe) !== true) return false
      members++
    }
    if (r === 'node') children++
  }
  if (target === undefined) return 'none'
  if (members !== target.members.size || children !== nonEmptyChildren(target)) return false
  return members + children > 0 ? 'node' : 'none'
}

function nonEmptyChildren (s: FieldSet): number {
  let n = 0
  for (const c of s.children.values()) if (!c.empty()) n++
  return n
}

function isEmptyObject (o: object): boolean {
  for (const _ in o) return false
  return true
}
