// Response bodies: served bytes written as they are for JSON, lists assembled around item bytes, YAML/Table/pretty forms, gzip.

import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Transform, Writable } from 'node:stream'
import { pipeline } from 'node:stream'
import { createGzip } from 'node:zlib'
import { stringify as yamlStringify } from 'yaml'
import type { StatusError } from '../errors/status-error.js'
import type { ListResult } from '../registry/types.js'
import type { ResourceDefinition } from '../schema/types.js'
import { apiVersionOf } from './decode.js'
import type { ResponseMedia } from './negotiate.js'
import { buildTable, partialObjectMetadata, type TableConvertor } from './table.js'
import { PROTOBUF_CONTENT_TYPE, encodeEnvelope } from './protobuf/encode.js'
import { requestNotes } from './request-context.js'

/** Bodies above this size are gzipped when the client accepts it (Kubernetes' APIResponseCompression threshold). */
export const GZIP_MIN_BYTES = 128 * 1024

export interface EncodedBody { contentType: string; body: Buffer }

/**
 * A body written in parts (a list's items as stored), never joined whole; `more` (a streamed list) yields the rest
 * as it is read, one buffer per chunk, and is asked for the next only once the client took the last.
 */
export interface ChunkedBody { contentType: string; parts: Buffer[], more?: AsyncIterable<Buffer> }

const JSON_TYPE = 'application/json'
const YAML_TYPE = 'application/yaml'

export function acceptsGzip (req: IncomingMessage): boolean {
  const h = req.headers['accept-encoding']
  if (typeof h !== 'string') return false
  return h.split(',').some(part => {
    const [name, ...params] = part.split(';').map(s => s.trim().toLowerCase())
    const q = params.find(p => p.startsWith('q='))
    return name === 'gzip' && (q === undefined || Number(q.slice(2)) > 0)
  })
}

/** JSON value to bytes in the negotiated text form (YAML or JSON, pretty or compact). */
export function encodeValue (value: unknown, form: 'json' | 'yaml', pretty: boolean): EncodedBody {
  if (form === 'yaml') return { contentType: YAML_TYPE, body: Buffer.from(yamlStringify(value, { aliasDuplicateObjects: false })) }
  return { contentType: JSON_TYPE, body: Buffer.from(pretty ? JSON.stringify(value, null, 2) + '\n' : JSON.stringify(value)) }
}

function tableTypeFor (group: string): string {
  return `application/json;as=Table;v=v1;g=${group}`
}

/** One object: for plain JSON the stored bytes go out untouched. */
export function encodeObject (bytes: Buffer, media: ResponseMedia, pretty: boolean, conv?: TableConvertor): EncodedBody {
  if (media.form === 'json' && !pretty) return { contentType: JSON_TYPE, body: bytes }
  const object = JSON.parse(bytes.toString('utf8')) as Record<string, unknown>
  if (media.form === 'protobuf') return { contentType: media.contentType, body: encodeEnvelope(object, media.messages) }
  if (media.form === 'table' && conv !== undefined) {
    const table = buildTable(conv, media.tableGroup, [object], {}, media.includeObject)
    return { contentType: tableTypeFor(media.tableGroup), body: encodeValue(table, 'json', pretty).body }
  }
  if (media.form === 'metadata') {
    const meta = partialObjectMetadata(media.metaGroup, (object.metadata ?? {}) as Record<string, unknown>)
    return { contentType: `application/json;as=PartialObjectMetadata;v=v1;g=${media.metaGroup}`, body: encodeValue(meta, 'json', pretty).body }
  }
  return encodeValue(object, media.form === 'yaml' ? 'yaml' : 'json', pretty)
}

function listMetadata (list: ListResult): Record<string, unknown> {
  // Spec §2.3: `continue` is present on list responses, the empty string at the end of a paged list.
  const m: Record<string, unknown> = { resourceVersion: list.resourceVersion, continue: list.continue }
  if (list.remainingItemCount !== undefined) m.remainingItemCount = list.remainingItemCount
  return m
}

