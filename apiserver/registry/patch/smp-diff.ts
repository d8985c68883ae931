// Creating strategic merge patches (what kubectl computes client side): two-way (original -> modified) and
// three-way (last-applied, new configuration, live object) with conflict detection. Same output as Kubernetes'
// CreateTwoWayMergePatch / CreateThreeWayMergePatch, directive for directive.

import type { PatchSchema } from './smp-schema.js'
import { mergingMapsHaveConflicts } from './smp-conflicts.js'
import { mergeKeyValueEqual, normalizeSliceOrder } from './smp-order.js'
import { sortMergeListsByNameArray } from './smp-sort.js'
import { mergeMap } from './strategic-merge-patch.js'
import {
  DELETE_FROM_PRIMITIVE_LIST, DIRECTIVE, RETAIN_KEYS, SET_ELEMENT_ORDER, SmpConflictError, SmpError, deduplicateScalars,
  deepEqual, errBadArgType, errNoListOfLists, errNoMergeKey, extractRetainKeys, goString, goType, hasOwn, isMap,
  setKey, sliceElementType, sortScalars, type JsonMap, type JsonValue
} from './smp-values.js'
import { stringify } from 'yaml'

export interface DiffOptions {
  setElementOrder?: boolean
  ignoreChangesAndAdditions?: boolean
  ignoreDeletions?: boolean
  buildRetainKeysDirective?: boolean
}

/** The patch that turns `original` into `modified` (neither is changed). */
export function createTwoWayMergePatch (original: JsonMap, modified: JsonMap, schema: PatchSchema): JsonMap {
  return diffMaps(structuredClone(original), structuredClone(modified), schema, { setElementOrder: true })
}

/**
 * The patch kubectl apply sends: changes from `current` to `modified` plus deletions from `original` (the last
 * applied configuration) to `modified`. Without `overwrite`, a change that conflicts with one made between
 * `original` and `current` throws SmpConflictError.
 */
export function createThreeWayMergePatch (original: JsonMap, modified: JsonMap, current: JsonMap, schema: PatchSchema,
  overwrite: boolean): JsonMap {
  const o = structuredClone(original)
  const m = structuredClone(modified)
  const c = structuredClone(current)
  const delta = diffMaps(c, m, schema, { ignoreDeletions: true, setElementOrder: true })
  const deletions = diffMaps(o, m, schema, { setElementOrder: true, ignoreChangesAndAdditions: true })
  const patch = mergeMap(deletions, delta, schema, { mergeParallelList: false, ignoreUnmatchedNulls: false })
  if (!overwrite) {
    const changed = diffMaps(o, c, schema, {})
    if (mergingMapsHaveConflicts(patch, changed, schema)) {
      throw new SmpConflictError(`patch:\n${stringify(patch)}\nconflicts with changes made from original to current:\n${stringify(changed)}\n`)
    }
  }
  return patch
}

export function diffMaps (original: JsonMap, modified: JsonMap, schema: PatchSchema, opts: DiffOptions): JsonMap {
  const patch: JsonMap = {}
  const retainKeys: JsonValue[] = []
  for (const key of Object.keys(modified)) {
    const mv = modified[key]
    if (opts.buildRetainKeysDirective === true && mv !== null) retainKeys.push(key)
    if (!hasOwn(original, key)) {
      if (opts.ignoreChangesAndAdditions !== true) setKey(patch, key, mv)
      continue
    }
    const ov = original[key]
    if (key === DIRECTIVE) {
      if (typeof ov !== 'string' || typeof mv !== 'string') throw new SmpError(`invalid value for special key: ${DIRECTIVE}`)
      if (ov !== mv) setKey(patch, key, mv)
      continue
    }
    if (goType(ov) !== goType(mv)) {
      if (opts.ignoreChangesAndAdditions !== true) setKey(patch, key, mv)
      continue
    }
    if (isMap(ov)) handleMapDiff(key, ov, mv as JsonMap, patch, schema, opts)
    else if (Array.isArray(ov)) handleSliceDiff(key, ov, mv as JsonValue[], patch, schema, opts)
    else replaceIfNotEqual(key, ov, mv, patch, opts)
  }
  if (opts.ignoreDeletions !== true) {
    for (const key of Object.keys(original)) if (!hasOwn(modified, key)) setKey(patch, key, null)
  }
  if (retainKeys.length > 0 && (Object.keys(patch).length > 0 || hasAdditionalNewField(original, modified))) {
    patch[RETAIN_KEYS] = sortScalars(retainKeys)
  }
  return patch
}

