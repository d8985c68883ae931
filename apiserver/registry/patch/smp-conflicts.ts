// Conflict detection between two strategic merge patches (Kubernetes' MergingMapsHaveConflicts): true when both
// touch the same key with different values, or act on the same map with different directives.

import type { PatchSchema } from './smp-schema.js'
import {
  DIRECTIVE, RETAIN_KEYS, SmpError, deduplicateScalars, deepEqual, extractRetainKeys, goString, hasOwn, isMap,
  sliceElementType, sortScalars, type JsonMap, type JsonValue
} from './smp-values.js'

export function mergingMapsHaveConflicts (left: JsonMap, right: JsonMap, schema: PatchSchema): boolean {
  return fieldsHaveConflicts(left, right, schema, '', '')
}

function fieldsHaveConflicts (left: JsonValue, right: JsonValue, schema: PatchSchema | undefined, strategy: string, mergeKey: string): boolean {
  if (isMap(left)) {
    if (!isMap(right)) return true
    const l = hasOwn(left, DIRECTIVE)
    const r = hasOwn(right, DIRECTIVE)
    // A directive acts on the whole map: one side with a directive and the other without, or two different ones, conflict.
    if ((l || r) && (l !== r || left[DIRECTIVE] !== right[DIRECTIVE])) return true
    if (strategy === 'replace') return false
    return mapsHaveConflicts(left, right, schema)
  }
  if (Array.isArray(left)) {
    if (!Array.isArray(right)) return true
    return slicesHaveConflicts(left, right, schema, strategy, mergeKey)
  }
  return !deepEqual(left, right)
}

function mapsHaveConflicts (left: JsonMap, right: JsonMap, schema: PatchSchema | undefined): boolean {
  for (const [key, lv] of Object.entries(left)) {
    if (key === DIRECTIVE || key === RETAIN_KEYS || !hasOwn(right, key)) continue
    let sub: PatchSchema | undefined
    let strategy = ''
    let mergeKey = ''
    if (schema !== undefined && (Array.isArray(lv) || isMap(lv))) {
      const [s, meta] = Array.isArray(lv) ? schema.lookupSlice(key) : schema.lookupStruct(key)
      sub = s
      strategy = extractRetainKeys(meta.strategies)[1]
      mergeKey = meta.mergeKey
    }
    if (fieldsHaveConflicts(lv, right[key], sub, strategy, mergeKey)) return true
  }
  return false
}

function slicesHaveConflicts (left: JsonValue[], right: JsonValue[], schema: PatchSchema | undefined, strategy: string, mergeKey: string): boolean {
  const kind = sliceElementType(left, right)
  if (strategy === 'merge') {
    // Merging lists of scalars cannot conflict; lists of maps are compared item by item through their merge keys.
    if (kind !== 'map') return false
    const l = byMergeKey(left, mergeKey)
    const r = byMergeKey(right, mergeKey)
    for (const [k, lv] of l) {
      const rv = r.get(k)
      if (rv !== undefined && fieldsHaveConflicts(lv, rv, schema, '', '')) return true
    }
    return false
  }
  if (left.length !== right.length) return true
  let l = left
  let r = right
  if (kind !== 'map') {
    l = sortScalars(deduplicateScalars(left))
    r = sortScalars(deduplicateScalars(right))
  }
  for (let i = 0; i < l.length; i++) if (fieldsHaveConflicts(l[i], r[i], schema, '', '')) return true
  return false
}

function byMergeKey (list: JsonValue[], mergeKey: string): Map<string, JsonMap> {
  const out = new Map<string, JsonMap>()
  for (const v of list) {
    if (!isMap(v)) throw new SmpError(`invalid element type in merging list:${goString(list)}`)
    if (!hasOwn(v, mergeKey)) throw new SmpError(`cannot find merge key \`${mergeKey}\` in merging list element:${goString(v)}`)
    out.set(goString(v[mergeKey]), v)
  }
  return out
}
