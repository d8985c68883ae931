// PATCH: the patch type from Content-Type, one small handler per type, PatchOptions checks and the registry call.
// JSON Patch, JSON Merge Patch and strategic merge patch decode into a function over the current object and go
// through the registry's patch; each type is one entry of PATCH_TYPES (server-side apply plugs in there).

import { StatusError, badRequest, rejectedRequest, unsupportedMediaType } from '../errors/status-error.js'
import type { RequestContext } from '../registry/types.js'
import { applyJsonPatch, decodeJsonPatch, jsonTypeName, type JsonPatchOperation } from '../registry/patch/json-patch.js'
import { applyMergePatch } from '../registry/patch/merge-patch.js'
import { isPatchError } from '../registry/patch/patch-error.js'
import type { Json } from '../registry/patch/json-pointer.js'
import type { ResourceDefinition } from '../schema/types.js'
import { readBody } from './decode.js'
import type { Call } from './handlers.js'
import { respond } from './handlers-write.js'
import { parseMediaType } from './negotiate.js'
import { parse, strictDecoding } from './patch-body.js'
import { strategicMergePatch } from './patch-strategic.js'
import { APPLY_PATCH, serveApply } from './patch-apply.js'
import { buildRequestContext, parseBoolean } from './request-context.js'

export const JSON_PATCH = 'application/json-patch+json'
export const MERGE_PATCH = 'application/merge-patch+json'
export const STRATEGIC_MERGE_PATCH = 'application/strategic-merge-patch+json'

/** kube-apiserver's cap on the operations of one JSON patch. */
export const MAX_JSON_PATCH_OPERATIONS = 10000

export type Apply = (current: Record<string, unknown>) => Record<string, unknown>

/** A decoded patch body: the change to make, and the body's duplicate members (reported per fieldValidation). */
export interface DecodedPatch { apply: Apply; duplicateFields: string[] }

/** Serves one PATCH of its type; `body` is the request body as text. */
export type PatchTypeHandler = (call: Call, ctx: RequestContext, body: string) => Promise<void>

export interface PatchType {
  mediaType: string
  /** False for types kube-apiserver does not serve for custom resources (strategic merge patch). */
  customResources: boolean
  serve: PatchTypeHandler
}

/** A patch type that decodes into a function over the current object, written through the registry's patch. */
export function viaRegistryPatch (decode: (text: string, ctx: RequestContext, call: Call) => DecodedPatch): PatchTypeHandler {
  return async (call, ctx, body) => {
    checkPatchOptions(call.url.searchParams)
    const { apply, duplicateFields } = decode(body, ctx, call)
    const result = await call.handler.patch(ctx, call.info.namespace, call.info.name, apply, call.subresource, duplicateFields)
    respond(call, 200, result.bytes, ctx)
  }
}

/**
 * The served patch types, in the order a 415 lists them (kube-apiserver's order); server-side apply serves
 * custom resources too.
 */
export const PATCH_TYPES: readonly PatchType[] = [
  { mediaType: JSON_PATCH, customResources: true, serve: viaRegistryPatch((text, ctx) => jsonPatch(text, ctx)) },
  { mediaType: MERGE_PATCH, customResources: true, serve: viaRegistryPatch((text, ctx) => mergePatch(text, ctx)) },
  { mediaType: STRATEGIC_MERGE_PATCH, customResources: false, serve: viaRegistryPatch((text, ctx, call) => strategicMergePatch(text, ctx, call.def, call.subresource)) },
  { mediaType: APPLY_PATCH, customResources: true, serve: serveApply }
]

export async function servePatch (call: Call): Promise<void> {
  const type = patchType(call.req.headers['content-type'], call.def)
  const ctx = buildRequestContext(call.req, call.user, call.url.searchParams, true)
  const text = (await readBody(call.req)).toString('utf8')
  await type.serve(call, ctx, text)
}

/** The patch types served for a resource: custom resources get no strategic merge patch, as in Kubernetes. */
export function servedPatchTypes (def: ResourceDefinition): PatchType[] {
  return PATCH_TYPES.filter(p => def.custom === undefined || p.customResources)
}

/** The served patch type named by Content-Type; 415 listing the served ones for anything else. */
export function patchType (contentType: string | undefined, def: ResourceDefinition): PatchType {
  const m = parseMediaType(contentType ?? '')
  const name = m === undefined ? '' : `${m.type}/${m.subtype}`
  const served = servedPatchTypes(def)
  const found = served.find(p => p.mediaType === name)
  if (found === undefined) throw unsupportedMediaType(contentType ?? '', served.map(p => p.mediaType))
  return found
}

/** PatchOptions validation as kube-apiserver words it: `force` belongs to apply patches only. */
export function checkPatchOptions (q: URLSearchParams): void {
  if (parseBoolean('force', q.get('force')) === undefined) return
  const cause = { reason: 'FieldValueForbidden', field: 'force', message: 'Forbidden: may not be specified for non-apply patch' }
  throw new StatusError(422, 'Invalid', `PatchOptions.meta.orch.io "" is invalid: force: ${cause.message}`,
    { name: '', group: 'meta.orch.io', kind: 'PatchOptions', causes: [cause] })
}

function jsonPatch (text: string, ctx: RequestContext): DecodedPatch {
  const strict = strictDecoding(ctx)
  const { value } = parse(text, why => badRequest(strict ? `error decoding patch: ${why}` : why))
  let ops: JsonPatchOperation[]
  try {
    ops = decodeJsonPatch(value)
  } catch (err) {
    if (!isPatchError(err)) throw err
    const inner = Array.isArray(value) ? 'jsonpatch.Operation' : 'jsonpatch.Patch'
    const bad = Array.isArray(value) ? value.find(op => op === null || typeof op !== 'object' || Array.isArray(op)) : value
    const target = strict ? (Array.isArray(value) ? 'handlers.jsonPatchOp' : '[]handlers.jsonPatchOp') : inner
    const why = `json: cannot unmarshal ${jsonTypeName(bad)} into Go value of type ${target}`
    throw badRequest(strict ? `error decoding patch: ${why}` : why)
  }
  if (ops.length > MAX_JSON_PATCH_OPERATIONS) {
    throw new StatusError(413, 'RequestEntityTooLarge',
      `The allowed maximum operations in a JSON patch is ${MAX_JSON_PATCH_OPERATIONS}, got ${ops.length}`)
  }
  const apply: Apply = (current) => {
    let out: Json
    try {
      out = applyJsonPatch(current as Json, ops)
    } catch (err) {
      // kube-apiserver answers every failure to apply (a failed test, a missing path) with this generic 422.
      // As kube-apiserver's NewGenericServerResponse(422): the generic message, the patch error as the cause.
      if (isPatchError(err)) throw rejectedRequest(err.message)
      throw err
    }
    return out as Record<string, unknown>
  }
  return { apply, duplicateFields: [] }
}

function mergePatch (text: string, ctx: RequestContext): DecodedPatch {
  const strict = strictDecoding(ctx)
  const { value, duplicates } = parse(text, why => badRequest(strict ? `error decoding patch: ${why}` : 'Invalid JSON Patch'))
  if (value === null) throw badRequest('Invalid JSON Patch')
  if (typeof value !== 'object' || Array.isArray(value)) {
    const why = `json: cannot unmarshal ${jsonTypeName(value)} into Go value of type map[string]interface {}`
    throw badRequest(strict ? `error decoding patch: ${why}` : 'Invalid JSON Patch')
  }
  const apply: Apply = (current) => applyMergePatch(current as Json, value as Json) as Record<string, unknown>
  return { apply, duplicateFields: duplicates }
}
