// Request bodies: read with a size limit, parse JSON or YAML, find duplicate fields, check kind and apiVersion.

import type { IncomingMessage } from 'node:http'
import { parseAllDocuments, isMap, isSeq, isScalar, type Node as YamlNode } from 'yaml'
import { badRequest, requestEntityTooLarge, unsupportedMediaType } from '../errors/status-error.js'
import type { DecodedObject } from '../registry/types.js'
import type { ResourceDefinition } from '../schema/types.js'
import { CUSTOM_BODY_MEDIA_TYPES, type BodyFormat } from './negotiate.js'
import { ProtobufDecodeError, decodeEnvelope } from './protobuf/decode.js'
import type { Messages } from './protobuf/messages.js'
import { findDuplicateKeys, MAX_JSON_DEPTH, MaxDepthError } from './json-duplicates.js'

/** Kubernetes' limit for a request body (3 MiB). */
export const MAX_BODY_BYTES = 3 * 1024 * 1024

/**
 * Reads the whole body, answering 413 as soon as it passes `limit` (declared Content-Length or streamed
 * bytes). Reading stops early; the caller closes the connection after answering.
 */
export async function readBody (req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<Buffer> {
  const declared = Number(req.headers['content-length'])
  if (Number.isFinite(declared) && declared > limit) {
    req.pause()
    throw requestEntityTooLarge(limit)
  }
  return await new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    let done = false
    const finish = (err?: unknown): void => {
      if (done) return
      done = true
      req.off('data', onData)
      req.off('end', onEnd)
      req.off('error', onError)
      req.off('close', onClose)
      if (err !== undefined) reject(err)
      else resolve(Buffer.concat(chunks, size))
    }
    const onData = (chunk: Buffer): void => {
      size += chunk.length
      if (size > limit) {
        req.pause()
        finish(requestEntityTooLarge(limit))
        return
      }
      chunks.push(chunk)
    }
    const onEnd = (): void => finish()
    const onError = (err: Error): void => finish(badRequest(`error reading request body: ${err.message}`))
    const onClose = (): void => { if (!req.complete) finish(badRequest('request body was not fully received')) }
    req.on('data', onData)
    req.on('end', onEnd)
    req.on('error', onError)
    req.on('close', onClose)
  })
}

/** V8's parse error in the words Go's decoder uses where they mean the same (a body cut short). */
function jsonErrorText (err: unknown, text: string): string {
  const why = err instanceof Error ? err.message : String(err)
  const at = /at position (\d+)/.exec(why)
  if (/end of JSON input/i.test(why) || (at !== null && Number(at[1]) >= text.trimEnd().length)) return 'unexpected end of JSON input'
  return why
}

/** JSON text to an object plus duplicate field paths; 400 in Kubernetes' words for malformed input. */
export function decodeJson (text: string): DecodedObject {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (err) {
    throw badRequest(`couldn't get version/kind; json parse error: ${jsonErrorText(err, text)}`)
  }
  const object = requireObject(value)
  try {
    return { object, duplicateFields: findDuplicateKeys(text) }
  } catch (err) {
    if (err instanceof MaxDepthError) throw badRequest(`couldn't get version/kind; json parse error: ${err.message}`)
    throw err
  }
}

/** YAML text (one document) to an object plus duplicate field paths. */
export function decodeYaml (text: string): DecodedObject {
  let docs
  try {
    docs = parseAllDocuments(text, { uniqueKeys: false, prettyErrors: false })
  } catch (err) {
    throw badRequest(`couldn't get version/kind; yaml parse error: ${(err as Error).message}`)
  }
  const list = Array.isArray(docs) ? docs : []
  const real = list.filter(d => d.contents !== null && !(isScalar(d.contents) && d.contents.value === null))
  for (const d of list) {
    if (d.errors.length > 0) throw badRequest(`couldn't get version/kind; yaml parse error: ${d.errors[0].message.split('\n')[0]}`)
  }
  if (real.length === 0) throw badRequest("couldn't get version/kind; json parse error: unexpected end of JSON input")
  if (real.length > 1) throw badRequest(`the request body holds ${real.length} YAML documents; send one object per request`)
  const doc = real[0]
  const duplicateFields: string[] = []
  try {
    collectYamlDuplicates(doc.contents, '', duplicateFields, 0)
    return { object: requireObject(doc.toJS({ maxAliasCount: 100 })), duplicateFields }
  } catch (err) {
    if (err instanceof MaxDepthError || err instanceof RangeError) throw badRequest("couldn't get version/kind; yaml parse error: exceeded max depth")
    throw err
  }
}

function collectYamlDuplicates (node: unknown, path: string, out: string[], depth: number): void {
  if (depth > MAX_JSON_DEPTH) throw new MaxDepthError()
  if (isMap(node)) {
    const seen = new Set<string>()
    for (const pair of node.items) {
      const k = isScalar(pair.key) ? String(pair.key.value) : String(pair.key)
      const p = path === '' ? k : `${path}.${k}`
      if (seen.has(k)) out.push(p)
      else seen.add(k)
      collectYamlDuplicates(pair.value as YamlNode, p, out, depth + 1)
    }
  } else if (isSeq(node)) {
    node.items.forEach((item, i) => collectYamlDuplicates(item, `${path}[${i}]`, out, depth + 1))
  }
}

function requireObject (value: unknown): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    const what = Array.isArray(value) ? 'array' : value === null ? 'null' : typeof value
    throw badRequest(`couldn't get version/kind; json parse error: expected a JSON object, got ${what}`)
  }
  return value as Record<string, unknown>
}

export function decodeBody (bytes: Buffer, format: BodyFormat, messages?: Messages): DecodedObject {
  if (format === 'protobuf') {
    if (messages === undefined) throw unsupportedMediaType('application/vnd.kubernetes.protobuf', CUSTOM_BODY_MEDIA_TYPES)
    try {
      return { object: decodeEnvelope(bytes, messages), duplicateFields: [] }
    } catch (err) {
      if (err instanceof ProtobufDecodeError) throw badRequest(err.message)
      throw err
    }
  }
  const text = bytes.toString('utf8')
  if (text.trim() === '') throw badRequest("couldn't get version/kind; json parse error: unexpected end of JSON input")
  return format === 'json' ? decodeJson(text) : decodeYaml(text)
}

export function apiVersionOf (def: Pick<ResourceDefinition, 'group' | 'version'>): string {
  return def.group === '' ? def.version : `${def.group}/${def.version}`
}

/**
 * Checks the body names the endpoint's kind and version; fills them in when absent, as Kubernetes
 * defaults them from the URL. `kind` is the expected kind (e.g. Scale for /scale).
 */
export function checkKind (body: DecodedObject, def: ResourceDefinition, kind = def.kind, apiVersion = apiVersionOf(def)): void {
  const obj = body.object
  if (obj.kind !== undefined && typeof obj.kind !== 'string') throw badRequest('Object \'Kind\' is not a string')
  if (obj.apiVersion !== undefined && typeof obj.apiVersion !== 'string') throw badRequest('Object \'apiVersion\' is not a string')
  if (obj.kind === undefined || obj.kind === '') obj.kind = kind
  if (obj.apiVersion === undefined || obj.apiVersion === '') obj.apiVersion = apiVersion
  if (obj.kind !== kind) {
    throw badRequest(`the object provided is unrecognized (must be of type ${kind}): ${String(obj.kind)} in version "${String(obj.apiVersion)}"`)
  }
  if (obj.apiVersion !== apiVersion) {
    throw badRequest(`the API version in the data (${String(obj.apiVersion)}) does not match the expected API version (${apiVersion})`)
  }
}
