// Strategic merge patch (application/strategic-merge-patch+json) applied to an object, driven by a PatchSchema.
// Lists merge by the schema's strategy and merge key; directives: $patch (replace|delete|merge), $retainKeys,
// $deleteFromPrimitiveList/<list>, $setElementOrder/<list>; null deletes. Behaviour and error texts follow
// Kubernetes' k8s.io/apimachinery/pkg/util/strategicpatch, step for step, so results agree to the list order.

import type { PatchSchema } from './smp-schema.js'
import { listAfterInPlaceMerge } from './smp-aliasing.js'
import {
  findMapByKeyValue, normalizeElementOrder, partitionMaps, partitionPrimitives, validatePatchWithSetOrderList
} from './smp-order.js'
import {
  DELETE_FROM_PRIMITIVE_LIST, DIRECTIVE, RETAIN_KEYS, SET_ELEMENT_ORDER, SmpError, deduplicateScalars, deepEqual,
  errBadArgType, errBadPatchType, errBadPrimitiveList, errBadRetainKeys, errBadSetElementOrder, errNoMergeKey,
  extractRetainKeys, goString, goType, hasOwn, isMap, setKey, sliceElementType, type JsonMap, type JsonValue
} from './smp-values.js'
import { cloneJson } from './json-pointer.js'

export interface MergeOptions {
  /** Apply parallel lists ($deleteFromPrimitiveList, $setElementOrder) instead of carrying them (server side: true). */
  mergeParallelList: boolean
  /** Drop nulls that match nothing in the original (server side: true); false keeps them to build a patch. */
  ignoreUnmatchedNulls: boolean
}

/** Applies `patch` to `original` (neither is changed) and answers the patched object. Throws SmpError. */
export function strategicMergePatch (original: JsonMap, patch: JsonMap, schema: PatchSchema): JsonMap {
  return mergeMap(cloneJson(original), cloneJson(patch), schema,
    { mergeParallelList: true, ignoreUnmatchedNulls: true })
}

/** Merges `patch` into `original`; both may be changed (callers pass copies). */
export function mergeMap (original: JsonMap | null, patch: JsonMap, schema: PatchSchema, opts: MergeOptions): JsonMap {
  if (hasOwn(patch, DIRECTIVE)) return directiveInMap(patch[DIRECTIVE], patch)
  const target = original ?? {}
  applyRetainKeysDirective(target, patch, opts)
  mergeOrderedLists(target, patch, schema, opts)
  for (const rawKey of Object.keys(patch)) {
    const patchV = patch[rawKey]
    let key = rawKey
    let isDeleteList = false
    if (rawKey.startsWith(DELETE_FROM_PRIMITIVE_LIST)) {
      if (!opts.mergeParallelList) { setKey(target, rawKey, patchV); continue }
      key = extractKey(rawKey, DELETE_FROM_PRIMITIVE_LIST)
      isDeleteList = true
    }
    if (patchV === null) {
      delete target[key]
      if (opts.ignoreUnmatchedNulls) continue
    }
    if (!hasOwn(target, key) || goType(target[key]) !== goType(patchV)) {
      if (!isDeleteList) takePatchValue(target, key, patchV, opts)
      continue
    }
    const current = target[key]
    if (isMap(current)) {
      const [sub, meta] = schema.lookupStruct(key)
      const [, strategy] = extractRetainKeys(meta.strategies)
      setKey(target, key, strategy === 'replace' ? patchV : mergeMap(current, patchV as JsonMap, sub, opts))
    } else if (Array.isArray(current)) {
      const [sub, meta] = schema.lookupSlice(key)
      const [, strategy] = extractRetainKeys(meta.strategies)
      setKey(target, key, mergeSliceHandler(current, patchV as JsonValue[], sub, strategy, meta.mergeKey, isDeleteList, opts))
    } else {
      setWithoutDirectives(target, key, patchV)
    }
  }
  return target
}

/** A value the original lacks (or holds with another type) is taken from the patch, minus its directives. */
function takePatchValue (target: JsonMap, key: string, patchV: JsonValue, opts: MergeOptions): void {
  if (opts.ignoreUnmatchedNulls) discardNullValues(patchV)
  setWithoutDirectives(target, key, patchV)
}

function setWithoutDirectives (target: JsonMap, key: string, value: JsonValue): void {
  const [v, keep] = removeDirectives(value)
  if (keep) setKey(target, key, v)
  else delete target[key]
}

/** `$patch` in a map: `replace` answers the patch as is (directive removed), `delete` an empty map. */
function directiveInMap (directive: JsonValue, patch: JsonMap): JsonMap {
  if (directive === 'replace') {
    delete patch[DIRECTIVE]
    return patch
  }
  if (directive === 'delete') return {}
  throw errBadPatchType(directive, patch)
}

