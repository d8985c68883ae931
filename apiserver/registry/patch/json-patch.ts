// JSON Patch (RFC 6902): decoding a patch document and applying its operations to a JSON document.
// Errors are PatchErrors; their texts follow the Go library kube-apiserver uses (evanphx/json-patch v4).

import { PatchError } from './patch-error.js'
import { arrayIndex, cloneJson, hasOwn, isObject, jsonEqual, parsePointer, setOwn, type Json, type JsonObject } from './json-pointer.js'

/** One operation as sent: an object whose members are checked when it is applied (as kube-apiserver does). */
export type JsonPatchOperation = Record<string, Json>

const OPS = new Set(['add', 'remove', 'replace', 'move', 'copy', 'test'])

/** A parsed patch document to operations; InvalidPatch when it is not an array of objects (null is an empty patch). */
export function decodeJsonPatch (patch: unknown): JsonPatchOperation[] {
  if (patch === null) return []
  if (!Array.isArray(patch)) throw new PatchError('InvalidPatch', `cannot unmarshal ${jsonTypeName(patch)} into a JSON patch (an array of operations)`)
  patch.forEach((op, i) => {
    if (!isObject(op)) throw new PatchError('InvalidPatch', `cannot unmarshal ${jsonTypeName(op)} into JSON patch operation ${i}`)
  })
  return patch as JsonPatchOperation[]
}

/** The JSON type name Go's decoder uses in its messages. */
export function jsonTypeName (v: unknown): string {
  if (Array.isArray(v)) return 'array'
  if (v === null) return 'null'
  if (typeof v === 'boolean') return 'bool'
  return typeof v
}

/** Applies the operations in order to a copy of `doc`; the input is never changed. Throws PatchError. */
export function applyJsonPatch (doc: Json, ops: JsonPatchOperation[]): Json {
  const state = { doc: cloneJson(doc) }
  for (const op of ops) applyOne(state, op)
  return state.doc
}

type Container = JsonObject | Json[]

function applyOne (state: { doc: Json }, op: JsonPatchOperation): void {
  const kind = typeof op.op === 'string' ? op.op : 'unknown'
  if (!OPS.has(kind)) throw new PatchError('InvalidPatch', `Unexpected kind: ${kind}`)
  const path = op.path
  if (typeof path !== 'string') throw new PatchError('InvalidPatch', `${kind} operation failed to decode path: missing value`)
  const value = (): Json => {
    if (!hasOwn(op, 'value')) throw new PatchError('InvalidPatch', `${kind} operation is missing the "value" member`)
    return op.value
  }
  const from = (): string => {
    if (typeof op.from !== 'string') throw new PatchError('InvalidPatch', `${kind} operation failed to decode from: missing value`)
    return op.from
  }
  switch (kind) {
    case 'add': return add(state, path, cloneJson(value()), kind)
    case 'remove': remove(state, path, kind); return
    case 'replace': return replace(state, path, cloneJson(value()))
    case 'test': return test(state.doc, path, value())
    case 'move': return move(state, from(), path)
    case 'copy': return add(state, path, cloneJson(get(state.doc, from(), 'copy', 'from ')), 'copy')
  }
}

/** The container holding the last token of `tokens`, or undefined when some step does not exist. */
function parentOf (doc: Json, tokens: string[]): Container | undefined {
  let cur: Json = doc
  for (const token of tokens.slice(0, -1)) {
    const next = child(cur, token)
    if (next === undefined) return undefined
    cur = next
  }
  return Array.isArray(cur) || isObject(cur) ? cur : undefined
}

function child (cur: Json, token: string): Json | undefined {
  if (Array.isArray(cur)) {
    const i = arrayIndex(token)
    return i !== undefined && i < cur.length ? cur[i] : undefined
  }
  if (isObject(cur)) return hasOwn(cur, token) ? cur[token] : undefined
  return undefined
}

function get (doc: Json, path: string, kind: string, what = ''): Json {
  const tokens = parsePointer(path)
  if (tokens.length === 0) return doc
  const parent = parentOf(doc, tokens)
  const found = parent === undefined ? undefined : child(parent, tokens[tokens.length - 1])
  if (found === undefined) throw new PatchError('PathNotFound', `${kind} operation does not apply: doc is missing ${what}path: ${path}: missing value`)
  return found
}

function add (state: { doc: Json }, path: string, value: Json, kind: string): void {
  const tokens = parsePointer(path)
  if (tokens.length === 0) { state.doc = value; return }
  const parent = parentOf(state.doc, tokens)
  if (parent === undefined) throw new PatchError('PathNotFound', `${kind} operation does not apply: doc is missing path: "${path}": missing value`)
  const key = tokens[tokens.length - 1]
  if (!Array.isArray(parent)) { setOwn(parent, key, value); return }
  const i = key === '-' ? parent.length : arrayIndex(key)
  if (i === undefined || i > parent.length) {
    throw new PatchError('InvalidIndex', `error in ${kind} for path: '${path}': Unable to access invalid index: ${key}: invalid index referenced`)
  }
  parent.splice(i, 0, value)
}

/** Removes and returns the value at `path`. */
function remove (state: { doc: Json }, path: string, kind: string): Json {
  const tokens = parsePointer(path)
  if (tokens.length === 0) throw new PatchError('InvalidPatch', `${kind} operation does not apply: cannot remove the whole document`)
  const parent = parentOf(state.doc, tokens)
  const key = tokens[tokens.length - 1]
  const found = parent === undefined ? undefined : child(parent, key)
  if (parent === undefined || found === undefined) {
    throw new PatchError('PathNotFound', `${kind} operation does not apply: doc is missing path: "${path}": missing value`)
  }
  if (Array.isArray(parent)) parent.splice(Number(key), 1)
  else delete parent[key]
  return found
}

function replace (state: { doc: Json }, path: string, value: Json): void {
  const tokens = parsePointer(path)
  if (tokens.length === 0) { state.doc = value; return }
  const parent = parentOf(state.doc, tokens)
  if (parent === undefined) throw new PatchError('PathNotFound', `replace operation does not apply: doc is missing path: ${path}: missing value`)
  const key = tokens[tokens.length - 1]
  if (child(parent, key) === undefined) throw new PatchError('PathNotFound', `replace operation does not apply: doc is missing key: ${path}: missing value`)
  if (Array.isArray(parent)) parent[Number(key)] = value
  else setOwn(parent, key, value)
}

function move (state: { doc: Json }, from: string, path: string): void {
  if (from === path) { get(state.doc, from, 'move', 'from '); return }
  if (path.startsWith(from + '/')) throw new PatchError('InvalidPatch', `move operation does not apply: cannot move ${from} into its own child ${path}`)
  const value = get(state.doc, from, 'move', 'from ')
  remove(state, from, 'move')
  add(state, path, value, 'move')
}

function test (doc: Json, path: string, expected: Json): void {
  const tokens = parsePointer(path)
  if (tokens.length > 0) {
    const parent = parentOf(doc, tokens)
    if (parent === undefined || child(parent, tokens[tokens.length - 1]) === undefined) {
      throw new PatchError('PathNotFound', `test operation does not apply: is missing path: ${path}: missing value`)
    }
  }
  if (!jsonEqual(get(doc, path, 'test'), expected)) throw new PatchError('TestFailed', `testing value ${path} failed: test failed`)
}
