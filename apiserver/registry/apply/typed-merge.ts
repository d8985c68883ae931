// Merging a configuration into a live value and removing paths from a value, driven by the merge structure
// (structured-merge-diff's merge and remove walkers), plus the named-field expansion pruning relies on.

import { isObject, jsonEqual, type Json, type JsonObject } from '../patch/json-pointer.js'
import { fieldElement, fieldName, firstDuplicate, type PathElement } from './field-path.js'
import { FieldSet } from './field-set.js'
import { DEDUCED, atomFor, fits, type ListType, type MergeType } from './merge-type.js'
import { ApplyTypeError, emptyish, fieldTypeOf, isAtomic, itemElement } from './typed-sets.js'

/**
 * `rhs` merged over `lhs`: leaves and atomic structures from rhs, maps by key, associative lists by item. The result
 * shares unchanged subtrees with its inputs.
 */
export function merge (lhs: Json | undefined, rhs: Json | undefined, type: MergeType): Json | undefined {
  // Nothing to merge in: the live value as it is (shared, not copied; equal to what a full walk would build).
  if (rhs === undefined) return lhs
  if (type.kind === 'scalar') return rhs
  const al = atomFor(type, lhs)
  const ar = atomFor(type, rhs)
  const t = ar
  const leaf = (al.kind !== ar.kind && lhs !== undefined) || t.kind === 'scalar' ||
    !fits(t, lhs) || !fits(t, rhs) || isAtomic(t) || (emptyish(lhs) && emptyish(rhs))
  if (leaf) return lhs !== undefined && rhs !== null && typeof rhs === 'object' && jsonEqual(lhs, rhs) ? lhs : rhs
  if (t.kind === 'list') {
    const l = Array.isArray(lhs) ? lhs : []
    const out = mergeItems(t, l, Array.isArray(rhs) ? rhs : [])
    if (out.length > 0 && out.length === l.length && out.every((v, i) => v === l[i])) return lhs // unchanged: share it
    return out.length > 0 ? out : undefined
  }
  const lm = isObject(lhs) ? lhs : {}
  const rm = isObject(rhs) ? rhs : {}
  // Made at the first member that changes (most of a re-applied object does not): until then the live object is shared.
  let out: JsonObject | undefined = lhs === undefined ? {} : undefined
  let n = 0
  for (const k in lm) {
    const v = merge(lm[k], Object.prototype.hasOwnProperty.call(rm, k) ? rm[k] : undefined, fieldTypeOf(t, k))
    if (out === undefined) {
      if (v === lm[k]) {
        if (v !== undefined) n++
        continue
      }
      out = membersBefore(lm, k)
    }
    if (v !== undefined) { out[k] = v; n++ }
  }
  for (const k in rm) {
    if (Object.prototype.hasOwnProperty.call(lm, k)) continue
    const v = merge(undefined, rm[k], fieldTypeOf(t, k))
    out ??= membersBefore(lm, undefined)
    if (v !== undefined) { out[k] = v; n++ }
  }
  if (out === undefined) return lhs // every member unchanged: share the live object, so comparisons skip it
  return n > 0 ? out : undefined
}

/** A copy of `lm`'s members that come before `stop` (all of them when undefined), leaving out undefined ones. */
function membersBefore (lm: JsonObject, stop: string | undefined): JsonObject {
  const out: JsonObject = {}
  for (const k in lm) {
    if (k === stop) break
    const v = lm[k]
    if (v !== undefined) out[k] = v
  }
  return out
}

/**
 * Items matched by key. Live items the configuration does not name keep their place; named ones follow the
 * configuration's order, each emitted where the configuration's next shared item comes up.
 */