/** A collection: `{"kind":"<Kind>List",...,"items":[` + item bytes + `]}`, items never re-serialized for JSON. */
export function encodeList (def: ResourceDefinition, list: ListResult, media: ResponseMedia, pretty: boolean, conv?: TableConvertor): EncodedBody | ChunkedBody {
  if (media.form === 'json' && !pretty) {
    const head = JSON.stringify({ kind: def.listKind, apiVersion: apiVersionOf(def), metadata: listMetadata(list) })
    const parts: Buffer[] = [Buffer.from(head.slice(0, -1) + ',"items":[')]
    list.items.forEach((item, i) => {
      if (i > 0) parts.push(COMMA)
      parts.push(item)
    })
    if (list.joined !== undefined && list.joined.length > 0) {
      if (list.items.length > 0) parts.push(COMMA)
      parts.push(list.joined)
    }
    if (list.rest === undefined) {
      parts.push(CLOSE)
      return { contentType: JSON_TYPE, parts }
    }
    return { contentType: JSON_TYPE, parts, more: joinChunks(list.rest, parts.length > 1) }
  }
  const objects = list.items.map(b => JSON.parse(b.toString('utf8')) as Record<string, unknown>)
  if (media.form === 'protobuf') {
    const doc = { kind: def.listKind, apiVersion: apiVersionOf(def), metadata: listMetadata(list), items: objects }
    return { contentType: media.contentType, body: encodeEnvelope(doc, media.messages) }
  }
  if (media.form === 'table' && conv !== undefined) {
    const table = buildTable(conv, media.tableGroup, objects, listMetadata(list), media.includeObject)
    return { contentType: tableTypeFor(media.tableGroup), body: encodeValue(table, 'json', pretty).body }
  }
  if (media.form === 'metadata') {
    const items = objects.map(o => partialObjectMetadata(media.metaGroup, (o.metadata ?? {}) as Record<string, unknown>))
    const doc = { kind: 'PartialObjectMetadataList', apiVersion: `${media.metaGroup}/v1`, metadata: listMetadata(list), items }
    return { contentType: `application/json;as=PartialObjectMetadataList;v=v1;g=${media.metaGroup}`, body: encodeValue(doc, 'json', pretty).body }
  }
  const doc = { kind: def.listKind, apiVersion: apiVersionOf(def), metadata: listMetadata(list), items: objects }
  return encodeValue(doc, media.form === 'yaml' ? 'yaml' : 'json', pretty)
}

const COMMA = Buffer.from(',')
const CLOSE = Buffer.from(']}')

/** How a JSON list asks the registry for a stream: each chunk's items joined as the list's `items` array needs. */
export const LIST_STREAM = { separator: COMMA }

/** The streamed chunks of a list (each already joined by commas), a comma before each, then the list's close. */
async function * joinChunks (chunks: AsyncIterable<Buffer>, started: boolean): AsyncGenerator<Buffer> {
  for await (const chunk of chunks) {
    if (started) yield COMMA
    yield chunk
    started = true
  }
  yield CLOSE
}

/**
 * Parts are joined into writes of about this size: one write per stored item costs more than the copy, and gzip
 * does far better on large inputs than on many small ones.
 */
const WRITE_BYTES = 256 * 1024

/** Kubernetes' gzip level for responses (BestSpeed): a list compresses well at it, at a fraction of the CPU. */
const GZIP_LEVEL = 1

/**
 * Writes a complete response. Large bodies are gzipped when the request allows it, as a stream (never in one
 * blocking call); a chunked body is written part by part with backpressure, so a big list is not copied whole.
 */
