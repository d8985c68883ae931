// Sorting of merging lists by merge key (Kubernetes' sortMergeListsByName): used to diff lists of maps, and to
// compare patched documents where the order of merging lists does not matter.

import type { PatchSchema } from './smp-schema.js'
import {
  DELETE_FROM_PRIMITIVE_LIST, DIRECTIVE, RETAIN_KEYS, SET_ELEMENT_ORDER, deduplicateScalars, errBadPrimitiveList,
  errBadRetainKeys, errBadSetElementOrder, extractRetainKeys, goInsertionSort, goString, isMap, setKey, sliceElementType,
  sortScalars, type JsonMap, type JsonValue
} from './smp-values.js'

/** A copy of `s` with every merging list sorted (maps by merge-key text, scalars de-duplicated and sorted). */
export function sortMergeListsByNameMap (s: JsonMap, schema: PatchSchema): JsonMap {
  const out: JsonMap = {}
  for (const [k, value] of Object.entries(s)) {
    let v = value
    if (k === RETAIN_KEYS) {
      if (!Array.isArray(v)) throw errBadRetainKeys()
      v = sortScalars(v)
    } else if (k.startsWith(DELETE_FROM_PRIMITIVE_LIST)) {
      if (!Array.isArray(v)) throw errBadPrimitiveList()
      v = sortScalars(v)
    } else if (k.startsWith(SET_ELEMENT_ORDER)) {
      if (!Array.isArray(v)) throw errBadSetElementOrder()
    } else if (k !== DIRECTIVE) {
      if (isMap(v)) {
        v = sortMergeListsByNameMap(v, schema.lookupStruct(k)[0])
      } else if (Array.isArray(v)) {
        const [sub, meta] = schema.lookupSlice(k)
        const [, strategy] = extractRetainKeys(meta.strategies)
        if (strategy === 'merge') v = sortMergeListsByNameArray(v, sub, meta.mergeKey, true)
      }
    }
    setKey(out, k, v)
  }
  return out
}

/** Sorts a merging list: scalars de-duplicated and sorted, maps (recursed into when `recurse`) by merge-key text. */
export function sortMergeListsByNameArray (s: JsonValue[], schema: PatchSchema, mergeKey: string, recurse: boolean): JsonValue[] {
  if (s.length === 0) return s
  const kind = sliceElementType(s)
  if (kind !== 'map') return sortScalars(deduplicateScalars(s))
  const items = s.map(e => recurse ? sortMergeListsByNameMap(e as JsonMap, schema) : e)
  return sortMapsByField(items, mergeKey)
}

function sortMapsByField (items: JsonValue[], field: string): JsonValue[] {
  const text = (v: JsonValue): string => goString((v as JsonMap)[field])
  if (items.length <= 12) return goInsertionSort(items, (a, b) => text(a) <= text(b))
  return items.sort((a, b) => { const x = text(a); const y = text(b); return x < y ? -1 : x > y ? 1 : 0 })
}
