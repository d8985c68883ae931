// Decoding Kubernetes protobuf bodies (`application/vnd.kubernetes.protobuf`) into the JSON objects the registry
// takes: the `k8s\0` envelope, the wire format by the field table, and the JSON forms of Kubernetes' special types.

import protobuf from 'protobufjs/minimal.js'
import { ENVELOPE_PREFIX, META, Messages, UNKNOWN, messageName, type FieldInfo, type SpecialForm } from './messages.js'

export class ProtobufDecodeError extends Error {
  readonly code = 'PROTOBUF_ERR_DECODE'
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json }

/** The object inside an envelope, with apiVersion and kind from its TypeMeta. */
export function decodeEnvelope (bytes: Uint8Array, messages: Messages): Record<string, Json> {
  if (bytes.length < 4 || !ENVELOPE_PREFIX.equals(Buffer.from(bytes.subarray(0, 4)))) {
    throw new ProtobufDecodeError('provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]')
  }
  const unknown = decodeMessage(bytes.subarray(4), UNKNOWN, messages, true) as Record<string, Json>
  const typeMeta = (unknown.typeMeta ?? {}) as { apiVersion?: string, kind?: string }
  const apiVersion = typeMeta.apiVersion ?? ''
  const kind = typeMeta.kind ?? ''
  if (unknown.contentEncoding !== undefined && unknown.contentEncoding !== '') throw new ProtobufDecodeError(`unsupported content encoding ${String(unknown.contentEncoding)}`)
  const name = messageName(apiVersion, kind)
  if (name === undefined) throw new ProtobufDecodeError(`no protobuf message for ${apiVersion}, Kind=${kind}`)
  const raw = unknown.raw as unknown as Uint8Array | undefined
  const object = raw === undefined ? {} : decodeMessage(raw, name, messages) as Record<string, Json>
  // A list's items carry no TypeMeta on the wire; give them the list's, as the JSON form has it.
  if (kind.endsWith('List') && Array.isArray(object.items)) {
    const itemKind = kind.slice(0, -'List'.length)
    object.items = object.items.map(i => (i !== null && typeof i === 'object' && !Array.isArray(i) ? { apiVersion, kind: itemKind, ...i } : i))
  }
  return { apiVersion, kind, ...object }
}

/** One message as JSON. `keepBytes` leaves bytes fields as bytes (the envelope's raw). */
export function decodeMessage (bytes: Uint8Array, name: string, messages: Messages, keepBytes = false): Json {
  const info = messages.get(name)
  if (info === undefined) throw new ProtobufDecodeError(`unknown message ${name}`)
  const r = protobuf.Reader.create(bytes)
  const out: Record<string, unknown> = {}
  try {
    while (r.pos < r.len) {
      const tag = r.uint32()
      const entry = info.byId.get(tag >>> 3)
      if (entry === undefined) { r.skipType(tag & 7); continue }
      const [field, spec] = entry
      if (info.inline.has(field)) { Object.assign(out, decodeMessage(r.bytes(), spec.type, messages)); continue }
      if (spec.keyType !== undefined) {
        const [k, v] = mapEntry(r.bytes(), spec, messages)
        const map = (out[field] ??= {}) as Record<string, unknown>
        map[k] = v
      } else if (spec.repeated === true) {
        const list = (out[field] ??= []) as unknown[]
        if ((tag & 7) === 2 && isNumeric(spec.type)) {
          const end = r.uint32() + r.pos
          while (r.pos < end) list.push(scalar(r, spec.type))
        } else list.push(value(r, spec, messages, keepBytes))
      } else {
        // Empty strings and zero times are dropped, as JSON's omitempty does.
        const v = value(r, spec, messages, keepBytes)
        if (v !== '' && v !== null) out[field] = v
        else delete out[field]
      }
    }
  } catch (err) {
    if (err instanceof ProtobufDecodeError) throw err
    throw new ProtobufDecodeError(`cannot decode ${name}: ${(err as Error).message}`)
  }
  return info.special === undefined ? plain(name, out) : special(info.special, out)
}