export function send (req: IncomingMessage, res: ServerResponse, status: number, encoded: EncodedBody | ChunkedBody, headers: Record<string, string | string[]> = {}): void {
  if (res.headersSent || res.destroyed) return
  const parts = 'parts' in encoded ? encoded.parts : [encoded.body]
  const more = 'parts' in encoded ? encoded.more : undefined
  let length = 0
  for (const p of parts) length += p.length
  const out: Record<string, string | string[]> = { ...headers, 'Content-Type': encoded.contentType }
  // A streamed body is larger than its first chunk: its length is unknown (chunked transfer encoding).
  const gzip = (more !== undefined || length > GZIP_MIN_BYTES) && acceptsGzip(req)
  if (gzip) {
    out['Content-Encoding'] = 'gzip'
    out.Vary = 'Accept-Encoding'
  } else if (more === undefined) {
    out['Content-Length'] = String(length)
  }
  res.writeHead(status, out)
  if (req.method === 'HEAD') { res.end(); return }
  if (!gzip && parts.length === 1 && more === undefined) { res.end(parts[0]); return }
  const sink: Writable = gzip ? createGzip({ level: GZIP_LEVEL }) : res
  if (gzip) pipeline(sink as Transform, res, () => {})
  writeParts(sink, parts, more).then(() => sink.end(), () => res.destroy())
}

async function writeParts (sink: Writable, parts: Buffer[], more: AsyncIterable<Buffer> | undefined): Promise<void> {
  let i = 0
  while (i < parts.length) {
    if (sink.destroyed) return
    let end = i
    let size = 0
    while (end < parts.length && (end === i || size + parts[end].length <= WRITE_BYTES)) size += parts[end++].length
    const chunk = end === i + 1 ? parts[i] : Buffer.concat(parts.slice(i, end), size)
    for (; i < end; i++) parts[i] = EMPTY // taken: let them go
    if (!sink.write(chunk)) await drained(sink)
  }
  if (more === undefined) return
  for await (const chunk of more) {
    if (sink.destroyed) return // ends the iteration: no more reads for a client that left
    if (!sink.write(chunk)) await drained(sink)
  }
}

const EMPTY = Buffer.alloc(0)

/** Resolves when the sink can take more, or is gone (a client that left must not hold the rest of the body). */
function drained (sink: Writable): Promise<void> {
  return new Promise(resolve => {
    const done = (): void => { sink.off('drain', done); sink.off('close', done); resolve() }
    sink.once('drain', done)
    sink.once('close', done)
  })
}

/** Headers every error carries: Retry-After for 429/503/504 when the Status names a delay. */
export function errorHeaders (err: StatusError): Record<string, string> {
  const h: Record<string, string> = {}
  const retry = err.details?.retryAfterSeconds
  if (retry !== undefined && retry > 0) h['Retry-After'] = String(retry)
  else if (err.code === 429 || err.code === 504) h['Retry-After'] = '1'
  return h
}

/**
 * Writes a StatusError as a meta/v1 Status: JSON, YAML when that is what the client takes, protobuf when the
 * resource request negotiated it (requestNotes().protobufErrors).
 */
export function sendError (req: IncomingMessage, res: ServerResponse, err: StatusError, extra: Record<string, string | string[]> = {}, form: 'json' | 'yaml' = 'json'): void {
  const status = err.toStatus()
  const messages = requestNotes(req).protobufErrors
  const body = messages === undefined ? encodeValue(status, form, false) : { contentType: PROTOBUF_CONTENT_TYPE, body: encodeEnvelope(status as unknown as Record<string, unknown>, messages) }
  send(req, res, err.code, body, { ...extra, ...errorHeaders(err) })
}

/** `Warning: 299 - "text"` values for the registry's warnings (quotes and backslashes escaped). */
export function warningHeaders (warnings: string[]): Record<string, string[]> {
  if (warnings.length === 0) return {}
  return { Warning: warnings.map(w => `299 - "${w.replace(/[\\"]/g, m => '\\' + m).replace(/[\r\n]+/g, ' ')}"`) }
}
