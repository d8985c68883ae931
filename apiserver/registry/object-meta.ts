// Object metadata rules shared by every kind: server-set fields, canonical field order, the encoder writing resourceVersion.

import { randomInt } from 'node:crypto'
import { encoderWithSource, type Encoder } from '../storage/store.js'
import { jsonEqual, type Json } from './patch/json-pointer.js'

export type Obj = Record<string, unknown>
export interface Meta {
  name?: string
  generateName?: string
  namespace?: string
  uid?: string
  resourceVersion?: string
  generation?: number
  creationTimestamp?: string | null
  deletionTimestamp?: string | null
  deletionGracePeriodSeconds?: number
  labels?: Record<string, string>
  annotations?: Record<string, string>
  ownerReferences?: unknown[]
  finalizers?: string[]
  managedFields?: unknown[]
  [k: string]: unknown
}

/** Whether a kind's objects carry metadata.generation (Kubernetes: kinds with a spec/status split, CRDs, custom resources). */
export function tracksGeneration (def: { tracksGeneration?: boolean; custom?: unknown }): boolean {
  return def.tracksGeneration === true || def.custom !== undefined
}

export function metaOf (obj: Obj): Meta {
  let m = obj.metadata
  if (m === null || typeof m !== 'object' || Array.isArray(m)) { m = {}; obj.metadata = m }
  return m as Meta
}

let lastSecond = NaN
let lastStamp = ''

/**
 * RFC 3339 in UTC with seconds precision, as Kubernetes serializes metav1.Time. Every write stamps the current time,
 * so the string of the last second asked for is kept (NaN never matches, so a bad time still throws).
 */
export function rfc3339 (ms: number): string {
  const second = Math.floor(ms / 1000)
  if (second !== lastSecond) {
    lastStamp = new Date(second * 1000).toISOString().replace('.000Z', 'Z')
    lastSecond = second
  }
  return lastStamp
}

const ALPHABET = 'bcdfghjklmnpqrstvwxz2456789'

/** Kubernetes' generateName suffix: 5 random characters from its consonant/digit alphabet. */
export function randomSuffix (random: (n: number) => number = randomInt): string {
  let s = ''
  for (let i = 0; i < 5; i++) s += ALPHABET[random(ALPHABET.length)]
  return s
}

/** Name from generateName, truncating the base as Kubernetes does (max 63 - 5 characters of base). */
export function generatedName (base: string, suffix: string): string {
  return (base.length > 58 ? base.slice(0, 58) : base) + suffix
}

const META_ORDER = ['name', 'generateName', 'namespace', 'selfLink', 'uid', 'resourceVersion', 'generation',
  'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'labels', 'annotations',
  'ownerReferences', 'finalizers', 'managedFields']

/**
 * The object with apiVersion, kind, metadata first and metadata fields in Kubernetes order; a fresh
 * top-level and metadata object (nested values are shared). resourceVersion always has a slot so the
 * stored bytes carry it right after uid.
 */
export function canonical (obj: Obj, apiVersion: string, kind: string): Obj {
  const src = metaOf(obj)
  const meta: Meta = {}
  for (const k of META_ORDER) {
    if (k === 'resourceVersion') { meta.resourceVersion = src.resourceVersion ?? ''; continue }
    if (src[k] !== undefined && src[k] !== null) meta[k] = src[k]
  }
  for (const k of Object.keys(src)) if (!(k in meta) && src[k] !== undefined && src[k] !== null) meta[k] = src[k]
  const out: Obj = { apiVersion, kind, metadata: meta }
  for (const k of Object.keys(obj)) if (!(k in out) && obj[k] !== undefined) out[k] = obj[k]
  return out
}

/** Encoder for the store: writes the commit revision into metadata.resourceVersion, serializes once. */
export function revisionEncoder (obj: Obj, onEncoded?: (bytes: Buffer) => void): Encoder {
  return encoderWithSource((revision) => {
    metaOf(obj).resourceVersion = String(revision)
    const bytes = Buffer.from(JSON.stringify(obj))
    onEncoded?.(bytes)
    return bytes
  }, obj)
}

const RV_FIELD = Buffer.from('"resourceVersion":"')

/**
 * The same object bytes with metadata.resourceVersion replaced (delete events carry the delete
 * revision). Relies on the canonical order (resourceVersion is the first such field); falls back to
 * parse/serialize otherwise.
 */
export function rewriteResourceVersion (bytes: Buffer, rv: string): Buffer {
  const metaAt = bytes.indexOf('"metadata":{')
  const at = bytes.indexOf(RV_FIELD)
  if (metaAt >= 0 && at > metaAt) {
    const start = at + RV_FIELD.length
    const end = bytes.indexOf(0x22, start)
    if (end > 0) return Buffer.concat([bytes.subarray(0, start), Buffer.from(rv), bytes.subarray(end)])
  }
  const obj = JSON.parse(bytes.toString('utf8')) as Obj
  metaOf(obj).resourceVersion = rv
  return Buffer.from(JSON.stringify(obj))
}

export function parseJson (bytes: Buffer): Obj {
  return JSON.parse(bytes.toString('utf8')) as Obj
}

/**
 * Whether two objects agree on everything but metadata (and status when excluded): a spec change bumps the
 * generation. Member order does not count, as Kubernetes compares decoded values.
 */
export function sameContent (a: Obj, b: Obj, withoutStatus: boolean): boolean {
  const skipped = (k: string): boolean => k === 'metadata' || k === 'apiVersion' || k === 'kind' || (withoutStatus && k === 'status')
  const keys = Object.keys(a).filter(k => !skipped(k))
  if (keys.length !== Object.keys(b).filter(k => !skipped(k)).length) return false
  return keys.every(k => Object.prototype.hasOwnProperty.call(b, k) && jsonEqual(a[k] as Json, b[k] as Json))
}
