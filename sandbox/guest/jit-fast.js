// Guest side: the compiled code's fast paths (guest/jit.js), each an inline test with the library's call as fallback.

import { Duration } from 'cel-lib/functions.js'
import { dynTest } from './jit-dyn.js'

export const RELATIONAL = new Set(['<', '<=', '>', '>='])
/** Operand types whose relational overloads in the base library are `(a, b) => a < b` (etc.): CEL type -> typeof. */
export const RELATIONAL_JS = { int: 'bigint', double: 'number', string: 'string' }

/**
 * Fast paths (generated inline, each with the library's call as fallback): a root variable is read from the
 * plain variables object and a field of a schema object straight from the object, when the value passes the
 * same type test the library's lookup applies (valueTypeMatchers for the node's checked type). For object
 * types that test is `ev.debugType(v) === type`, which depends only on v's constructor: the constructor is
 * learned from the first value the library's own lookup accepted (never Date or Duration, which checkRange
 * inspects). A field is read directly only from an object of the learned constructor whose type declares the
 * field with the node's checked type (what the library's message field lookup checks).
 */
export function learnValue(node, v, ev) {
  const t = node.checkedType
  if (node.__vc !== undefined || !t || t.kind !== 'message' || v === null || typeof v !== 'object') return
  if (v instanceof Date || v instanceof Duration || v instanceof Map) return
  try {
    if (ev.debugType(v) === t) node.__vc = v.constructor
  } catch {
    // not a value the library knows: no fast path
  }
}

/**
 * `expr` wrapped in checkRange unless the node's checked type is bool or string: checkRange only ever rejects
 * ints, timestamps and durations, and the handler the checker resolved returns its declared type.
 */
export function ranged(node, expr) {
  const name = node.checkedType?.name
  return name === 'bool' || name === 'string' ? expr : `H.checkRange(${expr})`
}

/** The inline form of the library's type test of `x` against node `n`'s checked type, or undefined. */
export function typeTest(t, x, n, isRootId) {
  if (!t) return undefined
  switch (t.name) {
    case 'string':
      return `typeof ${x} === 'string'`
    case 'bool':
      return `typeof ${x} === 'boolean'`
    case 'double':
      return `typeof ${x} === 'number'`
    case 'int':
      // a root variable also passes checkRange (ints beyond int64 are an error); a field selection does not
      return isRootId ? undefined : `typeof ${x} === 'bigint'`
  }
  if (t.kind === 'dyn') return dynTest(x, isRootId)
  if (t.kind === 'list') return `(${x} !== null && ${x} !== undefined && ${x}.constructor === Array)`
  if (t.kind === 'map') return `(${x} !== null && typeof ${x} === 'object' && ${x}.constructor === Object)`
  if (t.kind === 'message' && n) return `(${x} !== null && ${x} !== undefined && ${n}.__vc !== undefined && ${x}.constructor === ${n}.__vc)`
  return undefined
}
