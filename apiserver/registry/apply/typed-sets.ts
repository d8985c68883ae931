// Field sets of typed values: what a configuration sets (toFieldSet) and what changed between two values (compare),
// with structured-merge-diff's rules for leaves, atomic structures, granular keys and list items.

import { isObject, jsonEqual, type Json, type JsonObject } from '../patch/json-pointer.js'
import { fieldElement, keyElement, stableJson, valueElement, type PathElement } from './field-path.js'
import { FieldSet } from './field-set.js'
import { DEDUCED, atomFor, fits, type ListType, type MapType, type MergeType } from './merge-type.js'

/** A value that does not fit the merge structure (a keyed item without keys, duplicates in a configuration). */
export class ApplyTypeError extends Error {
  readonly code = 'APPLY_ERR_TYPE'
}

/** The element naming list item `index`: its key fields (with defaults) for a map list, the value for a set. */
export function itemElement (t: ListType, item: Json, index: number): PathElement {
  if (t.relationship === 'set') {
    if (item === null || typeof item === 'object') {
      throw new ApplyTypeError(`element ${index}: associative list without keys has an element that's ${item === null ? 'an explicit null' : Array.isArray(item) ? 'a list' : 'a map type'}`)
    }
    return valueElement(item)
  }
  if (!isObject(item)) {
    throw new ApplyTypeError(`element ${index}: associative list with keys may not have ${item === null ? 'a null element' : 'non-map elements'}`)
  }
  if (t.keys.length === 1) {
    const k = t.keys[0]
    const v = Object.prototype.hasOwnProperty.call(item, k) ? item[k] : t.keyDefault(k)
    if (typeof v === 'string' || typeof v === 'number') return keyedElement(t, k, v)
  } else if (t.keys.length > 1) {
    const id = scalarKeysId(t, item)
    if (id !== undefined) {
      const byId = elementsOf(t)
      let pe = byId.get(id)
      if (pe === undefined) {
        pe = keyFieldsElement(t, item, index)
        if (byId.size >= KEYED_LIMIT) byId.clear()
        byId.set(id, pe)
      }
      return pe
    }
  }
  return keyFieldsElement(t, item, index)
}

/**
 * An unambiguous text of the key values of an item of a list with several keys (each a string, a number or absent),
 * to find its element by; undefined when some value is anything else.
 */
function scalarKeysId (t: ListType, item: JsonObject): string | undefined {
  let id = ''
  for (const k of t.keys) {
    const v = Object.prototype.hasOwnProperty.call(item, k) ? item[k] : t.keyDefault(k)
    if (typeof v === 'string') id += 's' + String(v.length) + ':' + v
    else if (typeof v === 'number') id += 'n' + String(v) + ';'
    else if (v === undefined) id += '-'
    else return undefined
  }
  return id
}

function keyFieldsElement (t: ListType, item: JsonObject, index: number): PathElement {
  const fields: Array<[string, Json]> = []
  for (const k of t.keys) {
    const v = Object.prototype.hasOwnProperty.call(item, k) ? item[k] : t.keyDefault(k)
    if (v !== undefined) fields.push([k, v])
  }
  if (fields.length === 1) return 'k:{' + JSON.stringify(fields[0][0]) + ':' + stableJson(fields[0][1]) + '}'
  if (t.keys.length > 0 && fields.length === 0) {
    throw new ApplyTypeError(`element ${index}: associative list with keys has an element that omits all key fields ${JSON.stringify(t.keys)} (and doesn't have default values for any key fields)`)
  }
  return keyElement(fields)
}

/**
 * Elements of keyed items by key value (lists with one key) or by `scalarKeysId` (several keys), per list type: the
 * same names recur in every write of an object.
 */
const keyedElements = new WeakMap<ListType, Map<string | number, PathElement>>()
function elementsOf (t: ListType): Map<string | number, PathElement> {
  let m = keyedElements.get(t)
  if (m === undefined) keyedElements.set(t, m = new Map())
  return m
}

/** Entries one list type keeps (past it they start again): key values are data, not schema. */
const KEYED_LIMIT = 4096

/**
 * `k:{"<key>":<value>}`, one string per value: equal items of the two sides of a merge or comparison then hold the
 * same string, so matching them compares references rather than characters.
 */
