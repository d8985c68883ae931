// Guest side: the string extension's `format` (cel-go ext.Strings >= 1): %s %d %f %e %b %o %x %X %%.

import { UnsignedInt, Duration } from 'cel-lib/functions.js'

const fail = (msg) => Object.assign(new Error(msg), { celEval: true })

function typeName(v) {
  if (v === null || v === undefined) return 'null_type'
  if (typeof v === 'bigint') return 'int'
  if (typeof v === 'number') return 'double'
  if (typeof v === 'string') return 'string'
  if (typeof v === 'boolean') return 'bool'
  if (v instanceof UnsignedInt) return 'uint'
  if (v instanceof Uint8Array) return 'bytes'
  if (v instanceof Duration) return 'google.protobuf.Duration'
  if (v instanceof Date) return 'google.protobuf.Timestamp'
  if (Array.isArray(v)) return 'list'
  return 'map'
}

const special = (d) => (Number.isNaN(d) ? 'NaN' : d > 0 ? 'Infinity' : '-Infinity')
const utf8 = (b) => new TextDecoder().decode(b)

function durationText(d) {
  const total = d.seconds * 1000000000n + BigInt(d.nanos)
  const neg = total < 0n
  const abs = neg ? -total : total
  const frac = abs % 1000000000n
  return `${neg ? '-' : ''}${abs / 1000000000n}${frac ? '.' + String(frac).padStart(9, '0').replace(/0+$/, '') : ''}s`
}

function doubleText(d) {
  if (!Number.isFinite(d)) return special(d)
  return String(d).replace(/e\+?/, 'e+').replace('e+-', 'e-')
}

function asString(v) {
  switch (typeName(v)) {
    case 'null_type':
      return 'null'
    case 'int':
    case 'bool':
    case 'string':
      return String(v)
    case 'uint':
      return String(v.valueOf())
    case 'double':
      return doubleText(v)
    case 'bytes':
      return utf8(v)
    case 'google.protobuf.Duration':
      return durationText(v)
    case 'google.protobuf.Timestamp':
      return v.toISOString().replace(/\.000Z$/, 'Z')
    case 'list':
      return `[${v.map(asString).join(', ')}]`
    default: {
      if (typeof v.name === 'string' && v.constructor?.name === 'Type') return v.name
      const entries = v instanceof Map ? [...v] : Object.entries(v)
      const parts = entries.map(([k, x]) => [asString(k), asString(x)]).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
      return `{${parts.map(([k, x]) => `${k}: ${x}`).join(', ')}}`
    }
  }
}

function integer(v, clause) {
  const t = typeName(v)
  if (t === 'int') return v
  if (t === 'uint') return v.valueOf()
  throw fail(`error during formatting: ${clause}, was given ${t}`)
}

function toFloat(v, clause) {
  const t = typeName(v)
  if (t === 'double') return v
  if (t === 'int') return Number(v)
  if (t === 'uint') return Number(v.valueOf())
  throw fail(`error during formatting: ${clause} clause can only be used on doubles, was given ${t}`)
}

const hex = (s, upper) => (upper ? s.toUpperCase() : s)

function formatOne(verb, precision, v) {
  switch (verb) {
    case 's':
      return asString(v)
    case 'd':
      if (typeof v === 'number' && !Number.isFinite(v)) return special(v)
      return String(integer(v, 'decimal clause can only be used on integers'))
    case 'f': {
      const d = toFloat(v, 'fixed-point')
      return Number.isFinite(d) ? d.toFixed(precision ?? 6) : special(d)
    }
    case 'e': {
      const d = toFloat(v, 'scientific')
      if (!Number.isFinite(d)) return special(d)
      return d.toExponential(precision ?? 6).replace(/e([+-])(\d)$/, 'e$10$2')
    }
    case 'b':
      if (typeof v === 'boolean') return v ? '1' : '0'
      return integer(v, 'only integers and bools can be formatted as binary').toString(2)
    case 'o':
      return integer(v, 'octal clause can only be used on integers').toString(8)
    case 'x':
    case 'X': {
      const upper = verb === 'X'
      if (typeof v === 'string') v = new TextEncoder().encode(v)
      if (v instanceof Uint8Array) return hex([...v].map((b) => b.toString(16).padStart(2, '0')).join(''), upper)
      return hex(integer(v, 'only integers, byte buffers, and strings can be formatted as hex').toString(16), upper)
    }
  }
  throw fail(`could not parse formatting clause: unrecognized formatting clause "${verb}"`)
}

export function format(str, args) {
  let out = ''
  let next = 0
  for (let i = 0; i < str.length; i++) {
    const c = str[i]
    if (c !== '%') {
      out += c
      continue
    }
    if (str[i + 1] === '%') {
      out += '%'
      i++
      continue
    }
    const m = /^(?:\.(\d+))?([a-zA-Z])/.exec(str.slice(i + 1))
    if (!m) throw fail('could not parse formatting clause: missing formatting clause')
    i += m[0].length
    if (!'sdfebox'.includes(m[2]) && m[2] !== 'X') throw fail(`could not parse formatting clause: unrecognized formatting clause "${m[2]}"`)
    if (next >= args.length) throw fail(`index ${next} out of range`)
    out += formatOne(m[2], m[1] === undefined ? undefined : Number(m[1]), args[next++])
  }
  return out
}
