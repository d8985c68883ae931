// Guest side: functions and operators whose base-library behaviour differs from cel-go's, replaced per checked node.
//
// The library's declarations cannot be re-registered, so after type checking each receiver call to one of
// these functions gets a handler that applies cel-go's semantics to string arguments (and falls back to
// the resolved one otherwise). The interpreter and the compiled code both call node.handle.

import { regexMatches } from './regex.js'
import { UnsignedInt } from 'cel-lib/functions.js'

/** Go's unicode.IsSpace set: JavaScript's \s without U+FEFF, plus U+0085 (NEL). */
const GO_SPACE = '[\\t\\n\\v\\f\\r \\u0085\\u00A0\\u1680\\u2000-\\u200A\\u2028\\u2029\\u202F\\u205F\\u3000]'
const LEADING_SPACE = new RegExp(`^${GO_SPACE}+`)
const TRAILING_SPACE = new RegExp(`${GO_SPACE}+$`)

const strings = (args) => args.every((x) => typeof x === 'string')
const dateAndZone = (args) => args[0] instanceof Date && typeof args[1] === 'string'

const evalError = (msg) => Object.assign(new Error(msg), { celEval: true })

/**
 * The instant shifted by a time zone's offset, read with UTC getters. Fixed offsets ("+05:30", "-02:00",
 * "02:00") and UTC are supported; QuickJS has no time zone database, so other IANA names are an
 * evaluation error rather than a silently wrong answer (the library's toLocaleString ignores the zone).
 */
function inZone(d, tz) {
  if (tz === 'UTC' || tz === 'Etc/UTC' || tz === 'Z') return d
  const m = /^([+-]?)(\d{2}):(\d{2})$/.exec(tz)
  if (!m) throw evalError(`unsupported time zone '${tz}': only UTC and fixed offsets like '+01:00' are available`)
  const minutes = (Number(m[2]) * 60 + Number(m[3])) * (m[1] === '-' ? -1 : 1)
  return new Date(d.getTime() + minutes * 60000)
}

const dayOfYear = (d) => Math.floor((d.getTime() - Date.UTC(d.getUTCFullYear(), 0, 1)) / 86400000)

const TIME_GETTERS = {
  getFullYear: (d) => d.getUTCFullYear(),
  getMonth: (d) => d.getUTCMonth(),
  getDate: (d) => d.getUTCDate(),
  getDayOfMonth: (d) => d.getUTCDate() - 1,
  getDayOfWeek: (d) => d.getUTCDay(),
  getDayOfYear: dayOfYear,
  getHours: (d) => d.getUTCHours(),
  getMinutes: (d) => d.getUTCMinutes(),
  getSeconds: (d) => d.getUTCSeconds(),
  getMilliseconds: (d) => d.getUTCMilliseconds(),
}

const OVERRIDES = {
  // RE2 (the library hands the pattern to a backtracking RegExp as is)
  matches: [1, regexMatches, strings],
  // only ASCII letters change case
  lowerAscii: [0, (s) => s.replace(/[A-Z]+/g, (c) => c.toLowerCase()), strings],
  upperAscii: [0, (s) => s.replace(/[a-z]+/g, (c) => c.toUpperCase()), strings],
  trim: [0, (s) => s.replace(LEADING_SPACE, '').replace(TRAILING_SPACE, ''), strings],
}
for (const [name, get] of Object.entries(TIME_GETTERS)) OVERRIDES[name] = [1, (d, tz) => BigInt(get(inZone(d, tz))), dateAndZone]

/** Calls `fn` on each node of a checked AST (macro expansions and comprehension parts included). */
export function walkAst(node, fn) {
  if (!node || typeof node !== 'object') return
  if (Array.isArray(node)) {
    for (const n of node) walkAst(n, fn)
    return
  }
  if (!node.op) return
  fn(node)
  const a = node.args
  if (Array.isArray(a)) walkAst(a.filter((x) => x && typeof x === 'object'), fn)
  else if (a && typeof a === 'object') {
    if (a.op) walkAst(a, fn)
    else walkAst([a.iterable, a.init, a.step].filter(Boolean), fn)
  }
  if (node.__alt) walkAst(node.__alt, fn)
}

/** The numeric value of an int, uint or double for cross-type comparison, or undefined. */
function numeric(v) {
  if (typeof v === 'bigint' || typeof v === 'number') return v
  if (v instanceof UnsignedInt) return v.valueOf()
  return undefined
}

/** CEL's numeric equality across int, uint and double (exact for integers). */
function numericEqual(a, b) {
  if (typeof a === 'bigint' && typeof b === 'bigint') return a === b
  if (typeof a === 'number' && typeof b === 'number') return a === b
  const d = typeof a === 'number' ? a : b
  const i = typeof a === 'number' ? b : a
  return Number.isInteger(d) && Math.abs(d) < 2 ** 64 && BigInt(d) === i
}

/** `x in list` with a numeric `x` finds numerically equal elements of any numeric type, as cel-go does. */
function overrideIn(node) {
  const original = node.handle
  node.handle = (l, r, n, ev) => {
    if (Array.isArray(r)) {
      const x = numeric(l)
      if (x !== undefined && r.some((e) => { const y = numeric(e); return y !== undefined && numericEqual(x, y) })) return true
    }
    return original(l, r, n, ev)
  }
}

export function overrideHandlers(ast) {
  walkAst(ast, (node) => {
    if (node.op === 'in' && node.handle && !node.__overridden) {
      node.__overridden = true
      overrideIn(node)
      return
    }
    if (node.op !== 'rcall' || !node.handle || node.__overridden) return
    const o = OVERRIDES[node.args[0]]
    if (!o || node.args[2].length !== o[0]) return
    const [, fn, accepts] = o
    const original = node.handle
    node.__overridden = true
    node.handle = (args, ev, n) => (accepts(args) ? fn(...args) : original(args, ev, n))
  })
}