function value (r: protobuf.Reader, spec: FieldInfo, messages: Messages, keepBytes: boolean): unknown {
  if (spec.type === 'bytes') {
    const b = r.bytes()
    return keepBytes ? b : Buffer.from(b).toString('base64')
  }
  if (isScalar(spec.type)) return scalar(r, spec.type)
  return decodeMessage(r.bytes(), spec.type, messages)
}

function mapEntry (bytes: Uint8Array, spec: FieldInfo, messages: Messages): [string, unknown] {
  const r = protobuf.Reader.create(bytes)
  let key = ''
  let val: unknown = spec.type === 'string' ? '' : spec.type === 'bytes' ? '' : undefined
  while (r.pos < r.len) {
    const tag = r.uint32()
    if (tag >>> 3 === 1) key = String(scalar(r, spec.keyType ?? 'string'))
    else if (tag >>> 3 === 2) val = value(r, { id: 2, type: spec.type }, messages, false)
    else r.skipType(tag & 7)
  }
  return [key, val ?? {}]
}

const SCALARS = new Set(['string', 'bool', 'int32', 'int64', 'bytes'])
const isScalar = (t: string): boolean => SCALARS.has(t)
const isNumeric = (t: string): boolean => t === 'int32' || t === 'int64' || t === 'bool'

function scalar (r: protobuf.Reader, type: string): string | number | boolean {
  switch (type) {
    case 'string': return r.string()
    case 'bool': return r.bool()
    case 'int32': return r.int32()
    case 'int64': {
      const v = r.int64() as unknown as number | { toNumber(): number }
      return typeof v === 'number' ? v : v.toNumber()
    }
    default: throw new ProtobufDecodeError(`unsupported scalar ${type}`)
  }
}

/** Kubernetes' types whose JSON form is not their message's fields. */
function special (form: SpecialForm, m: Record<string, unknown>): Json {
  switch (form) {
    case 'time': return timeString(m, false)
    case 'microtime': return timeString(m, true)
    case 'duration': return goDuration(Number(m.duration ?? 0))
    case 'quantity': return String(m.string ?? '')
    case 'intorstring': return Number(m.type ?? 0) === 1 ? String(m.strVal ?? '') : Number(m.intVal ?? 0)
    case 'rawjson': {
      const raw = (m.raw ?? m.Raw) as string | undefined
      return raw === undefined || raw === '' ? null : JSON.parse(Buffer.from(raw, 'base64').toString('utf8')) as Json
    }
    case 'strings': return (m.items ?? []) as Json
  }
}

function plain (name: string, m: Record<string, unknown>): Json {
  // A template's ObjectMeta carries generation 0 on the wire; it is the server's to set, and JSON never has it.
  if (m.generation === 0 && name === `${META}.ObjectMeta`) delete m.generation
  return m as Json
}

function timeString (m: Record<string, unknown>, micro: boolean): Json {
  const seconds = Number(m.seconds ?? 0)
  const nanos = Number(m.nanos ?? 0)
  if (seconds === 0 && nanos === 0) return null
  const iso = new Date(seconds * 1000).toISOString().slice(0, 19)
  return micro ? `${iso}.${String(Math.floor(nanos / 1000)).padStart(6, '0')}Z` : `${iso}Z`
}

/** A duration in nanoseconds as Go prints it (`1h0m0s`, `1.5s`, `300ms`). */
export function goDuration (ns: number): string {
  if (ns === 0) return '0s'
  const sign = ns < 0 ? '-' : ''
  let rest = Math.abs(ns)
  if (rest < 1e9) {
    if (rest < 1e3) return `${sign}${rest}ns`
    if (rest < 1e6) return `${sign}${rest / 1e3}µs`
    return `${sign}${rest / 1e6}ms`
  }
  const h = Math.floor(rest / 3.6e12)
  rest -= h * 3.6e12
  const min = Math.floor(rest / 6e10)
  rest -= min * 6e10
  const s = rest / 1e9
  if (h > 0) return `${sign}${h}h${min}m${s}s`
  if (min > 0) return `${sign}${min}m${s}s`
  return `${sign}${s}s`
}
