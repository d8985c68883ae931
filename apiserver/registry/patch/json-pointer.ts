// JSON Pointer (RFC 6901) parsing and the JSON helpers the patch algorithms share: own-key access, deep equality.

import { PatchError } from './patch-error.js'

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json }
export type JsonObject = { [key: string]: Json }

/** "/a~1b/0" -> ["a/b", "0"]; "" -> [] (the whole document). */
export function parsePointer (pointer: string): string[] {
  if (pointer === '') return []
  if (!pointer.startsWith('/')) throw new PatchError('InvalidPointer', `JSON pointer must be empty or start with "/": ${JSON.stringify(pointer)}`)
  return pointer.slice(1).split('/').map(token => {
    if (/~[^01]|~$/.test(token)) throw new PatchError('InvalidPointer', `invalid escape in JSON pointer ${JSON.stringify(pointer)}`)
    return token.replace(/~1/g, '/').replace(/~0/g, '~')
  })
}

export function isObject (v: unknown): v is JsonObject {
  return v !== null && typeof v === 'object' && !Array.isArray(v)
}

export function hasOwn (obj: JsonObject, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(obj, key)
}

/** Sets an own data property, also for keys such as "__proto__" that plain assignment would not store. */
export function setOwn (obj: JsonObject, key: string, value: Json): void {
  Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true })
}

/** An array index token: "0" or a number without leading zeros; undefined when it is not one. */
export function arrayIndex (token: string): number | undefined {
  return /^(0|[1-9][0-9]*)$/.test(token) ? Number(token) : undefined
}

/** Structural equality of JSON values; object member order does not matter. */
export function jsonEqual (a: Json, b: Json): boolean {
  if (a === b) return true
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((v, i) => jsonEqual(v, b[i]))
  }
  if (isObject(a)) {
    if (!isObject(b)) return false
    const ka = Object.keys(a)
    if (ka.length !== Object.keys(b).length) return false
    return ka.every(k => hasOwn(b, k) && jsonEqual(a[k], b[k]))
  }
  return false
}

/**
 * A deep copy of JSON data that keeps every own key (`__proto__` too, as an own property, as JSON.parse makes it).
 * A walk rather than a JSON round trip or structuredClone: several times faster on the objects the write path copies.
 */
export function cloneJson<T> (v: T): T {
  return copyJson(v as Json) as T
}

function copyJson (v: Json): Json {
  if (v === null || typeof v !== 'object') return v
  if (Array.isArray(v)) {
    const out: Json[] = new Array(v.length)
    for (let i = 0; i < v.length; i++) out[i] = copyJson(v[i])
    return out
  }
  const out: JsonObject = {}
  for (const k of Object.keys(v)) {
    if (k === '__proto__') setOwn(out, k, copyJson(v[k]))
    else out[k] = copyJson(v[k])
  }
  return out
}
