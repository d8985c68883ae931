// Encoding JSON objects as Kubernetes protobuf (`application/vnd.kubernetes.protobuf`): any message of the v1.29
// field table, the `k8s\0` envelope, and watch events as length-prefixed frames, as kube-apiserver writes them.

import protobuf from 'protobufjs/minimal.js'
import { ENVELOPE_PREFIX, Messages, messageName, specialForm, type FieldInfo, type SpecialForm } from './messages.js'

export class ProtobufEncodeError extends Error {
  readonly code = 'PROTOBUF_ERR_ENCODE'
}

/** Kubernetes' name of the media type (error Statuses use it); a response otherwise says the name the client asked for. */
export const PROTOBUF_CONTENT_TYPE = 'application/vnd.kubernetes.protobuf'

type W = protobuf.Writer

/** `k8s\0` + Unknown{typeMeta, raw, contentEncoding, contentType}, the object's message in raw. */
export function encodeEnvelope (object: Record<string, unknown>, messages: Messages): Buffer {
  const apiVersion = typeof object.apiVersion === 'string' ? object.apiVersion : ''
  const kind = typeof object.kind === 'string' ? object.kind : ''
  const name = messageName(apiVersion, kind)
  if (name === undefined) throw new ProtobufEncodeError(`no protobuf message for ${apiVersion}, Kind=${kind}`)
  const w = protobuf.Writer.create()
  w.uint32((1 << 3) | 2).fork()
  w.uint32((1 << 3) | 2).string(apiVersion).uint32((2 << 3) | 2).string(kind)
  w.ldelim()
  w.uint32((2 << 3) | 2).fork()
  writeMessage(w, object, name, messages)
  w.ldelim()
  // Kubernetes writes the two empty strings too (non-pointer fields); clients read either way.
  w.uint32((3 << 3) | 2).string('').uint32((4 << 3) | 2).string('')
  return Buffer.concat([ENVELOPE_PREFIX, w.finish()])
}

/** One message's bytes (no envelope). */
export function encodeMessage (value: Record<string, unknown>, name: string, messages: Messages): Uint8Array {
  const w = protobuf.Writer.create()
  writeMessage(w, value, name, messages)
  return w.finish()
}

/**
 * A watch event as kube-apiserver frames it: 4-byte big-endian length, then a metav1.WatchEvent
 * {type (1), object (2): RawExtension{raw (1): the object's envelope}}.
 */
export function encodeWatchFrame (type: string, envelope: Uint8Array): Buffer {
  const w = protobuf.Writer.create()
  w.uint32((1 << 3) | 2).string(type)
  w.uint32((2 << 3) | 2).fork().uint32((1 << 3) | 2).bytes(envelope).ldelim()
  const event = w.finish()
  const frame = Buffer.allocUnsafe(4 + event.length)
  frame.writeUInt32BE(event.length, 0)
  frame.set(event, 4)
  return frame
}

/** Fields of `value` by the message's table; JSON members the message has no field for are not carried. */
function writeMessage (w: W, value: Record<string, unknown>, name: string, messages: Messages): void {
  const info = messages.get(name)
  if (info === undefined) throw new ProtobufEncodeError(`unknown message ${name}`)
  if (info.special !== undefined) { writeSpecial(w, value, info.special); return }
  if (info.inline.size === 0) {
    // Only what the object has: most messages are sparse (a PodSpec has ~40 fields, an object sets a few).
    for (const field in value) {
      const v = value[field]
      if (v === undefined || v === null) continue
      const spec = info.byName.get(field)
      if (spec !== undefined) writeField(w, spec, v, messages)
    }
    return
  }
  for (const [field, spec] of info.byName) {
    if (info.inline.has(field)) {
      w.uint32((spec.id << 3) | 2).fork()
      writeMessage(w, value, spec.type, messages)
      w.ldelim()
      continue
    }
    const v = value[field]
    if (v === undefined || v === null) continue
    writeField(w, spec, v, messages)
  }
}

function writeField (w: W, spec: FieldInfo, v: unknown, messages: Messages): void {
  if (spec.keyType !== undefined) {
    if (typeof v !== 'object' || v === null) return
    for (const [k, item] of Object.entries(v as Record<string, unknown>)) {
      w.uint32((spec.id << 3) | 2).fork()
      writeScalar(w, 1, spec.keyType, spec.keyType === 'string' ? k : Number(k))
      if (item !== null && item !== undefined) writeValue(w, 2, spec.type, item, messages, true)
      w.ldelim()
    }
    return
  }
  if (spec.repeated === true) {
    if (!Array.isArray(v)) return
    for (const item of v) if (item !== null && item !== undefined) writeValue(w, spec.id, spec.type, item, messages, true)
    return
  }
  writeValue(w, spec.id, spec.type, v, messages, false)
}