/** The field name after `<prefix>/`; a malformed key is the directive's own 400 error. */
function extractKey (s: string, prefix: string): string {
  const slash = s.indexOf('/')
  if (slash < 0 || s.slice(0, slash) !== prefix) {
    if (prefix === DELETE_FROM_PRIMITIVE_LIST) throw errBadPrimitiveList()
    if (prefix === SET_ELEMENT_ORDER) throw errBadSetElementOrder()
    throw new SmpError(`fail to find unknown prefix "${prefix}" in ${s}\n`)
  }
  return s.slice(slash + 1)
}

/**
 * `$retainKeys`: clears the original's keys missing from the list; every non-null patch key must be in it.
 * When merging two patches (no parallel-list merge) the directive is carried into the first.
 */
function applyRetainKeysDirective (original: JsonMap, patch: JsonMap, opts: MergeOptions): void {
  if (!hasOwn(patch, RETAIN_KEYS)) return
  const retain = patch[RETAIN_KEYS]
  delete patch[RETAIN_KEYS]
  if (!opts.mergeParallelList) {
    if (hasOwn(original, RETAIN_KEYS)) {
      if (!deepEqual(original[RETAIN_KEYS], retain)) {
        throw new SmpError(`${goString(original[RETAIN_KEYS])} and ${goString(retain)} are not deep equal: this may happen when calculating the 3-way diff patch`)
      }
    } else {
      original[RETAIN_KEYS] = retain
    }
    return
  }
  if (!Array.isArray(retain)) throw errBadRetainKeys()
  const keep = new Set<JsonValue>(retain)
  for (const [k, v] of Object.entries(patch)) {
    if (v === null || k.startsWith(DELETE_FROM_PRIMITIVE_LIST) || k.startsWith(SET_ELEMENT_ORDER)) continue
    if (!keep.has(k)) throw errBadRetainKeys()
  }
  for (const k of Object.keys(original)) if (!keep.has(k)) delete original[k]
}

/**
 * `$setElementOrder/<list>`: merges that list now and puts its items in the given order (server-only items
 * placed by their live order). Merged lists leave the patch so the main loop does not see them again.
 */
function mergeOrderedLists (original: JsonMap, patch: JsonMap, schema: PatchSchema, opts: MergeOptions): void {
  for (const key of Object.keys(patch)) {
    if (!key.startsWith(SET_ELEMENT_ORDER) || !hasOwn(patch, key)) continue
    const order = patch[key]
    if (!opts.mergeParallelList) {
      if (hasOwn(original, key)) {
        if (!deepEqual(original[key], order)) throw errBadSetElementOrder()
      } else {
        setKey(original, key, order)
      }
    }
    delete patch[key]
    if (!Array.isArray(order)) throw errBadArgType('slice', order)
    const listKey = extractKey(key, SET_ELEMENT_ORDER)
    const foundOriginal = hasOwn(original, listKey)
    const foundPatch = hasOwn(patch, listKey)
    const originalList = foundOriginal ? original[listKey] : undefined
    const patchList = foundPatch ? patch[listKey] : undefined
    if (foundOriginal && !Array.isArray(originalList)) throw errBadArgType('slice', originalList)
    if (foundPatch && !Array.isArray(patchList)) throw errBadArgType('slice', patchList)
    const originalValues = originalList as JsonValue[] | undefined
    const patchValues = patchList as JsonValue[] | undefined
    const [sub, meta] = schema.lookupSlice(listKey)
    const [, strategy] = extractRetainKeys(meta.strategies)
    validatePatchWithSetOrderList(patchValues, order, meta.mergeKey)

    let merged: JsonValue[]
    if (foundOriginal && !foundPatch) merged = originalValues as JsonValue[]
    else if (!foundOriginal && foundPatch) merged = removeDirectives(patchValues as JsonValue[])[0] as JsonValue[]
    else if (foundOriginal && foundPatch) {
      merged = mergeSliceHandler(originalValues as JsonValue[], patchValues as JsonValue[], sub, strategy, meta.mergeKey, false, opts)
    } else continue

    const [patchItems, serverOnly] = meta.mergeKey === ''
      ? partitionPrimitives(merged, order)
      : partitionMaps(merged, order, meta.mergeKey)
    const kind = sliceElementType(originalValues, patchValues)
    const liveOrder = foundOriginal && foundPatch && strategy === 'merge'
      ? listAfterInPlaceMerge(originalValues as JsonValue[], patchValues as JsonValue[], meta.mergeKey, kind)
      : originalValues ?? []
    setKey(original, listKey, normalizeElementOrder(patchItems, serverOnly, order, liveOrder, meta.mergeKey, kind))
    delete patch[listKey]
  }
}