function keyedElement (t: ListType, key: string, value: string | number): PathElement {
  const byValue = elementsOf(t)
  let pe = byValue.get(value)
  if (pe === undefined) {
    if (byValue.size >= KEYED_LIMIT) byValue.clear()
    pe = 'k:{' + JSON.stringify(key) + ':' + stableJson(value) + '}'
    byValue.set(value, pe)
  }
  return pe
}

export function fieldTypeOf (t: MapType, key: string): MergeType {
  return t.fieldType(key) ?? DEDUCED
}

/** The paths a value sets: each leaf, atomic structures as one path, list items and non-struct keys themselves too. */
export function toFieldSet (value: Json, type: MergeType): FieldSet {
  const out = new FieldSet()
  collect(type, value, out, undefined, out)
  return out
}

/**
 * Adds the paths `v` sets to `out`. `v` lies at element `pe` below the node `parent` (the root: `parent` is `out`
 * and `pe` undefined); a path is added to its parent node directly rather than walked down to from the root, and a
 * node is made only when something lies below it (an empty node would count as a prefix where sets are expanded).
 */
function collect (type: MergeType, v: Json, parent: FieldSet, pe: PathElement | undefined, out: FieldSet): void {
  const t = atomFor(type, v)
  if (t.kind === 'scalar' || !fits(t, v) || isAtomic(t)) {
    if (pe !== undefined) parent.addMember(pe)
    return
  }
  if (v === null) return
  if (t.kind === 'list') {
    const items = v as Json[]
    if (items.length === 0) return
    const node = pe === undefined ? out : parent.child(pe)
    const pes = items.map((item, i) => itemElement(t, item, i))
    let dups: Set<PathElement> | undefined
    if (new Set(pes).size !== pes.length) {
      dups = new Set()
      const seen = new Set<PathElement>()
      for (const p of pes) {
        if (seen.has(p) && !dups.has(p)) {
          dups.add(p)
          node.addMember(p)
        }
        seen.add(p)
      }
    }
    for (let i = 0; i < items.length; i++) {
      if (dups?.has(pes[i]) === true) continue
      collect(t.element, items[i], node, pes[i], out)
      node.addMember(pes[i])
    }
    return
  }
  const m = v as JsonObject
  let node: FieldSet | undefined
  for (const k in m) {
    node ??= pe === undefined ? out : parent.child(pe)
    const child = m[k]
    const kpe = fieldElement(k)
    collect(fieldTypeOf(t, k), child, node, kpe, out)
    if (child === null || (typeof child === 'object' && !Array.isArray(child) && isEmptyObject(child)) || !t.declares(k)) node.addMember(kpe)
  }
  // Nothing below (every member an empty list): no node, as when paths are inserted one by one.
  if (node !== undefined && node !== out && pe !== undefined && node.members.size === 0 && node.children.size === 0) parent.deleteChild(pe)
}

function isEmptyObject (o: object): boolean {
  for (const _ in o) return false
  return true
}

export interface Comparison {
  added: FieldSet
  modified: FieldSet
  removed: FieldSet
}

export function isSame (c: Comparison): boolean {
  return c.added.empty() && c.modified.empty() && c.removed.empty()
}

/** The paths added, modified and removed from `lhs` to `rhs` (undefined = absent). */
export function compare (lhs: Json | undefined, rhs: Json | undefined, type: MergeType): Comparison {
  const c: Comparison = { added: new FieldSet(), modified: new FieldSet(), removed: new FieldSet() }
  // From an empty object (every create): all of rhs is added; built node by node rather than path by path.
  if (isObject(lhs) && isEmptyObject(lhs) && isObject(rhs)) {
    const t = atomFor(type, rhs)
    if (t.kind === 'map' && !t.atomic) {
      for (const k in rhs) addAll(c.added, fieldElement(k), fieldTypeOf(t, k), rhs[k])
      return c
    }
  }
  compareAt(type, lhs, rhs, [], c)
  return c
}

/**
 * Adds to `node` (the set at some path) what compareAt finds added below it for a value absent on the left:
 * `pe` itself, then, unless the value is a leaf, atomic or empty, each of its fields or items.
 */