const SCALARS = new Set(['string', 'bool', 'int32', 'int64', 'bytes'])

function writeValue (w: W, id: number, type: string, v: unknown, messages: Messages, keepEmpty: boolean): void {
  if (SCALARS.has(type)) {
    // An empty string is what the decoder reads as absent: do not send it, except inside lists and maps.
    if (v === '' && !keepEmpty) return
    writeScalar(w, id, type, v)
    return
  }
  w.uint32((id << 3) | 2).fork()
  writeMessage(w, (typeof v === 'object' && v !== null ? v : { [SPECIAL_VALUE]: v }) as Record<string, unknown>, type, messages)
  w.ldelim()
}

function writeScalar (w: W, id: number, type: string, v: unknown): void {
  switch (type) {
    case 'string': w.uint32((id << 3) | 2).string(typeof v === 'string' ? v : JSON.stringify(v)); return
    case 'bytes': w.uint32((id << 3) | 2).bytes(Buffer.from(String(v), 'base64')); return
    case 'bool': w.uint32(id << 3).bool(v === true); return
    case 'int32': w.uint32(id << 3).int32(Number(v)); return
    case 'int64': w.uint32(id << 3).int64(Number(v)); return
  }
}

/** Where a JSON scalar standing for a message (a time, a quantity, an int-or-string) is passed to writeSpecial. */
const SPECIAL_VALUE = '\u0000value'

/** Kubernetes' types whose JSON form is not their fields. */
function writeSpecial (w: W, holder: Record<string, unknown>, form: SpecialForm): void {
  const v = SPECIAL_VALUE in holder ? holder[SPECIAL_VALUE] : holder
  switch (form) {
    case 'time':
    case 'microtime': {
      const text = String(v)
      const ms = Date.parse(text)
      if (Number.isNaN(ms)) throw new ProtobufEncodeError(`invalid time ${text}`)
      const frac = /\.(\d+)Z?$/.exec(text)?.[1] ?? ''
      const nanos = frac === '' ? 0 : Number(frac.padEnd(9, '0').slice(0, 9))
      w.uint32(1 << 3).int64(Math.floor(ms / 1000))
      if (nanos !== 0) w.uint32(2 << 3).int32(nanos)
      return
    }
    case 'duration': w.uint32(1 << 3).int64(parseGoDuration(String(v))); return
    case 'quantity': w.uint32((1 << 3) | 2).string(String(v)); return
    case 'intorstring':
      if (typeof v === 'number') w.uint32(1 << 3).int64(0).uint32(2 << 3).int32(v)
      else w.uint32(1 << 3).int64(1).uint32((3 << 3) | 2).string(String(v))
      return
    case 'rawjson': w.uint32((1 << 3) | 2).bytes(Buffer.from(JSON.stringify(v))); return
    case 'strings': if (Array.isArray(v)) for (const s of v) w.uint32((1 << 3) | 2).string(String(s))
  }
}

/** Messages whose JSON form is a bare list of strings (`extra` values of a user, an APIResource's verbs). */
export function isStringList (name: string): boolean {
  return specialForm(name) === 'strings'
}

/** Go's time.ParseDuration for what Go prints (`1h2m3.5s`, `300ms`, `-1.5µs`), in nanoseconds. */
export function parseGoDuration (text: string): number {
  const units: Record<string, number> = { ns: 1, us: 1e3, µs: 1e3, μs: 1e3, ms: 1e6, s: 1e9, m: 6e10, h: 3.6e12 }
  const m = /^([-+]?)((?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+$/.exec(text)
  if (m === null) {
    if (text === '0') return 0
    throw new ProtobufEncodeError(`time: invalid duration "${text}"`)
  }
  let total = 0
  for (const part of text.matchAll(/(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/g)) total += Number(part[1]) * units[part[2]]
  return Math.round(m[1] === '-' ? -total : total)
}

/** True when a kind at an apiVersion has a protobuf message (built-in kinds of the v1.29 table). */
export function hasProtobufMessage (apiVersion: string, kind: string): boolean {
  return messageName(apiVersion, kind) !== undefined
}
