// The write verbs: create, update (incl. status/scale), delete and deletecollection.

import { badRequest } from '../errors/status-error.js'
import type { DecodedObject, RequestContext } from '../registry/types.js'
import { checkKind, decodeBody, readBody } from './decode.js'
import { encodeList, encodeObject, send, warningHeaders } from './encode.js'
import type { Call } from './handlers.js'
import { bodyFormat } from './negotiate.js'
import type { Messages } from './protobuf/messages.js'
import { buildRequestContext, parseDeleteOptions, parseDryRun, parseListQuery } from './request-context.js'

/** decode: Content-Type check (415), bounded read (413), parse (400), kind/apiVersion check (400). */
async function decode (call: Call, kind?: string, apiVersion?: string): Promise<DecodedObject> {
  const format = bodyFormat(call.req.headers['content-type'])
  if (typeof format !== 'string') throw format
  const body = decodeBody(await readBody(call.req), format, protobufMessages(call))
  checkKind(body, call.def, kind, apiVersion)
  return body
}

/** Protobuf bodies are read for built-in kinds only; custom resources answer 415 to them, as in Kubernetes. */
function protobufMessages (call: Call): Messages | undefined {
  return call.def.custom === undefined ? call.env.protobuf : undefined
}

function metadataOf (body: DecodedObject): Record<string, unknown> {
  const meta = body.object.metadata
  if (meta === undefined || meta === null) {
    const fresh: Record<string, unknown> = {}
    body.object.metadata = fresh
    return fresh
  }
  if (typeof meta !== 'object' || Array.isArray(meta)) throw badRequest('metadata: Invalid value: must be an object')
  return meta as Record<string, unknown>
}

/** The URL's namespace wins; a different one in the body is a 400, as in Kubernetes. */
function admitNamespace (call: Call, body: DecodedObject): void {
  const meta = metadataOf(body)
  const ns = call.info.namespace
  if (!call.def.namespaced) return
  if (meta.namespace === undefined || meta.namespace === '') meta.namespace = ns
  else if (meta.namespace !== ns) throw badRequest('the namespace of the provided object does not match the namespace sent on the request')
}

function scaleKind (call: Call): [string | undefined, string | undefined] {
  return call.subresource === 'scale' ? ['Scale', 'autoscaling/v1'] : [undefined, undefined]
}

export function respond (call: Call, status: number, bytes: Buffer, ctx: RequestContext): void {
  const media = call.media.form === 'yaml' || call.media.form === 'protobuf' ? call.media : { form: 'json' as const }
  send(call.req, call.res, status, encodeObject(bytes, media, call.pretty), warningHeaders(ctx.warnings))
}

export async function serveCreate (call: Call): Promise<void> {
  const ctx = buildRequestContext(call.req, call.user, call.url.searchParams, true)
  const body = await decode(call)
  admitNamespace(call, body)
  const result = await call.handler.create(ctx, call.info.namespace, body)
  respond(call, 201, result.bytes, ctx)
}

export async function serveUpdate (call: Call): Promise<void> {
  const ctx = buildRequestContext(call.req, call.user, call.url.searchParams, true)
  const [kind, apiVersion] = scaleKind(call)
  const body = await decode(call, kind, apiVersion)
  const meta = metadataOf(body)
  if (call.subresource !== 'scale') admitNamespace(call, body)
  if (meta.name === undefined || meta.name === '') meta.name = call.info.name
  else if (meta.name !== call.info.name) {
    throw badRequest(`the name of the object (${String(meta.name)}) does not match the name on the URL (${call.info.name})`)
  }
  const result = await call.handler.update(ctx, call.info.namespace, call.info.name, body, call.subresource)
  respond(call, result.created ? 201 : 200, result.bytes, ctx)
}

/** DeleteOptions may come as a JSON (or YAML) body; an empty body means none. */
async function readDeleteBody (call: Call): Promise<Record<string, unknown> | undefined> {
  const hasBody = Number(call.req.headers['content-length'] ?? '0') > 0 || call.req.headers['transfer-encoding'] !== undefined
  if (!hasBody) return undefined
  const format = bodyFormat(call.req.headers['content-type'])
  if (typeof format !== 'string') throw format
  const bytes = await readBody(call.req)
  if (bytes.toString('utf8').trim() === '') return undefined
  return decodeBody(bytes, format, call.env.protobuf).object
}

async function deleteContext (call: Call): Promise<{ ctx: RequestContext; opts: ReturnType<typeof parseDeleteOptions>['opts'] }> {
  const body = await readDeleteBody(call)
  const { opts, dryRun } = parseDeleteOptions(call.url.searchParams, body)
  const q = new URLSearchParams(call.url.searchParams)
  q.delete('dryRun')
  const ctx = buildRequestContext(call.req, call.user, q, true)
  ctx.dryRun = parseDryRun(dryRun, 'DeleteOptions')
  return { ctx, opts }
}

/**
 * 200 as kube-apiserver answers: the object while finalizers or a grace period keep it; once it is gone,
 * the object for kinds whose store returns it (`returnDeletedObject`), else a Status of success naming it.
 * 202 only when the object is kept and the client asked for cascading deletion with orphanDependents=false.
 */
export async function serveDelete (call: Call): Promise<void> {
  const { ctx, opts } = await deleteContext(call)
  const result = await call.handler.delete(ctx, call.info.namespace, call.info.name, opts)
  if (result.deleted && call.def.returnDeletedObject !== true) {
    respond(call, 200, deletedStatus(call, result.object), ctx)
    return
  }
  respond(call, !result.deleted && opts.orphanDependents === false ? 202 : 200, result.bytes, ctx)
}

/** The Status kube-apiserver's store answers for a deleted object; `kind` holds the resource, as there. */
function deletedStatus (call: Call, obj: Record<string, unknown>): Buffer {
  const meta = (obj.metadata ?? {}) as { name?: string, uid?: string }
  const details: Record<string, string> = { name: meta.name ?? call.info.name }
  if (call.def.group !== '') details.group = call.def.group
  details.kind = call.def.plural
  if (meta.uid !== undefined && meta.uid !== '') details.uid = meta.uid
  return Buffer.from(JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details }))
}

export async function serveDeleteCollection (call: Call): Promise<void> {
  const { ctx, opts } = await deleteContext(call)
  const query = parseListQuery(call.url.searchParams)
  const list = await call.handler.deleteCollection(ctx, call.info.namespace, query, opts)
  const media = call.media.form === 'yaml' || call.media.form === 'protobuf' ? call.media : { form: 'json' as const }
  send(call.req, call.res, 200, encodeList(call.def, list, media, call.pretty), warningHeaders(ctx.warnings))
}
