// Order of merged lists in strategic merge patch: $setElementOrder first, then the patch's order, then the live order.
// Follows Kubernetes' preserve-order design (normalizeElementOrder and its helpers), ties included.

import {
  DIRECTIVE, SET_ELEMENT_ORDER, SmpError, errBadArgType, errBadSetElementOrder, errNoMergeKey, goStableSort, goString,
  hasOwn, isMap, type JsonMap, type JsonValue
} from './smp-values.js'

/** Sorts `patch` by `patchOrder` and `serverOnly` by `serverOrder`, then interleaves them by the live order. */
export function normalizeElementOrder (patch: JsonValue[], serverOnly: JsonValue[], patchOrder: JsonValue[],
  serverOrder: JsonValue[], mergeKey: string, kind: string): JsonValue[] {
  const p = normalizeSliceOrder(patch, patchOrder, mergeKey, kind)
  const s = normalizeSliceOrder(serverOnly, serverOrder, mergeKey, kind)
  return mergeSortedSlice(s, p, serverOrder, mergeKey, kind)
}

/** Inserts server-only items (`left`) among patch items (`right`), each kept in its own relative order. */
function mergeSortedSlice (left: JsonValue[], right: JsonValue[], serverOrder: JsonValue[], mergeKey: string, kind: string): JsonValue[] {
  const position = positions(serverOrder, mergeKey, kind)
  const out: JsonValue[] = []
  let i = 0
  let j = 0
  while (i < left.length || j < right.length) {
    if (i >= left.length) { out.push(right[j++]); continue }
    if (j >= right.length) { out.push(left[i++]); continue }
    const li = position(left[i])
    const ri = position(right[j])
    if (li >= 0 && ri >= 0 && li < ri) out.push(left[i++])
    else out.push(right[j++])
  }
  return out
}

/**
 * Kubernetes' `index(list, value)` as a lookup built once: the first position of the value (by merge-key value
 * for maps, by the value itself otherwise), -1 when absent.
 */
export function positions (list: JsonValue[], mergeKey: string, kind: string): (value: JsonValue) => number {
  const key = kind === 'map'
    ? (item: JsonValue): JsonValue => isMap(item) && hasOwn(item, mergeKey) ? item[mergeKey] : null
    : (item: JsonValue): JsonValue => item
  const first = new Map<JsonValue, number>()
  list.forEach((item, i) => { const k = key(item); if (!first.has(k)) first.set(k, i) })
  return value => first.get(key(value)) ?? -1
}

/** Sorts `toSort` (in place) by the positions in `order`; `$patch: delete` items of a map list go last. */
export function normalizeSliceOrder (toSort: JsonValue[], order: JsonValue[], mergeKey: string, kind: string): JsonValue[] {
  let items = toSort
  let toDelete: JsonValue[] = []
  if (kind === 'map') {
    validateMergeKeyInLists(mergeKey, toSort, order)
    ;[items, toDelete] = extractToDeleteItems(toSort)
  }
  const position = positions(order, mergeKey, kind)
  // Kubernetes' less answers true whenever either item is missing from `order`; kept for identical results.
  goStableSort(items, (a, b) => {
    const ia = position(a)
    if (ia >= 0) {
      const ib = position(b)
      if (ib >= 0) return ia < ib
    }
    return true
  })
  return items.concat(toDelete)
}

export function validateMergeKeyInLists (mergeKey: string, ...lists: JsonValue[][]): void {
  for (const list of lists) {
    for (const item of list) {
      if (!isMap(item)) throw errBadArgType('map', item)
      if (!hasOwn(item, mergeKey)) throw errNoMergeKey(item, mergeKey)
    }
  }
}

/** Splits a list of maps into the items to keep and those marked `$patch: delete`. */
export function extractToDeleteItems (list: JsonValue[]): [JsonValue[], JsonValue[]] {
  const keep: JsonValue[] = []
  const toDelete: JsonValue[] = []
  for (const v of list) {
    if (!isMap(v)) throw errBadArgType('map', v)
    if (hasOwn(v, DIRECTIVE) && v[DIRECTIVE] === 'delete') toDelete.push(v)
    else keep.push(v)
  }
  return [keep, toDelete]
}

/** Items of `list` present in `by` and those that are not (scalars compared by value). */
export function partitionPrimitives (list: JsonValue[], by: JsonValue[]): [JsonValue[], JsonValue[]] {
  const inPatch = new Set(by)
  return [list.filter(v => inPatch.has(v)), list.filter(v => !inPatch.has(v))]
}

/** Items of `list` whose merge-key value appears in `by`, and the rest. */
export function partitionMaps (list: JsonValue[], by: JsonValue[], mergeKey: string): [JsonValue[], JsonValue[]] {
  // A set of `by`'s merge-key values when every item is a map; otherwise the scan, which fails on the first non-map.
  const keys = by.every(isMap) ? new Set(by.filter(v => hasOwn(v as JsonMap, mergeKey)).map(v => (v as JsonMap)[mergeKey])) : undefined
  const patch: JsonValue[] = []
  const serverOnly: JsonValue[] = []
  for (const v of list) {
    if (!isMap(v)) throw errBadArgType('map', v)
    if (!hasOwn(v, mergeKey)) throw errNoMergeKey(v, mergeKey)
    const found = keys !== undefined ? keys.has(v[mergeKey]) : findMapByKeyValue(by, mergeKey, v[mergeKey]) !== undefined
    if (found) patch.push(v)
    else serverOnly.push(v)
  }
  return [patch, serverOnly]
}

/** The first map of `list` whose `key` equals `value`, with its position. */
export function findMapByKeyValue (list: JsonValue[], key: string, value: JsonValue): [JsonMap, number] | undefined {
  for (let i = 0; i < list.length; i++) {
    const v = list[i]
    if (!isMap(v)) throw new SmpError(`value for key ${i} is not a map`)
    if (hasOwn(v, key) && v[key] === value) return [v, i]
  }
  return undefined
}

export function mergeKeyValueEqual (left: JsonValue, right: JsonValue, mergeKey: string): boolean {
  if (mergeKey === '') return left === right
  if (!isMap(left)) throw errBadArgType('map', left)
  if (!isMap(right)) throw errBadArgType('map', right)
  if (!hasOwn(left, mergeKey)) throw errNoMergeKey(left, mergeKey)
  if (!hasOwn(right, mergeKey)) throw errNoMergeKey(right, mergeKey)
  return left[mergeKey] === right[mergeKey]
}

/**
 * Checks that the patch list's items appear in the `$setElementOrder` list in the same relative order
 * (deletions ignored); the error is worded as Kubernetes words it.
 */
export function validatePatchWithSetOrderList (patchList: JsonValue[] | undefined, setOrderList: JsonValue, mergeKey: string): void {
  if (!Array.isArray(setOrderList)) throw errBadSetElementOrder()
  const list = patchList ?? []
  if (setOrderList.length === 0 || list.length === 0) return
  const nonDelete = mergeKey !== '' ? extractToDeleteItems(list)[0] : list
  let p = 0
  let s = 0
  while (p < nonDelete.length && s < setOrderList.length) {
    if (isMap(nonDelete[p]) && hasOwn(nonDelete[p] as JsonMap, DIRECTIVE)) { p++; continue }
    if (mergeKeyValueEqual(nonDelete[p], setOrderList[s], mergeKey)) p++
    s++
  }
  if (p < nonDelete.length && s >= setOrderList.length) {
    throw new SmpError(`The order in patch list:\n${goString(list)}\n doesn't match ${SET_ELEMENT_ORDER} list:\n${goString(setOrderList)}\n`)
  }
}
