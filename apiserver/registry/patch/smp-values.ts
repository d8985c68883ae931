// Strategic merge patch values and errors: Go-compatible type names, `%v` text, scalar sorting and de-duplication.
// Kubernetes' algorithm compares and orders values through Go's fmt and reflect; these helpers reproduce that.

import { isDeepStrictEqual } from 'node:util'

export type JsonValue = null | boolean | number | bigint | string | JsonValue[] | JsonMap
export interface JsonMap { [key: string]: JsonValue }

export const DIRECTIVE = '$patch'
export const RETAIN_KEYS = '$retainKeys'
export const DELETE_FROM_PRIMITIVE_LIST = '$deleteFromPrimitiveList'
export const SET_ELEMENT_ORDER = '$setElementOrder'

/**
 * A failure of the algorithm. `status` is what kube-apiserver answers for it: 400 for a malformed directive,
 * 422 for the two shape errors it maps so, 500 (reason empty) for every other error it passes through as is.
 */
export class SmpError extends Error {
  constructor (message: string, readonly status: 400 | 422 | 500 = 500) {
    super(message)
    this.name = 'SmpError'
  }
}

/** Creating a three-way patch found a change that also changed between original and current. */
export class SmpConflictError extends Error {
  constructor (message: string) {
    super(message)
    this.name = 'SmpConflictError'
  }
}

export const errBadJSONDoc = (): SmpError => new SmpError('invalid JSON document', 400)
export const errNoListOfLists = (): SmpError => new SmpError('lists of lists are not supported', 422)
export const errBadPrimitiveList = (): SmpError => new SmpError('invalid patch format of primitive list', 400)
export const errBadRetainKeys = (): SmpError => new SmpError('invalid patch format of retainKeys', 400)
export const errBadSetElementOrder = (): SmpError => new SmpError('invalid patch format of setElementOrder list', 400)

export function errNoMergeKey (m: JsonMap, key: string): SmpError {
  return new SmpError(`map: ${goString(m)} does not contain declared merge key: ${key}`)
}

/** As Go's `expected a <type>, but received a <type>` (the expected side named by the Go type). */
export function errBadArgType (expected: 'map' | 'slice', actual: unknown): SmpError {
  const want = expected === 'map' ? 'map[string]interface {}' : '[]interface {}'
  return new SmpError(`expected a ${want}, but received a ${goType(actual)}`)
}

export function errBadPatchType (t: unknown, m: JsonMap): SmpError {
  return new SmpError(`unknown patch type: ${goString(t)} in map: ${goString(m)}`)
}

export function isMap (v: unknown): v is JsonMap {
  return v !== null && typeof v === 'object' && !Array.isArray(v)
}

export function hasOwn (m: JsonMap, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(m, key)
}

/** Sets an own member; `__proto__` (a legal JSON member name) stays data instead of changing the prototype. */
export function setKey (m: JsonMap, key: string, value: JsonValue): void {
  if (key === '__proto__') Object.defineProperty(m, key, { value, writable: true, enumerable: true, configurable: true })
  else m[key] = value
}

export function deepEqual (a: unknown, b: unknown): boolean {
  return isDeepStrictEqual(a, b)
}

/** The Go dynamic type a JSON value decodes to in apimachinery (whole numbers are int64). */
export function goType (v: unknown): string {
  if (v === null || v === undefined) return '<nil>'
  if (Array.isArray(v)) return '[]interface {}'
  switch (typeof v) {
    case 'object': return 'map[string]interface {}'
    case 'string': return 'string'
    case 'boolean': return 'bool'
    case 'bigint': return 'int64'
    case 'number': return Number.isInteger(v) ? 'int64' : 'float64'
    default: return typeof v
  }
}

/** Go's `fmt.Sprintf("%v", v)` for decoded JSON values. */
export function goString (v: unknown): string {
  if (v === null || v === undefined) return '<nil>'
  if (Array.isArray(v)) return `[${v.map(goString).join(' ')}]`
  switch (typeof v) {
    case 'object': {
      const m = v as JsonMap
      return `map[${Object.keys(m).sort(byteOrder).map(k => `${k}:${goString(m[k])}`).join(' ')}]`
    }
    case 'number': return Number.isInteger(v) ? String(v) : goFloat(v)
    default: return String(v)
  }
}

/** `%v` of a float64: shortest digits, exponent form below 1e-4 and from 1e6 on (Go's %g with shortest precision). */
function goFloat (x: number): string {
  if (!Number.isFinite(x)) return x > 0 ? '+Inf' : x < 0 ? '-Inf' : 'NaN'
  const [mantissa, expText] = x.toExponential().split('e')
  const exp = Number(expText)
  if (exp < -4 || exp >= 6) {
    const digits = String(Math.abs(exp)).padStart(2, '0')
    return `${mantissa}e${exp < 0 ? '-' : '+'}${digits}`
  }
  return String(x)
}