function handleMapDiff (key: string, ov: JsonMap, mv: JsonMap, patch: JsonMap, schema: PatchSchema, opts: DiffOptions): void {
  let found
  try {
    found = schema.lookupStruct(key)
  } catch (err) {
    if (deepEqual(ov, mv)) return // no metadata is needed when nothing changed
    throw err
  }
  const [sub, meta] = found
  const [retain, strategy] = extractRetainKeys(meta.strategies)
  if (strategy === 'replace') {
    if (opts.ignoreChangesAndAdditions !== true) setKey(patch, key, mv)
    return
  }
  const value = diffMaps(ov, mv, sub, { ...opts, buildRetainKeysDirective: retain })
  if (Object.keys(value).length > 0) setKey(patch, key, value)
}

function handleSliceDiff (key: string, ov: JsonValue[], mv: JsonValue[], patch: JsonMap, schema: PatchSchema, opts: DiffOptions): void {
  let found
  try {
    found = schema.lookupSlice(key)
  } catch (err) {
    if (deepEqual(ov, mv)) return
    throw err
  }
  const [sub, meta] = found
  const [retain, strategy] = extractRetainKeys(meta.strategies)
  if (strategy !== 'merge') {
    replaceIfNotEqual(key, ov, mv, patch, opts)
    return
  }
  const [add, del, order] = diffLists(ov, mv, sub, meta.mergeKey, { ...opts, buildRetainKeysDirective: retain })
  if (add.length > 0) setKey(patch, key, add)
  if (del.length > 0) patch[`${DELETE_FROM_PRIMITIVE_LIST}/${key}`] = del
  if (order.length > 0) patch[`${SET_ELEMENT_ORDER}/${key}`] = order
}

function replaceIfNotEqual (key: string, ov: JsonValue, mv: JsonValue, patch: JsonMap, opts: DiffOptions): void {
  if (opts.ignoreChangesAndAdditions === true || deepEqual(ov, mv)) return
  setKey(patch, key, mv)
}

/** A merging list's patch: changed and added items (deletions last), scalar deletions, and the new order. */
function diffLists (original: JsonValue[], modified: JsonValue[], schema: PatchSchema, mergeKey: string,
  opts: DiffOptions): [JsonValue[], JsonValue[], JsonValue[]] {
  if (original.length === 0) {
    if (modified.length === 0 || opts.ignoreChangesAndAdditions === true) return [[], [], []]
    return [modified, [], []]
  }
  const kind = sliceElementType(original, modified)
  const changes = opts.ignoreChangesAndAdditions !== true
  const deletions = opts.ignoreDeletions !== true
  if (kind === 'map') {
    const [patchList, deleteList] = diffListsOfMaps(original, modified, schema, mergeKey, opts)
    const ordered = normalizeSliceOrder(patchList, modified, mergeKey, kind)
    const orderSame = isOrderSame(original, modified, mergeKey)
    const all = ordered.concat(deleteList)
    let order: JsonValue[] = []
    if (opts.setElementOrder === true && ((changes && (all.length > 0 || !orderSame)) || (deletions && all.length > 0))) {
      order = modified.map(v => ({ [mergeKey]: (v as JsonMap)[mergeKey] ?? null }))
    }
    return [all, [], order]
  }
  if (kind === '[]interface {}') throw errNoListOfLists()
  const [add, del] = diffListsOfScalars(original, modified, opts)
  const ordered = normalizeSliceOrder(add, modified, mergeKey, kind)
  // `original` was sorted in place above, as in Kubernetes: the order list is sent when it differs from that.
  const order = opts.setElementOrder === true && ((deletions && del.length > 0) || (changes && !deepEqual(original, modified)))
    ? modified
    : []
  return [ordered, del, order]
}

