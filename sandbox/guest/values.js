// Guest side: CEL values <-> the tagged JSON that crosses the sandbox boundary.
//
// Tagged form (also what the host decodes): {t:'int'|'uint', v:'<decimal>'}, {t:'double', v:number|'NaN'|
// 'Infinity'|'-Infinity'}, {t:'string'|'bool', v}, {t:'null'}, {t:'bytes', v:<base64>}, {t:'list', v:[...]},
// {t:'map', v:[[k, v], ...]}, {t:'timestamp', v:<RFC 3339>}, {t:'duration', v:'<seconds>s'}, {t:'type', v:name},
// {t:'optional', v?}, {t:'object', type, v:{field: tagged}} (a quantity: type kubernetes.Quantity, v.value its decimal text).

import { UnsignedInt, Duration } from 'cel-lib/functions.js'
import { Optional } from 'cel-lib/optional.js'
import { Quantity } from './quantity.js'

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'

export function toBase64(bytes) {
  let out = ''
  for (let i = 0; i < bytes.length; i += 3) {
    const n = (bytes[i] << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0)
    out += B64[(n >> 18) & 63] + B64[(n >> 12) & 63]
    out += i + 1 < bytes.length ? B64[(n >> 6) & 63] : '='
    out += i + 2 < bytes.length ? B64[n & 63] : '='
  }
  return out
}

export function fromBase64(s) {
  const clean = s.replace(/[^A-Za-z0-9+/\-_]/g, '')
  const out = []
  let buf = 0
  let bits = 0
  for (const ch of clean) {
    let v = B64.indexOf(ch)
    if (ch === '-') v = 62
    if (ch === '_') v = 63
    buf = (buf << 6) | v
    bits += 6
    if (bits >= 8) {
      bits -= 8
      out.push((buf >> bits) & 255)
    }
  }
  return new Uint8Array(out)
}

function formatDuration(d) {
  const total = d.seconds * 1000000000n + BigInt(d.nanos)
  const neg = total < 0n
  const abs = neg ? -total : total
  const secs = abs / 1000000000n
  const frac = abs % 1000000000n
  let s = String(secs)
  if (frac) s += '.' + String(frac).padStart(9, '0').replace(/0+$/, '')
  return (neg ? '-' : '') + s + 's'
}

/** Encodes a CEL value (as the library represents it) into the tagged form. */
export function encode(v) {
  switch (typeof v) {
    case 'bigint':
      return { t: 'int', v: String(v) }
    case 'number':
      return { t: 'double', v: Number.isFinite(v) ? v : String(v) }
    case 'string':
      return { t: 'string', v }
    case 'boolean':
      return { t: 'bool', v }
  }
  if (v === null || v === undefined) return { t: 'null' }
  if (v instanceof UnsignedInt) return { t: 'uint', v: String(v.valueOf()) }
  if (v instanceof Uint8Array) return { t: 'bytes', v: toBase64(v) }
  if (Array.isArray(v)) return { t: 'list', v: v.map(encode) }
  if (v instanceof Set) return { t: 'list', v: [...v].map(encode) }
  if (v instanceof Date) return { t: 'timestamp', v: v.toISOString() }
  if (v instanceof Duration) return { t: 'duration', v: formatDuration(v) }
  if (v instanceof Optional) return v.hasValue() ? { t: 'optional', v: encode(v.value()) } : { t: 'optional' }
  if (v instanceof Map) return { t: 'map', v: [...v].map(([k, x]) => [encode(k), encode(x)]) }
  if (v.constructor === Object || v.constructor === undefined) {
    return { t: 'map', v: Object.keys(v).map((k) => [encode(k), encode(v[k])]) }
  }
  if (v.__celObject) {
    const fields = {}
    for (const k of Object.keys(v)) fields[k] = encode(v[k])
    return { t: 'object', type: v.constructor.name, v: fields }
  }
  if (v instanceof Quantity) return { t: 'object', type: 'kubernetes.Quantity', v: { value: { t: 'string', v: v.toString() } } }
  if (typeof v.name === 'string' && v.constructor?.name === 'Type') return { t: 'type', v: v.name }
  return { t: 'type', v: String(v) }
}

/** Decodes the tagged form into a CEL value (used for conformance bindings and `{"@cel": ...}` inputs). */
export function decode(x) {
  switch (x.t) {
    case 'int':
      return BigInt(x.v)
    case 'uint':
      return new UnsignedInt(BigInt(x.v))
    case 'double':
      return Number(x.v)
    case 'string':
    case 'bool':
      return x.v
    case 'null':
      return null
    case 'bytes':
      return fromBase64(x.v)
    case 'list':
      return x.v.map(decode)
    case 'map': {
      if (x.v.every(([k]) => k.t === 'string')) {
        const o = {}
        for (const [k, v] of x.v) o[k.v] = decode(v)
        return o
      }
      return new Map(x.v.map(([k, v]) => [decode(k), decode(v)]))
    }
    case 'timestamp':
      return new Date(x.v)
    case 'duration':
      return parseDuration(x.v)
    case 'optional':
      return x.v === undefined ? Optional.none() : Optional.of(decode(x.v))
  }
  throw new Error(`cannot decode value of kind ${x.t}`)
}

export function parseDuration(s) {
  const m = /^(-?)(\d+)(?:\.(\d{1,9}))?s$/.exec(s)
  if (!m) throw new Error(`bad duration ${s}`)
  const sign = m[1] ? -1n : 1n
  const nanos = BigInt((m[3] ?? '').padEnd(9, '0'))
  return new Duration(sign * BigInt(m[2]), Number(sign * nanos))
}

/**
 * Converts plain JSON into CEL values for a declared CEL type string (no schema): integral numbers become
 * int under `int` and `dyn` (as Kubernetes' unstructured conversion does), `{"@cel": tagged}` is decoded.
 */
export function fromJson(v, type = 'dyn') {
  if (v === null || v === undefined) return null
  if (typeof v === 'number') {
    if (type === 'double') return v
    if (type === 'uint') return new UnsignedInt(BigInt(v))
    return Number.isInteger(v) && type !== 'double' ? BigInt(v) : v
  }
  if (typeof v !== 'object') return v
  if (Array.isArray(v)) {
    const inner = /^list<(.*)>$/.exec(type)?.[1] ?? 'dyn'
    return v.map((x) => fromJson(x, inner))
  }
  if (v['@cel']) return decode(v['@cel'])
  const inner = /^map<[^,]*,\s*(.*)>$/.exec(type)?.[1] ?? 'dyn'
  const o = {}
  for (const k of Object.keys(v)) o[k] = fromJson(v[k], inner)
  return o
}
