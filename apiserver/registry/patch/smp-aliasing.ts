// The live list as Kubernetes' $setElementOrder step sees it after merging: Go's merge edits the list's backing
// array in place (deletions shift items left, additions land in spare capacity), and the order step then reads
// the original list through that array. The placement of server-only items depends on it, so it is reproduced.

import { DIRECTIVE, hasOwn, isMap, type JsonValue } from './smp-values.js'

/** Capacity of a decoded JSON list of `n` items: Go's decoder appends one by one, doubling the backing array. */
export function decodedCapacity (n: number): number {
  let cap = 0
  while (cap < n) cap = cap === 0 ? 1 : cap < 256 ? cap * 2 : cap + Math.floor((cap + 768) / 4)
  return cap
}

/** The original list's `original.length` items as read back after merging `patch` into it in place. */
export function listAfterInPlaceMerge (original: JsonValue[], patch: JsonValue[], mergeKey: string, kind: string): JsonValue[] {
  const cap = decodedCapacity(original.length)
  const backing = original.slice()
  if (kind !== 'map') {
    // `append(original, patch...)` shares the array when it fits; de-duplication then rewrites it.
    if (original.length + patch.length <= cap) {
      const both = backing.concat(patch)
      dedupeWithoutTruncating(both)
      return both.slice(0, original.length)
    }
    return backing
  }
  let len = original.length
  let replace = false
  const plain: JsonValue[] = []
  for (const v of patch) {
    if (!isMap(v) || !hasOwn(v, DIRECTIVE)) { plain.push(v); continue }
    if (v[DIRECTIVE] === 'replace') replace = true
    if (v[DIRECTIVE] !== 'delete') continue
    for (let i = find(backing, len, mergeKey, v[mergeKey]); i >= 0; i = find(backing, len, mergeKey, v[mergeKey])) {
      backing.copyWithin(i, i + 1, len)
      len--
    }
  }
  if (replace) return backing
  for (const v of plain) {
    if (find(backing, len, mergeKey, (v as Record<string, JsonValue>)[mergeKey]) >= 0) continue
    if (len >= cap) break // the next append moves to a new array; the old one is no longer written
    backing[len++] = v
  }
  return backing.slice(0, original.length)
}

function find (list: JsonValue[], len: number, key: string, value: JsonValue | undefined): number {
  for (let i = 0; i < len; i++) {
    const item = list[i]
    if (isMap(item) && hasOwn(item, key) && item[key] === value) return i
  }
  return -1
}

/** Kubernetes' de-duplication, leaving the array's tail as Go leaves the backing array (not cleared). */
function dedupeWithoutTruncating (s: JsonValue[]): void {
  let length = s.length - 1
  for (let i = 0; i < length; i++) {
    for (let j = i + 1; j <= length; j++) {
      if (s[i] === s[j]) {
        s[j] = s[length]
        length--
        j--
      }
    }
  }
}