function mergeItems (t: ListType, lhs: Json[], rhs: Json[]): Json[] {
  const rPEs = rhs.map((item, i) => itemElement(t, item, i))
  refuseDuplicates(rPEs)
  const lPEs = lhs.map((item, i) => itemElement(t, item, i))
  // The same items in the same order (the usual re-apply): the walk below would pair them one by one.
  if (lPEs.length === rPEs.length && lPEs.every((pe, i) => pe === rPEs[i])) {
    const out: Json[] = []
    for (let i = 0; i < lhs.length; i++) {
      const m = merge(lhs[i], rhs[i], t.element)
      if (m !== undefined) out.push(m)
    }
    return out
  }
  const observedR = new Map<PathElement, Json>()
  rPEs.forEach((pe, i) => observedR.set(pe, rhs[i]))
  const observedL = new Map<PathElement, Json | undefined>()
  lPEs.forEach((pe, i) => observedL.set(pe, observedL.has(pe) ? undefined : lhs[i]))
  const shared = rPEs.filter(pe => observedL.has(pe))
  let next: PathElement | undefined = shared.shift()
  const emitted = new Set<PathElement>()
  const out: Json[] = []
  const emit = (l: Json | undefined, r: Json | undefined): void => {
    const m = merge(l, r, t.element)
    if (m !== undefined) out.push(m)
  }
  let li = 0
  let ri = 0
  while (li < lPEs.length || ri < rPEs.length) {
    if (li < lPEs.length && ri < rPEs.length) {
      const pe = lPEs[li]
      if (pe === rPEs[ri]) {
        emitted.add(pe)
        emit(observedL.get(pe), observedR.get(pe))
        li++
        ri++
        next = shared.shift()
        continue
      }
      if (observedR.has(pe) && next !== undefined && next !== pe) {
        li++
        continue
      }
    }
    if (li < lPEs.length) {
      const pe = lPEs[li]
      if (!observedR.has(pe)) {
        emit(lhs[li], undefined)
        li++
        continue
      } else if (emitted.has(pe)) {
        li++
      }
    }
    if (ri < rPEs.length) {
      const pe = rPEs[ri]
      emitted.add(pe)
      emit(observedL.get(pe), observedR.get(pe))
      ri++
      if (next === pe) next = shared.shift()
    }
  }
  return out
}

/** Throws at the first element equal to an earlier one (as a map of the elements seen would find it). */
export function refuseDuplicates (pes: readonly PathElement[]): void {
  const pe = firstDuplicate(pes)
  if (pe !== undefined) throw new ApplyTypeError(`duplicate entries for key ${pe}`)
}

/** `value` without the paths of `toRemove` (a member removes its whole subtree). Emptied structures become null. */
export function removeItems (value: Json, toRemove: FieldSet, type: MergeType): Json {
  const t = atomFor(type, value)
  if (t.kind === 'scalar') return value
  if (t.kind === 'list') {
    if (!Array.isArray(value) || value.length === 0 || t.relationship === 'atomic') return null
    const out: Json[] = []
    value.forEach((item, i) => {
      const pe = itemElement(t, item, i)
      if (toRemove.members.has(pe)) return
      const sub = toRemove.withPrefix(pe)
      out.push(sub.empty() ? item : removeItems(item, sub, t.element))
    })
    return out.length > 0 ? out : null
  }
  if (!isObject(value) || Object.keys(value).length === 0 || t.atomic) return null
  const out: JsonObject = {}
  for (const [k, v] of Object.entries(value)) {
    const pe = fieldElement(k)
    if (toRemove.members.has(pe)) continue
    const sub = toRemove.withPrefix(pe)
    out[k] = sub.empty() ? v : removeItems(v, sub, fieldTypeOf(t, k))
  }
  return Object.keys(out).length > 0 ? out : null
}

/** The set with every declared struct field that has owned children made a member too (pruning removes it whole). */
export function ensureNamedFieldsAreMembers (set: FieldSet, type: MergeType): FieldSet {
  const out = new FieldSet()
  const walkType = type
  for (const m of set.members) out.addMember(m)
  for (const [pe, child] of set.children) {
    const name = fieldName(pe)
    let childType: MergeType = DEDUCED
    if (walkType.kind === 'map') {
      if (name !== undefined) {
        if (walkType.declares(name)) out.addMember(pe)
        childType = fieldTypeOf(walkType, name)
      }
    } else if (walkType.kind === 'list' && name === undefined) {
      childType = walkType.element
    }
    out.setChild(pe, ensureNamedFieldsAreMembers(child, childType))
  }
  return out
}

/**
 * The set adjusted to a schema that changed since it was recorded (spec §4.11.8): where a structure is now atomic,
 * ownership of any of its elements becomes ownership of the whole structure. Undefined when nothing changes.
 */
export function reconcileWithSchema (set: FieldSet, type: MergeType): FieldSet | undefined {
  let out: FieldSet | undefined
  for (const [pe, child] of set.children) {
    const name = fieldName(pe)
    const childType: MergeType = type.kind === 'map' && name !== undefined
      ? fieldTypeOf(type, name)
      : type.kind === 'list' && name === undefined ? type.element : DEDUCED
    let replacement: FieldSet | undefined
    let promote = false
    if (isAtomic(childType) && !child.empty()) promote = true
    else replacement = reconcileWithSchema(child, childType)
    if (!promote && replacement === undefined) continue
    out ??= set.clone()
    if (promote) {
      out.deleteChild(pe)
      out.addMember(pe)
    } else if (replacement !== undefined) {
      out.setChild(pe, replacement)
    }
  }
  return out
}