function isOrderSame (original: JsonValue[], modified: JsonValue[], mergeKey: string): boolean {
  if (original.length !== modified.length) return false
  for (let i = 0; i < modified.length; i++) if (!mergeKeyValueEqual(original[i], modified[i], mergeKey)) return false
  return true
}

/** Additions and deletions between two scalar lists, compared through their sorted `%v` texts. */
function diffListsOfScalars (original: JsonValue[], modified: JsonValue[], opts: DiffOptions): [JsonValue[], JsonValue[]] {
  const o = sortScalars(original)
  const m = sortScalars(modified.slice())
  const add: JsonValue[] = []
  const del: JsonValue[] = []
  let i = 0
  let j = 0
  while (i < o.length || j < m.length) {
    const os = i < o.length ? goString(o[i]) : undefined
    const ms = j < m.length ? goString(m[j]) : undefined
    if (os !== undefined && ms !== undefined && os === ms) { i++; j++ } else if (os === undefined || (ms !== undefined && os > ms)) {
      if (opts.ignoreChangesAndAdditions !== true) add.push(m[j])
      j++
    } else {
      if (opts.ignoreDeletions !== true) del.push(o[i])
      i++
    }
  }
  return [add, deduplicateScalars(del)]
}

/** Changed or added maps (by merge key) and `$patch: delete` items for the removed ones. */
function diffListsOfMaps (original: JsonValue[], modified: JsonValue[], schema: PatchSchema, mergeKey: string,
  opts: DiffOptions): [JsonValue[], JsonValue[]] {
  const patch: JsonValue[] = []
  const deletions: JsonValue[] = []
  const o = sortMergeListsByNameArray(original.slice(), schema, mergeKey, false)
  const m = sortMergeListsByNameArray(modified.slice(), schema, mergeKey, false)
  let i = 0
  let j = 0
  while (i < o.length || j < m.length) {
    const [oe, ok] = i < o.length ? mapAndKey(o[i], mergeKey) : [undefined, undefined]
    const [me, mk] = j < m.length ? mapAndKey(m[j], mergeKey) : [undefined, undefined]
    const os = oe !== undefined ? goString(ok) : ''
    const ms = me !== undefined ? goString(mk) : ''
    if (oe !== undefined && me !== undefined && os === ms) {
      const value = diffMaps(oe, me, schema, opts)
      if (Object.keys(value).length > 0) {
        value[mergeKey] = mk as JsonValue
        patch.push(value)
      }
      i++
      j++
    } else if (oe === undefined || (me !== undefined && os > ms)) {
      if (opts.ignoreChangesAndAdditions !== true) patch.push(me as JsonMap)
      j++
    } else {
      if (opts.ignoreDeletions !== true) deletions.push({ [mergeKey]: ok as JsonValue, [DIRECTIVE]: 'delete' })
      i++
    }
  }
  return [patch, deletions]
}

function mapAndKey (v: JsonValue, mergeKey: string): [JsonMap, JsonValue] {
  if (!isMap(v)) throw errBadArgType('map', v)
  if (!hasOwn(v, mergeKey)) throw errNoMergeKey(v, mergeKey)
  return [v, v[mergeKey]]
}

/** Whether `original` has a key with a non-null value that `modified` lacks. */
function hasAdditionalNewField (original: JsonMap, modified: JsonMap): boolean {
  return Object.keys(original).some(k => original[k] !== null && !hasOwn(modified, k))
}