function addAll (node: FieldSet, pe: PathElement, type: MergeType, v: Json): void {
  node.addMember(pe)
  const t = atomFor(type, v)
  if (t.kind === 'scalar' || !fits(t, v) || isAtomic(t) || emptyish(v)) return
  const below = node.child(pe)
  if (t.kind === 'map') {
    const m = v as JsonObject
    for (const k in m) addAll(below, fieldElement(k), fieldTypeOf(t, k), m[k])
    return
  }
  const items = v as Json[]
  const pes = items.map((item, i) => itemElement(t, item, i))
  const counts = new Map<PathElement, number>()
  for (const p of pes) counts.set(p, (counts.get(p) ?? 0) + 1)
  for (let i = 0; i < items.length; i++) {
    // A key given twice is owned as one item, not descended into (as compareItems does).
    if ((counts.get(pes[i]) ?? 0) > 1) below.addMember(pes[i])
    else addAll(below, pes[i], t.element, items[i])
  }
}

/** `path` is a shared stack, as in collect. */
function compareAt (type: MergeType, l: Json | undefined, r: Json | undefined, path: PathElement[], c: Comparison): void {
  if (l === r) return // the same subtree (merges share what they leave alone)
  const al = atomFor(type, l)
  const ar = atomFor(type, r)
  const t = r === undefined ? al : ar
  const leaf = (al.kind !== ar.kind && l !== undefined && r !== undefined) || t.kind === 'scalar' || !fits(t, l) || !fits(t, r) ||
    isAtomic(t) || (emptyish(l) && emptyish(r))
  if (leaf) {
    if (l === undefined) c.added.insert(path)
    else if (r === undefined) c.removed.insert(path)
    else if (!jsonEqual(l, r)) c.modified.insert(path)
    return
  }
  if (t.kind === 'list') compareItems(t as ListType, (l ?? null) as Json[] | null, (r ?? null) as Json[] | null, path, c)
  else {
    const lm = isObject(l) ? l : EMPTY
    const rm = isObject(r) ? r : EMPTY
    const mt = t as MapType
    for (const k in lm) {
      path.push(fieldElement(k))
      compareAt(fieldTypeOf(mt, k), lm[k], Object.prototype.hasOwnProperty.call(rm, k) ? rm[k] : undefined, path, c)
      path.pop()
    }
    for (const k in rm) {
      if (Object.prototype.hasOwnProperty.call(lm, k)) continue
      path.push(fieldElement(k))
      compareAt(fieldTypeOf(mt, k), undefined, rm[k], path, c)
      path.pop()
    }
  }
  if (l === undefined) c.added.insert(path)
  else if (r === undefined) c.removed.insert(path)
}

const EMPTY: JsonObject = Object.freeze({}) as JsonObject

function compareItems (t: ListType, l: Json[] | null, r: Json[] | null, path: PathElement[], c: Comparison): void {
  const index = (items: Json[] | null): Map<PathElement, Json[]> => {
    const m = new Map<PathElement, Json[]>()
    ;(items ?? []).forEach((item, i) => {
      const pe = itemElement(t, item, i)
      const list = m.get(pe)
      if (list === undefined) m.set(pe, [item])
      else list.push(item)
    })
    return m
  }
  const lv = index(l)
  const rv = index(r)
  const visit = (pe: PathElement): void => {
    const ls = lv.get(pe) ?? []
    const rs = rv.get(pe) ?? []
    path.push(pe)
    if (ls.length <= 1 && rs.length <= 1) compareAt(t.element, ls[0], rs[0], path, c)
    else if (ls.length >= 2 && rs.length >= 2) {
      if (ls.length !== rs.length || ls.some((x, i) => !jsonEqual(x, rs[i]))) c.modified.insert(path)
    } else if (ls.length >= 2) {
      if (rs.length !== 0) compareAt(t.element, undefined, rs[0], path, c)
      c.removed.insert(path)
    } else {
      if (ls.length !== 0) compareAt(t.element, ls[0], undefined, path, c)
      c.added.insert(path)
    }
    path.pop()
  }
  for (const pe of lv.keys()) visit(pe)
  for (const pe of rv.keys()) if (!lv.has(pe)) visit(pe)
}

export function isAtomic (t: MergeType): boolean {
  return (t.kind === 'map' && t.atomic) || (t.kind === 'list' && t.relationship === 'atomic')
}

/** Absent, null, or an empty map or list: merged and compared as a leaf (structured-merge-diff's promotion). */
export function emptyish (v: Json | undefined): boolean {
  if (v === undefined || v === null) return true
  if (Array.isArray(v)) return v.length === 0
  return typeof v === 'object' && isEmptyObject(v)
}
