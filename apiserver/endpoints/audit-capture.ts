// Copies of request and response bodies for audit events at Request/RequestResponse level, taken only when the policy asks.

import type { IncomingMessage, ServerResponse } from 'node:http'
import { gunzip } from 'node:zlib'
import { promisify } from 'node:util'
import { parse as parseYaml } from 'yaml'
import { decodeEnvelope } from './protobuf/decode.js'
import type { Messages } from './protobuf/messages.js'

const gunzipAsync = promisify(gunzip)

/** Bytes seen on one stream, up to a limit; past it the copy is dropped (the event then goes without the object). */
export class BodyCopy {
  private chunks: Buffer[] = []
  private size = 0
  overflow = false

  constructor (private readonly limit: number) {}

  add (chunk: unknown, encoding?: unknown): void {
    if (this.overflow || chunk === undefined || chunk === null || typeof chunk === 'function') return
    const b = typeof chunk === 'string' ? Buffer.from(chunk, typeof encoding === 'string' ? encoding as BufferEncoding : 'utf8') : Buffer.from(chunk as Uint8Array)
    this.size += b.length
    if (this.size > this.limit) { this.overflow = true; this.chunks = []; return }
    this.chunks.push(b)
  }

  bytes (): Buffer | undefined {
    return this.overflow ? undefined : Buffer.concat(this.chunks, this.size)
  }
}

/**
 * Copies the request body as the handler reads it. The body is read by whoever adds the first 'data' listener
 * (endpoints/decode.ts readBody); the copy's listener is added just before it, so the stream is never started
 * early and a request whose body is never read costs nothing.
 */
export function copyRequestBody (req: IncomingMessage, limit: number): BodyCopy {
  const copy = new BodyCopy(limit)
  const onData = (chunk: Buffer): void => copy.add(chunk)
  const hook = (event: string | symbol, listener: unknown): void => {
    if (event !== 'data' || listener === onData) return
    req.off('newListener', hook)
    req.on('data', onData)
  }
  req.on('newListener', hook)
  return copy
}

/** Copies what the handler writes to `res` (its own write/end, so nothing else changes for the response). */
export function copyResponseBody (res: ServerResponse, limit: number): BodyCopy {
  const copy = new BodyCopy(limit)
  const write = res.write
  const end = res.end
  res.write = function (this: ServerResponse, chunk: unknown, ...rest: unknown[]) {
    copy.add(chunk, rest[0])
    return (write as (...a: unknown[]) => boolean).call(this, chunk, ...rest)
  } as ServerResponse['write']
  res.end = function (this: ServerResponse, chunk?: unknown, ...rest: unknown[]) {
    copy.add(chunk, rest[0])
    return (end as (...a: unknown[]) => ServerResponse).call(this, chunk, ...rest)
  } as ServerResponse['end']
  return copy
}

/**
 * A copied body as an object: JSON and YAML media types (patch types included), Kubernetes protobuf when `messages`
 * is given; gzip undone. Undefined for other media and for bodies that do not parse: the event then goes without it.
 */
export async function decodeCopy (bytes: Buffer | undefined, contentType: unknown, contentEncoding?: unknown, messages?: Messages): Promise<unknown> {
  if (bytes === undefined || bytes.length === 0) return undefined
  const type = typeof contentType === 'string' ? contentType.toLowerCase() : ''
  try {
    const raw = contentEncoding === 'gzip' ? await gunzipAsync(bytes) : bytes
    if (type.includes('protobuf')) return messages === undefined ? undefined : decodeEnvelope(raw, messages)
    const text = raw.toString('utf8')
    if (type.includes('json') || (type === '' && text.trimStart().startsWith('{'))) return JSON.parse(text)
    if (type.includes('yaml')) return parseYaml(text)
  } catch {}
  return undefined
}
