// Guest side: structural schemas -> CEL types, values and size bounds (spec §2.3.8 type mapping, §2.3.9 escaping).
//
// An object with properties becomes a registered CEL object type whose fields are the escaped, accessible
// property names; additionalProperties gives map<string, T>; int-or-string and untyped nodes give dyn;
// arrays list<T>; string formats byte/date/date-time/duration give bytes/timestamp/timestamp/duration.
// Values are converted eagerly to those types (ints to BigInt, objects to instances of the type's class).

import { Duration } from 'cel-lib/functions.js'
import { fromBase64 } from './values.js'
import { markList } from './listtypes.js'
import { deepEqual } from './k8s-lib.js'

const RESERVED = new Set(['true', 'false', 'null', 'in', 'as', 'break', 'const', 'continue', 'else', 'for', 'function', 'if', 'import', 'let', 'loop', 'package', 'namespace', 'return', 'var', 'void', 'while'])
const ACCESSIBLE = /^[a-zA-Z_.\-/][a-zA-Z0-9_.\-/]*$/

/** The CEL field name of a property, or undefined when the property is not accessible from CEL. */
export function escapeName(name) {
  if (!ACCESSIBLE.test(name)) return undefined
  if (RESERVED.has(name)) return `__${name}__`
  return name.replace(/__|[.\-/]/g, (m) => ({ __: '__underscores__', '.': '__dot__', '-': '__dash__', '/': '__slash__' })[m])
}

/** Base class of all schema-derived object values, so encoders and equality recognise them. */
export class CelObject {}
CelObject.prototype.__celObject = true

const MAX_REQUEST = 3 * 1024 * 1024

/** Minimum serialized JSON size of a value of this schema, as Kubernetes estimates list lengths. */
function minSerializedSize(s) {
  if (s['x-orch-int-or-string']) return 1
  switch (s.type) {
    case 'string':
      return s.format === 'duration' || s.format === 'date' || s.format === 'date-time' ? 4 : 2 + (s.minLength ?? 0)
    case 'integer':
    case 'number':
      return 1
    case 'boolean':
      return 4
    case 'array':
      return 2
    case 'object':
      return 2
    default:
      return 1
  }
}

/**
 * Builds a converter of a schema tree inside one CEL Environment: `typeOf(schema)` returns the CEL type
 * string (registering object types on the way), `convert(schema, json)` the CEL value, `shape(schema)`
 * the size bounds used by the cost estimator ({min, max, elem?, fields?}).
 */
