// Path elements of managed fields: their FieldsV1 spelling (`f:`, `k:`, `v:`, `i:`), their printed form, their order.
// An element is kept as its FieldsV1 key string, so sets compare and hash elements as plain strings.

import type { Json } from '../patch/json-pointer.js'

/** One step into an object: `f:<field>`, `k:<json of key fields>`, `v:<json value>` or `i:<index>`. */
export type PathElement = string

/** `f:<name>` strings already made, so that walks use one string per field name (hashed once). Bounded. */
const fieldElements = new Map<string, PathElement>()
const FIELD_ELEMENTS_LIMIT = 8192

export function fieldElement (name: string): PathElement {
  let pe = fieldElements.get(name)
  if (pe === undefined) {
    // Past the limit (keys of maps are data: labels, annotations) the cache starts again.
    if (fieldElements.size >= FIELD_ELEMENTS_LIMIT) fieldElements.clear()
    pe = 'f:' + name
    fieldElements.set(name, pe)
  }
  return pe
}

/** A keyed list item; `fields` in any order (they are sorted by name, as structured-merge-diff does). */
export function keyElement (fields: Array<[string, Json]>): PathElement {
  const sorted = [...fields].sort((a, b) => a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)
  return 'k:' + JSON.stringify(Object.fromEntries(sorted))
}

/** An element of a set (a list of unique scalars). */
export function valueElement (value: Json): PathElement {
  return 'v:' + stableJson(value)
}

export function indexElement (index: number): PathElement {
  return 'i:' + String(index)
}

/** Whether the string is a well-formed element (used when reading FieldsV1 sent by clients). */
export function isPathElement (s: string): boolean {
  const kind = s.slice(0, 2)
  if (kind === 'f:') return true
  if (kind === 'i:') return /^(0|[1-9][0-9]*)$/.test(s.slice(2))
  if (kind !== 'k:' && kind !== 'v:') return false
  try {
    const v = JSON.parse(s.slice(2)) as unknown
    return kind === 'v:' || (v !== null && typeof v === 'object' && !Array.isArray(v))
  } catch {
    return false
  }
}

/** The field name of an `f:` element; undefined for the other kinds. */
export function fieldName (pe: PathElement): string | undefined {
  if (!pe.startsWith('f:')) return undefined
  // One string per name, as for fieldElement: the type lookups that follow then hash it once.
  let name = fieldNames.get(pe)
  if (name === undefined) {
    if (fieldNames.size >= FIELD_ELEMENTS_LIMIT) fieldNames.clear()
    name = pe.slice(2)
    fieldNames.set(pe, name)
  }
  return name
}

const fieldNames = new Map<PathElement, string>()

/** The printed form used in conflict messages: `.name`, `[name="a",port=80]`, `[="a"]`, `[0]`. */
export function printElement (pe: PathElement): string {
  const body = pe.slice(2)
  switch (pe.slice(0, 2)) {
    case 'f:': return '.' + body
    case 'k:': {
      const fields = JSON.parse(body) as Record<string, Json>
      return '[' + Object.entries(fields).map(([k, v]) => `${k}=${stableJson(v)}`).join(',') + ']'
    }
    case 'v:': return '[=' + body + ']'
    default: return '[' + body + ']'
  }
}

export function printPath (path: readonly PathElement[]): string {
  return path.map(printElement).join('')
}

/** Rank by the kind letter: f(ield) < k(ey) < v(alue) < i(ndex), as structured-merge-diff orders elements. */
function rank (code: number): number {
  switch (code) {
    case 102: return 0 // f
    case 107: return 1 // k
    case 118: return 2 // v
    case 105: return 3 // i
    default: return 4
  }
}

/** structured-merge-diff's element order: fields, then keys, then values, then indexes; each by its text. */
export function compareElements (a: PathElement, b: PathElement): number {
  const ra = rank(a.charCodeAt(0))
  const rb = rank(b.charCodeAt(0))
  if (ra !== rb) return ra - rb
  if (ra === 3) return Number(a.slice(2)) - Number(b.slice(2))
  return a < b ? -1 : a > b ? 1 : 0
}

/** JSON with object members sorted by name, so equal values give equal element strings. */
export function stableJson (v: Json): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v)
  if (Array.isArray(v)) return '[' + v.map(stableJson).join(',') + ']'
  const keys = Object.keys(v).sort()
  return '{' + keys.map(k => JSON.stringify(k) + ':' + stableJson(v[k])).join(',') + '}'
}

/**
 * The first element equal to an earlier one, undefined when all differ. Lists of a few items (most) are compared
 * pair by pair: no set is made for them.
 */
export function firstDuplicate (pes: readonly PathElement[]): PathElement | undefined {
  if (pes.length > 16) {
    const seen = new Set<PathElement>()
    for (const pe of pes) {
      if (seen.has(pe)) return pe
      seen.add(pe)
    }
    return undefined
  }
  for (let i = 1; i < pes.length; i++) {
    for (let j = 0; j < i; j++) if (pes[j] === pes[i]) return pes[i]
  }
  return undefined
}