function mergeSliceHandler (original: JsonValue[], patch: JsonValue[], schema: PatchSchema, strategy: string,
  mergeKey: string, isDeleteList: boolean, opts: MergeOptions): JsonValue[] {
  if (!Array.isArray(original)) throw errBadArgType('slice', original)
  if (!Array.isArray(patch)) throw errBadArgType('slice', patch)
  // Delete lists apply whatever the field's strategy; other lists without `merge` are replaced.
  if (strategy === 'merge' || isDeleteList) return mergeSlice(original, patch, schema, mergeKey, opts, isDeleteList)
  return patch
}

function mergeSlice (original: JsonValue[], patch: JsonValue[], schema: PatchSchema, mergeKey: string,
  opts: MergeOptions, isDeleteList: boolean): JsonValue[] {
  if (original.length === 0 && patch.length === 0) return original
  const kind = sliceElementType(original, patch)
  let merged: JsonValue[]
  let base = original
  let items = patch
  if (kind !== 'map') {
    if (opts.mergeParallelList && isDeleteList) {
      const gone = new Set(patch)
      return original.filter(v => !gone.has(v))
    }
    merged = deduplicateScalars([...original, ...patch])
  } else {
    if (mergeKey === '') throw new SmpError(`cannot merge lists without merge key for ${schema.name()}`)
    ;[base, items] = applySpecialElements(original, patch, mergeKey)
    merged = mergeByKey(base, items, mergeKey, schema, opts)
  }
  const [patchItems, serverOnly] = mergeKey === ''
    ? partitionPrimitives(merged, items)
    : partitionMaps(merged, items, mergeKey)
  return normalizeElementOrder(patchItems, serverOnly, items, base, mergeKey, kind)
}

/** `$patch: delete` items remove their match, `$patch: replace` makes the rest of the patch the whole list. */
function applySpecialElements (original: JsonValue[], patch: JsonValue[], mergeKey: string): [JsonValue[], JsonValue[]] {
  const plain: JsonValue[] = []
  let replace = false
  let base = original
  for (const v of patch) {
    const item = v as JsonMap
    if (!hasOwn(item, DIRECTIVE)) { plain.push(v); continue }
    const directive = item[DIRECTIVE]
    if (directive === 'delete') {
      if (!hasOwn(item, mergeKey)) throw errNoMergeKey(item, mergeKey)
      const value = item[mergeKey]
      base = base.slice()
      for (let hit = findMapByKeyValue(base, mergeKey, value); hit !== undefined; hit = findMapByKeyValue(base, mergeKey, value)) {
        base.splice(hit[1], 1)
      }
    } else if (directive === 'replace') {
      replace = true
    } else if (directive === 'merge') {
      throw new SmpError('merging lists cannot yet be specified in the patch')
    } else {
      throw errBadPatchType(directive, item)
    }
  }
  return replace ? [plain, []] : [base, plain]
}

/** Patch items merge into the original item with the same merge-key value (the first one), or are appended. */
function mergeByKey (original: JsonValue[], patch: JsonValue[], mergeKey: string, schema: PatchSchema, opts: MergeOptions): JsonValue[] {
  const out = original.slice()
  const first = new Map<JsonValue, number>()
  const remember = (item: JsonValue, i: number): void => {
    const m = item as JsonMap
    if (hasOwn(m, mergeKey) && !first.has(m[mergeKey])) first.set(m[mergeKey], i)
  }
  out.forEach(remember)
  for (const v of patch) {
    const item = v as JsonMap
    if (!hasOwn(item, mergeKey)) throw errNoMergeKey(item, mergeKey)
    const at = first.get(item[mergeKey])
    if (at !== undefined) {
      out[at] = mergeMap(out[at] as JsonMap, item, schema, opts)
    } else {
      out.push(v)
      remember(v, out.length - 1)
    }
  }
  return out
}

/** Removes directive-bearing maps and directive keys; answers the value and whether the field is kept at all. */
export function removeDirectives (obj: JsonValue): [JsonValue, boolean] {
  if (isMap(obj)) {
    if (hasOwn(obj, DIRECTIVE)) return [null, false]
    for (const k of Object.keys(obj)) {
      const [v, keep] = removeDirectives(obj[k])
      if (keep) setKey(obj, k, v)
      else delete obj[k]
    }
    return [obj, true]
  }
  if (Array.isArray(obj)) {
    const out: JsonValue[] = []
    for (const v of obj) {
      const [nv, keep] = removeDirectives(v)
      if (keep) out.push(nv)
    }
    return [out, true]
  }
  return [obj, true]
}

/** Drops every null member of the maps inside `v` (nulls in lists of scalars stay). */
function discardNullValues (v: JsonValue): void {
  if (isMap(v)) {
    for (const k of Object.keys(v)) {
      if (v[k] === null) delete v[k]
      else discardNullValues(v[k])
    }
  } else if (Array.isArray(v)) {
    for (const item of v) discardNullValues(item)
  }
}
