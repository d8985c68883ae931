// POST-only endpoints with their own handlers: subresources (pods/binding, pods/eviction, serviceaccounts/token) and create-only resources (reviews).

import type { IncomingMessage, ServerResponse } from 'node:http'
import { badRequest } from '../errors/status-error.js'
import type { Creater, SubresourceCreater, SubresourceResult, UserInfo } from '../registry/types.js'
import { decodeBody, readBody } from './decode.js'
import { encodeObject, send, warningHeaders } from './encode.js'
import type { ResourceEnv } from './handlers.js'
import { bodyFormat, negotiateResponse, type ResponseMedia } from './negotiate.js'
import type { RequestInfo } from './request-info.js'
import { buildRequestContext, prettyOf, requestNotes } from './request-context.js'
import { hasProtobufMessage } from './protobuf/encode.js'

export async function serveSubresourceCreate (env: ResourceEnv, req: IncomingMessage, res: ServerResponse, url: URL,
  info: RequestInfo, user: UserInfo, creater: SubresourceCreater): Promise<void> {
  const media = negotiate(env, req)
  const format = bodyFormat(req.headers['content-type'])
  if (typeof format !== 'string') throw format
  const body = decodeBody(await readBody(req), format, env.protobuf)
  const { kind, apiVersions } = creater.requestKind
  const obj = body.object
  obj.kind ??= kind
  obj.apiVersion ??= apiVersions[0]
  if (obj.kind !== kind) throw badRequest(`the object provided is unrecognized (must be of type ${kind}): ${String(obj.kind)} in version "${String(obj.apiVersion)}"`)
  if (!apiVersions.includes(String(obj.apiVersion))) {
    throw badRequest(`the API version in the data (${String(obj.apiVersion)}) does not match the expected API version (${apiVersions[0]})`)
  }
  const meta = (obj.metadata ?? {}) as Record<string, unknown>
  if (meta.name !== undefined && meta.name !== '' && meta.name !== info.name) {
    throw badRequest(`name in URL does not match name in ${kind} object`)
  }
  if (meta.namespace !== undefined && meta.namespace !== '' && meta.namespace !== info.namespace) {
    throw badRequest('the namespace of the provided object does not match the namespace sent on the request')
  }
  const ctx = buildRequestContext(req, user, url.searchParams, true)
  const result = await creater.create(ctx, info.namespace, info.name, body)
  answer(req, res, url, media, result, ctx.warnings)
}

/** POST on the collection of a create-only resource (a review); the registry checks the body's kind. */
export async function serveCreaterCreate (env: ResourceEnv, req: IncomingMessage, res: ServerResponse, url: URL,
  info: RequestInfo, user: UserInfo, creater: Creater): Promise<void> {
  const media = negotiate(env, req)
  const format = bodyFormat(req.headers['content-type'])
  if (typeof format !== 'string') throw format
  const body = decodeBody(await readBody(req), format, env.protobuf)
  const ctx = buildRequestContext(req, user, url.searchParams, true)
  const result = await creater.create(ctx, info.namespace, body)
  answer(req, res, url, media, result, ctx.warnings)
}

/** JSON, YAML or protobuf (the answers here, Status, reviews, Eviction, TokenRequest, are all built-in messages). */
function negotiate (env: ResourceEnv, req: IncomingMessage): ResponseMedia {
  const media = negotiateResponse(req.headers.accept, { allowTable: false, protobuf: env.protobuf })
  if ('code' in media) throw media
  if (media.form === 'protobuf') requestNotes(req).protobufErrors = media.messages
  return media
}

function answer (req: IncomingMessage, res: ServerResponse, url: URL, media: ResponseMedia,
  result: SubresourceResult, warnings: string[]): void {
  const pretty = prettyOf(url.searchParams)
  const o = result.object as { apiVersion?: unknown, kind?: unknown }
  const protobuf = media.form === 'protobuf' && hasProtobufMessage(String(o.apiVersion ?? ''), String(o.kind ?? ''))
  const out = media.form === 'yaml' || protobuf ? media : { form: 'json' as const }
  send(req, res, result.status, encodeObject(Buffer.from(JSON.stringify(result.object)), out, pretty), warningHeaders(warnings))
}