function byteOrder (a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

/**
 * Go's insertion sort over [a, b) (what sort.Sort uses below 13 elements), with Go's `less`: kept exactly because
 * Kubernetes' comparators are not strict orders and ties land where Go puts them.
 */
export function goInsertionSort<T> (s: T[], less: (a: T, b: T) => boolean, a = 0, b = s.length): T[] {
  for (let i = a + 1; i < b; i++) {
    for (let j = i; j > a && less(s[j], s[j - 1]); j--) swap(s, j, j - 1)
  }
  return s
}

/** Go's sort.SliceStable (insertion-sorted blocks of 20, then in-place symmetric merges), in place. */
export function goStableSort<T> (s: T[], less: (a: T, b: T) => boolean): T[] {
  const n = s.length
  let blockSize = 20
  let a = 0
  let b = blockSize
  while (b <= n) {
    goInsertionSort(s, less, a, b)
    a = b
    b += blockSize
  }
  goInsertionSort(s, less, a, n)
  const lessAt = (i: number, j: number): boolean => less(s[i], s[j])
  while (blockSize < n) {
    a = 0
    b = 2 * blockSize
    while (b <= n) {
      symMerge(s, lessAt, a, a + blockSize, b)
      a = b
      b += 2 * blockSize
    }
    const m = a + blockSize
    if (m < n) symMerge(s, lessAt, a, m, n)
    blockSize *= 2
  }
  return s
}

function symMerge<T> (s: T[], less: (i: number, j: number) => boolean, a: number, m: number, b: number): void {
  if (m - a === 1) {
    let i = m
    let j = b
    while (i < j) {
      const h = (i + j) >>> 1
      if (less(h, a)) i = h + 1
      else j = h
    }
    for (let k = a; k < i - 1; k++) swap(s, k, k + 1)
    return
  }
  if (b - m === 1) {
    let i = a
    let j = m
    while (i < j) {
      const h = (i + j) >>> 1
      if (!less(m, h)) i = h + 1
      else j = h
    }
    for (let k = m; k > i; k--) swap(s, k, k - 1)
    return
  }
  const mid = (a + b) >>> 1
  const n = mid + m
  let start: number
  let r: number
  if (m > mid) {
    start = n - b
    r = mid
  } else {
    start = a
    r = m
  }
  const p = n - 1
  while (start < r) {
    const c = (start + r) >>> 1
    if (!less(p - c, c)) start = c + 1
    else r = c
  }
  const end = n - start
  if (start < m && m < end) rotate(s, start, m, end)
  if (a < start && start < mid) symMerge(s, less, a, start, mid)
  if (mid < end && end < b) symMerge(s, less, mid, end, b)
}

function rotate<T> (s: T[], a: number, m: number, b: number): void {
  let i = m - a
  let j = b - m
  while (i !== j) {
    if (i > j) {
      swapRange(s, m - i, m, j)
      i -= j
    } else {
      swapRange(s, m - i, m + j - i, i)
      j -= i
    }
  }
  swapRange(s, m - i, m, i)
}

function swapRange<T> (s: T[], a: number, b: number, n: number): void {
  for (let i = 0; i < n; i++) swap(s, a + i, b + i)
}

function swap<T> (s: T[], i: number, j: number): void {
  const tmp = s[i]
  s[i] = s[j]
  s[j] = tmp
}

/** Sorts in place by `%v` text, as Kubernetes' sortScalars does (its less is `a <= b`). */
export function sortScalars (s: JsonValue[]): JsonValue[] {
  const text = new Map<JsonValue, string>()
  const str = (v: JsonValue): string => {
    let t = text.get(v)
    if (t === undefined) { t = goString(v); text.set(v, t) }
    return t
  }
  if (s.length <= 12) return goInsertionSort(s, (a, b) => str(a) <= str(b))
  return s.sort((a, b) => byteOrder(str(a), str(b)))
}

/**
 * Kubernetes' in-place de-duplication: a duplicate is overwritten by the last element (order changes). Above
 * DEDUPE_EXACT_MAX items the first occurrences are kept instead, in linear time: merged lists are re-ordered
 * afterwards, and a quadratic pass over a large patch would block the server.
 */
export function deduplicateScalars (s: JsonValue[]): JsonValue[] {
  if (s.length > DEDUPE_EXACT_MAX) {
    const seen = new Set<JsonValue>()
    let w = 0
    for (const v of s) if (!seen.has(v)) { seen.add(v); s[w++] = v }
    s.length = w
    return s
  }
  let length = s.length - 1
  for (let i = 0; i < length; i++) {
    for (let j = i + 1; j <= length; j++) {
      if (s[i] === s[j]) {
        s[j] = s[length]
        s.length = length
        length--
        j--
      }
    }
  }
  return s
}

const DEDUPE_EXACT_MAX = 256

/** The element kind shared by all items of the slices (`map`, `slice` or a scalar type); errors as Go's sliceElementType. */
export function sliceElementType (...slices: Array<JsonValue[] | undefined>): string {
  let prev: string | undefined
  for (const s of slices) {
    for (const v of s ?? []) {
      const t = goType(v)
      if (prev === undefined) {
        prev = t
        if (t === '[]interface {}') throw errNoListOfLists()
      } else if (prev !== t) {
        throw new SmpError(`list element types are not identical: ${goString(slices.map(x => x ?? []))}`)
      }
    }
  }
  if (prev === undefined) throw new SmpError('no elements in any of the given slices')
  return prev === 'map[string]interface {}' ? 'map' : prev
}

/** Splits `a,b` strategies into (retainKeys?, the other strategy), as Kubernetes' extractRetainKeysPatchStrategy. */
export function extractRetainKeys (strategies: string[]): [boolean, string] {
  if (strategies.length === 0) return [false, '']
  if (strategies.length === 1) return strategies[0] === 'retainKeys' ? [true, ''] : [false, strategies[0]]
  if (strategies.length === 2) {
    if (strategies[0] === 'retainKeys') return [true, strategies[1]]
    if (strategies[1] === 'retainKeys') return [true, strategies[0]]
  }
  throw new SmpError(`unexpected patch strategy: ${goString(strategies)}`)
}