export function createSchemaTypes(env, definitions = {}, prefix = 'orch.Object') {
  // Keyed by content: the same schema reached twice (self and oldSelf, $ref targets) is one CEL type.
  const byContent = new Map()
  const keys = new WeakMap()
  const keyOf = (s) => keys.get(s) ?? (keys.set(s, JSON.stringify(s)), keys.get(s))
  const named = {
    get: (s) => byContent.get(keyOf(s)),
    set: (s, v) => byContent.set(keyOf(s), v),
  }
  const shapes = new WeakMap()
  let seq = 0

  const resolve = (s) => {
    let n = s
    for (let i = 0; n && n.$ref && i < 32; i++) n = definitions[n.$ref] ?? definitions[n.$ref.replace(/^#\/definitions\//, '')]
    return n ?? {}
  }

  function typeOf(schema) {
    const s = resolve(schema)
    if (s['x-orch-int-or-string']) return 'dyn'
    switch (s.type) {
      case 'integer':
        return 'int'
      case 'number':
        return 'double'
      case 'boolean':
        return 'bool'
      case 'string':
        if (s.format === 'byte') return 'bytes'
        if (s.format === 'date' || s.format === 'date-time' || s.format === 'datetime') return 'google.protobuf.Timestamp'
        if (s.format === 'duration') return 'google.protobuf.Duration'
        return 'string'
      case 'array':
        return `list<${s.items ? typeOf(s.items) : 'dyn'}>`
      case 'object':
        return objectType(s)
      default:
        return 'dyn'
    }
  }

  function objectType(s) {
    if (s.properties || s['x-orch-embedded-resource']) {
      const known = named.get(s)
      if (known) return known.name
      const name = `${prefix}${seq++}`
      const Ctor = { [name]: class extends CelObject {} }[name]
      const entry = { name, Ctor }
      named.set(s, entry)
      const fields = {}
      const props = { ...embeddedProps(s), ...(s.properties ?? {}) }
      for (const [k, v] of Object.entries(props)) {
        const f = escapeName(k)
        if (f) fields[f] = typeOf(v)
      }
      env.registerType(name, { ctor: Ctor, fields })
      // CEL equality of two objects of this type (`self == oldSelf`), field by field
      env.registerOperator(`${name} == ${name}`, (x, y) => deepEqual(x, y))
      return name
    }
    if (s.additionalProperties && typeof s.additionalProperties === 'object') return `map<string, ${typeOf(s.additionalProperties)}>`
    if (s['x-orch-preserve-unknown-fields']) return 'dyn'
    return 'map<string, dyn>'
  }

  function embeddedProps(s) {
    if (!s['x-orch-embedded-resource']) return {}
    return { apiVersion: { type: 'string' }, kind: { type: 'string' }, metadata: { type: 'object', properties: { name: { type: 'string' }, generateName: { type: 'string' } } } }
  }

  // One converter function per schema node, built once: the per-object work is then a table lookup per
  // property (no schema resolution, name escaping or property merging per value).
  const converters = new WeakMap()

  function convert(schema, v) {
    return converterFor(schema)(v)
  }

  function converterFor(schema) {
    let c = converters.get(schema)
    if (c) return c
    let impl
    c = (v) => (v === null || v === undefined ? null : impl(v))
    converters.set(schema, c) // set before building: recursive $ref schemas reach themselves
    impl = buildConverter(resolve(schema))
    return c
  }

  function buildConverter(s) {
    if (s['x-orch-int-or-string']) return (v) => (typeof v === 'number' && Number.isInteger(v) ? BigInt(v) : v)
    switch (s.type) {
      case 'integer':
        return (v) => (typeof v === 'number' ? BigInt(Math.trunc(v)) : v)
      case 'number':
      case 'boolean':
        return (v) => v
      case 'string':
        return stringConverter(s)
      case 'array': {
        const item = converterFor(s.items ?? {})
        const lt = s['x-orch-list-type']
        const keys = lt === 'map' ? (s['x-orch-list-map-keys'] ?? []).map((k) => escapeName(k) ?? k) : undefined
        return (v) => {
          if (!Array.isArray(v)) return v
          const out = new Array(v.length)
          for (let i = 0; i < v.length; i++) out[i] = item(v[i])
          return lt === 'set' || lt === 'map' ? markList(out, lt, keys) : out
        }
      }
      case 'object':
        return objectConverter(s)
      default:
        return dynFromJson
    }
  }

  function stringConverter(s) {
    if (s.format === 'byte') return (v) => (typeof v === 'string' ? fromBase64(v) : v)
    if (s.format === 'date' || s.format === 'date-time' || s.format === 'datetime') {
      return (v) => {
        if (typeof v !== 'string') return v
        const d = new Date(v)
        return Number.isNaN(d.getTime()) ? v : d
      }
    }
    if (s.format === 'duration') return (v) => (typeof v === 'string' ? parseGoDuration(v) ?? v : v)
    return (v) => v
  }

  function objectConverter(s) {
    const entry = named.get(s) ?? (typeOf(s), named.get(s))
    if (entry) {
      const table = new Map()
      for (const [k, p] of Object.entries({ ...embeddedProps(s), ...(s.properties ?? {}) })) {
        const f = escapeName(k)
        if (f) table.set(k, [f, converterFor(p)])
      }
      const Ctor = entry.Ctor
      return (v) => {
        if (typeof v !== 'object' || Array.isArray(v)) return v
        const o = new Ctor()
        for (const k of Object.keys(v)) {
          const t = table.get(k)
          if (t && v[k] !== null) o[t[0]] = t[1](v[k])
        }
        return o
      }
    }
    const inner = s.additionalProperties && typeof s.additionalProperties === 'object' ? converterFor(s.additionalProperties) : dynFromJson
    return (v) => {
      if (typeof v !== 'object' || Array.isArray(v)) return v
      const o = {}
      for (const k of Object.keys(v)) o[k] = inner(v[k])
      return o
    }
  }

  /**
   * CEL field name -> JSON property name of an object schema that converts to an object type (what a host may
   * project an object onto), or undefined for other schemas (maps, dyn, scalars).
   */
  function fieldNames(schema) {
    const s = resolve(schema)
    if (s['x-orch-int-or-string'] || s.type !== 'object' || !(s.properties || s['x-orch-embedded-resource'])) return undefined
    const out = new Map()
    for (const k of Object.keys({ ...embeddedProps(s), ...(s.properties ?? {}) })) {
      const f = escapeName(k)
      if (f) out.set(f, k)
    }
    return out
  }

  /** Size bounds: strings in characters, lists in items, maps in entries; `elem`/`fields` for children. */
  function shape(schema) {
    const s = resolve(schema)
    const known = shapes.get(s)
    if (known) return known
    const out = { min: 0, max: 0 }
    shapes.set(s, out)
    if (s.type === 'string' && !s['x-orch-int-or-string']) {
      out.min = s.minLength ?? 0
      out.max = s.maxLength ?? (s.format === 'byte' ? Math.floor(((MAX_REQUEST - 2) * 3) / 4) : MAX_REQUEST - 2)
    } else if (s.type === 'array') {
      out.min = s.minItems ?? 0
      out.max = s.maxItems ?? Math.floor((MAX_REQUEST - 2) / (minSerializedSize(resolve(s.items ?? {})) + 1))
      out.elem = shape(s.items ?? {})
    } else if (s.type === 'object') {
      out.min = s.minProperties ?? 0
      out.fields = {}
      for (const [k, v] of Object.entries(s.properties ?? {})) {
        const f = escapeName(k)
        if (f) out.fields[f] = shape(v)
      }
      if (s.additionalProperties && typeof s.additionalProperties === 'object') {
        out.elem = shape(s.additionalProperties)
        out.max = s.maxProperties ?? Math.floor((MAX_REQUEST - 2) / (minSerializedSize(resolve(s.additionalProperties)) + 4))
      } else out.max = s.maxProperties ?? Object.keys(s.properties ?? {}).length
    } else {
      out.min = 1
      out.max = 1
    }
    return out
  }

  return { typeOf, convert, converterFor, shape, fieldNames }
}

/** Plain JSON under a dyn type: integral numbers become int, as Kubernetes' unstructured values do. */
export function dynFromJson(v) {
  if (typeof v === 'number') return Number.isInteger(v) ? BigInt(v) : v
  if (Array.isArray(v)) return v.map(dynFromJson)
  if (v && typeof v === 'object') {
    const o = {}
    for (const k of Object.keys(v)) if (v[k] !== null) o[k] = dynFromJson(v[k])
    return o
  }
  return v
}

const UNITS = { ns: 1n, us: 1000n, 'µs': 1000n, ms: 1000000n, s: 1000000000n, m: 60000000000n, h: 3600000000000n }

/** Go's time.ParseDuration ("1h2m3.5s"), the format Kubernetes uses for `format: duration`. */
export function parseGoDuration(str) {
  let s = str
  let neg = false
  if (s[0] === '-' || s[0] === '+') {
    neg = s[0] === '-'
    s = s.slice(1)
  }
  if (s === '0') return new Duration(0n, 0)
  if (!s) return undefined
  let total = 0n
  const re = /(\d*)(?:\.(\d*))?(ns|us|µs|ms|s|m|h)/y
  let pos = 0
  while (pos < s.length) {
    re.lastIndex = pos
    const m = re.exec(s)
    if (!m || (!m[1] && !m[2])) return undefined
    const unit = UNITS[m[3]]
    const frac = m[2] ?? ''
    total += BigInt(m[1] || '0') * unit + (frac ? (BigInt(frac) * unit) / 10n ** BigInt(frac.length) : 0n)
    pos = re.lastIndex
  }
  if (neg) total = -total
  return new Duration(total / 1000000000n, Number(total % 1000000000n))
}
