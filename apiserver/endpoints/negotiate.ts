// Content negotiation: which media type a response is written in, and which body types a request may carry.

import { notAcceptable, unsupportedMediaType, type StatusError } from '../errors/status-error.js'
import type { Messages } from './protobuf/messages.js'

export interface MediaRange {
  type: string
  subtype: string
  params: Record<string, string>
  q: number
}

/** What the response will be written as. `tableGroup` is the meta group the client asked for (meta.k8s.io or meta.orch.io). */
export type ResponseMedia =
  | { form: 'json' }
  | { form: 'yaml' }
  | { form: 'table'; tableGroup: string; includeObject?: IncludeObject }
  | { form: 'metadata'; metaGroup: string }
  /** `contentType` is the name the client asked for: Kubernetes' or orch's. */
  | { form: 'protobuf'; messages: Messages; contentType: string }

/** What a Table row carries of its object (`?includeObject=`): nothing, its metadata (the default), or all of it. */
export type IncludeObject = 'None' | 'Metadata' | 'Object'

export const SERVED_MEDIA_TYPES = ['application/json', 'application/yaml', 'application/json;as=Table;v=v1;g=meta.k8s.io']
/** What a built-in kind with a protobuf message serves. */
export const SERVED_MEDIA_TYPES_PROTOBUF = [...SERVED_MEDIA_TYPES, 'application/vnd.kubernetes.protobuf']
export const BODY_MEDIA_TYPES = ['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf']
/** What custom resources take: no protobuf (they have no messages), as in Kubernetes. */
export const CUSTOM_BODY_MEDIA_TYPES = ['application/json', 'application/yaml']
/** Protobuf request bodies, under Kubernetes' name and orch's own. */
export const PROTOBUF_SUBTYPES = new Set(['vnd.kubernetes.protobuf', 'vnd.orch.protobuf'])
export const META_GROUPS = ['meta.k8s.io', 'meta.orch.io']

/** Parses an Accept header into ranges ordered by q (stable for equal q). Malformed entries are skipped. */
export function parseAccept (header: string | undefined): MediaRange[] {
  if (header === undefined || header.trim() === '') return [{ type: '*', subtype: '*', params: {}, q: 1 }]
  const out: MediaRange[] = []
  for (const part of splitOutsideQuotes(header, ',')) {
    const r = parseMediaType(part)
    if (r !== undefined) out.push(r)
  }
  return out
    .map((r, i) => ({ r, i }))
    .sort((a, b) => b.r.q - a.r.q || a.i - b.i)
    .map(x => x.r)
    .filter(r => r.q > 0)
}

/** Splits at `sep` (one ASCII character) where it is not inside double quotes; most headers have no quotes at all. */
export function splitOutsideQuotes (s: string, sep: string): string[] {
  if (!s.includes('"')) return s.split(sep)
  const out: string[] = []
  let cur = ''
  let quoted = false
  for (const ch of s) {
    if (ch === '"') quoted = !quoted
    if (ch === sep && !quoted) { out.push(cur); cur = '' } else cur += ch
  }
  out.push(cur)
  return out
}

/** Parses one media type such as `application/json;as=Table;v=v1;q=0.9`; type and param names lowercased. */
export function parseMediaType (text: string): MediaRange | undefined {
  const [head, ...rawParams] = splitOutsideQuotes(text, ';').map(s => s.trim())
  const slash = head.indexOf('/')
  if (slash <= 0 || slash === head.length - 1) return undefined
  const params: Record<string, string> = {}
  let q = 1
  for (const p of rawParams) {
    const eq = p.indexOf('=')
    if (eq <= 0) continue
    const key = p.slice(0, eq).trim().toLowerCase()
    const value = p.slice(eq + 1).trim().replace(/^"(.*)"$/, '$1')
    if (key === 'q') {
      const n = Number(value)
      q = Number.isFinite(n) ? Math.min(Math.max(n, 0), 1) : 1
    } else params[key] = value
  }
  return { type: head.slice(0, slash).toLowerCase(), subtype: head.slice(slash + 1).toLowerCase(), params, q }
}

function isJsonLike (r: MediaRange): boolean {
  return (r.type === 'application' || r.type === '*') && (r.subtype === 'json' || r.subtype === '*')
}

/**
 * Picks the first acceptable form for a resource response. `allowTable` is false for writes (Table is a read view);
 * `protobuf` is given for kinds with a protobuf message (built-ins; custom resources get 406 for protobuf alone); as a
 * function it is asked only when the answer matters (a protobuf range, or a 406), so JSON requests never consult the
 * message table.
 */
export function negotiateResponse (accept: string | undefined, opts: { allowTable: boolean; protobuf?: Messages | (() => Messages | undefined) }): ResponseMedia | StatusError {
  const protobuf = (): Messages | undefined => typeof opts.protobuf === 'function' ? opts.protobuf() : opts.protobuf
  for (const r of parseAccept(accept)) {
    if (r.type === 'application' && PROTOBUF_SUBTYPES.has(r.subtype) && r.params.as === undefined) {
      const messages = protobuf()
      if (messages !== undefined) return { form: 'protobuf', messages, contentType: `application/${r.subtype}` }
      continue
    }
    const as = r.params.as
    if (as !== undefined) {
      if (r.type !== 'application' || r.subtype !== 'json') continue
      const g = r.params.g ?? ''
      const v = r.params.v ?? ''
      if (!META_GROUPS.includes(g) || v !== 'v1') continue
      if (as === 'Table' && opts.allowTable) return { form: 'table', tableGroup: g }
      if (as === 'PartialObjectMetadata' && opts.allowTable) return { form: 'metadata', metaGroup: g }
      continue
    }
    if (r.type === 'application' && r.subtype === 'yaml') return { form: 'yaml' }
    if (isJsonLike(r)) return { form: 'json' }
  }
  return notAcceptable(protobuf() === undefined ? SERVED_MEDIA_TYPES : SERVED_MEDIA_TYPES_PROTOBUF)
}

/** For non-resource JSON documents (discovery, OpenAPI, version): JSON or 406. */
export function acceptsJson (accept: string | undefined): boolean {
  return parseAccept(accept).some(r => r.params.as === undefined && isJsonLike(r))
}

export type BodyFormat = 'json' | 'yaml' | 'protobuf'

/** The body format of a POST/PUT; a missing Content-Type is read as JSON, as Kubernetes does. */
export function bodyFormat (contentType: string | undefined): BodyFormat | StatusError {
  if (contentType === undefined || contentType.trim() === '') return 'json'
  const m = parseMediaType(contentType)
  if (m !== undefined && m.type === 'application') {
    if (m.subtype === 'json') return 'json'
    if (m.subtype === 'yaml') return 'yaml'
    if (PROTOBUF_SUBTYPES.has(m.subtype)) return 'protobuf'
  }
  return unsupportedMediaType(contentType, BODY_MEDIA_TYPES)
}

export const PATCH_MEDIA_TYPES = [
  'application/json-patch+json', 'application/merge-patch+json',
  'application/strategic-merge-patch+json', 'application/apply-patch+yaml'
]
