// Guest side: list-type `set` and `map` semantics (§2.3.8): equality ignoring order, and concatenation
// that keeps the left list's positions (set: appends new elements; map: right items overwrite equal keys
// in place and new keys are appended).
//
// Arrays converted from such schema nodes carry a hidden marker. The library binds operator handlers
// into frozen declarations, so after type checking we wrap the `handle` of each `+`, `==` and `!=` node;
// the wrapper falls back to the library's handler unless an operand is marked.

import { deepEqual } from './k8s-lib.js'

const LIST_TYPE = Symbol('orch.listType')

export function markList(arr, type, keys) {
  Object.defineProperty(arr, LIST_TYPE, { value: { type, keys } })
  return arr
}

const markerOf = (a, b) => (Array.isArray(a) && a[LIST_TYPE]) || (Array.isArray(b) && b[LIST_TYPE])
const sameKeys = (x, y, keys) => keys.every((k) => deepEqual(x?.[k], y?.[k]))

function concat(a, b, m) {
  const out = [...a]
  for (const y of b) {
    if (m.type === 'set') {
      if (!out.some((x) => deepEqual(x, y))) out.push(y)
    } else {
      const i = out.findIndex((x) => sameKeys(x, y, m.keys))
      if (i >= 0) out[i] = y
      else out.push(y)
    }
  }
  return markList(out, m.type, m.keys)
}

function equal(a, b, m) {
  if (a.length !== b.length) return false
  if (m.type === 'set') return a.every((x) => b.some((y) => deepEqual(x, y))) && b.every((y) => a.some((x) => deepEqual(x, y)))
  return a.every((x) => {
    const y = b.find((c) => sameKeys(x, c, m.keys))
    return y !== undefined && deepEqual(x, y)
  })
}

function wrap(node) {
  const orig = node.handle
  if (typeof orig !== 'function' || orig.__listTypes) return
  let h
  if (node.op === '+') h = (a, b, ast, ev) => (Array.isArray(a) && Array.isArray(b) && markerOf(a, b) ? concat(a, b, markerOf(a, b)) : orig(a, b, ast, ev))
  else if (node.op === '==') h = (a, b, ast, ev) => (Array.isArray(a) && Array.isArray(b) && markerOf(a, b) ? equal(a, b, markerOf(a, b)) : orig(a, b, ast, ev))
  else h = (a, b, ast, ev) => (Array.isArray(a) && Array.isArray(b) && markerOf(a, b) ? !equal(a, b, markerOf(a, b)) : orig(a, b, ast, ev))
  h.__listTypes = true
  node.handle = h
}

const isListish = (n) => {
  const k = n?.checkedType?.kind
  return k === 'list' || k === 'dyn' || k === undefined
}

/** Walks a checked AST and wraps list operators (also inside macros' comprehensions). */
export function wrapListOperators(node, seen = new Set()) {
  if (!node || typeof node !== 'object' || seen.has(node)) return
  seen.add(node)
  if (Array.isArray(node)) {
    for (const n of node) wrapListOperators(n, seen)
    return
  }
  if ((node.op === '+' || node.op === '==' || node.op === '!=') && Array.isArray(node.args) && isListish(node.args[0]) && isListish(node.args[1])) wrap(node)
  const a = node.args
  if (Array.isArray(a)) wrapListOperators(a, seen)
  else if (a && typeof a === 'object') {
    if (a.op) wrapListOperators(a, seen)
    else for (const k of ['iterable', 'init', 'step']) wrapListOperators(a[k], seen)
  }
  if (node.__alt) wrapListOperators(node.__alt, seen)
}
