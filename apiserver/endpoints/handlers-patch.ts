// PATCH: the patch type from Content-Type, PatchOptions checks, decoding the patch document, and the registry call.
// JSON Patch and JSON Merge Patch are served; strategic merge and apply answer 415 until they land.

import { StatusError, badRequest, unsupportedMediaType } from '../errors/status-error.js'
import type { RequestContext } from '../registry/types.js'
import { applyJsonPatch, decodeJsonPatch, jsonTypeName, type JsonPatchOperation } from '../registry/patch/json-patch.js'
import { applyMergePatch } from '../registry/patch/merge-patch.js'
import { isPatchError } from '../registry/patch/patch-error.js'
import type { Json } from '../registry/patch/json-pointer.js'
import { readBody } from './decode.js'
import { findDuplicateKeys, MaxDepthError } from './json-duplicates.js'
import type { Call } from './handlers.js'
import { respond } from './handlers-write.js'
import { parseMediaType } from './negotiate.js'
import { buildRequestContext, parseBoolean } from './request-context.js'

export const JSON_PATCH = 'application/json-patch+json'
export const MERGE_PATCH = 'application/merge-patch+json'
/** The patch types served today, as the 415 answer lists them. */
export const SERVED_PATCH_TYPES = [JSON_PATCH, MERGE_PATCH]

/** kube-apiserver's cap on the operations of one JSON patch. */
export const MAX_JSON_PATCH_OPERATIONS = 10000

type Apply = (current: Record<string, unknown>) => Record<string, unknown>

export async function servePatch (call: Call): Promise<void> {
  const type = patchType(call.req.headers['content-type'])
  const ctx = buildRequestContext(call.req, call.user, call.url.searchParams, true)
  checkPatchOptions(call.url.searchParams)
  const text = (await readBody(call.req)).toString('utf8')
  const { apply, duplicateFields } = type === JSON_PATCH ? jsonPatch(text, ctx) : mergePatch(text, ctx)
  const result = await call.handler.patch(ctx, call.info.namespace, call.info.name, apply, call.subresource, duplicateFields)
  respond(call, 200, result.bytes, ctx)
}

/** The served patch type named by Content-Type; 415 listing the served ones for anything else. */
export function patchType (contentType: string | undefined): string {
  const m = parseMediaType(contentType ?? '')
  const type = m === undefined ? '' : `${m.type}/${m.subtype}`
  if (!SERVED_PATCH_TYPES.includes(type)) throw unsupportedMediaType(contentType ?? '', SERVED_PATCH_TYPES)
  return type
}

/** PatchOptions validation as kube-apiserver words it: `force` belongs to apply patches only. */
function checkPatchOptions (q: URLSearchParams): void {
  if (parseBoolean('force', q.get('force')) === undefined) return
  const cause = { reason: 'FieldValueForbidden', field: 'force', message: 'Forbidden: may not be specified for non-apply patch' }
  throw new StatusError(422, 'Invalid', `PatchOptions.meta.k8s.io "" is invalid: force: ${cause.message}`,
    { name: '', group: 'meta.k8s.io', kind: 'PatchOptions', causes: [cause] })
}

/** Parses a patch body; duplicate members are found first (the scan also bounds nesting depth). */
function parse (text: string, decodeError: (why: string) => StatusError): { value: unknown; duplicates: string[] } {
  let duplicates: string[]
  let value: unknown
  try {
    value = JSON.parse(text)
    duplicates = findDuplicateKeys(text)
  } catch (err) {
    if (err instanceof MaxDepthError || err instanceof RangeError) throw decodeError('exceeded max depth')
    throw decodeError((err as Error).message)
  }
  return { value, duplicates }
}

function strictDecoding (ctx: RequestContext): boolean {
  return ctx.fieldValidation !== 'Ignore'
}

function jsonPatch (text: string, ctx: RequestContext): { apply: Apply; duplicateFields: string[] } {
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
      if (isPatchError(err)) throw new StatusError(422, 'Invalid', 'the server rejected our request due to an error in our request', { causes: [{ message: err.message }] })
      throw err
    }
    return out as Record<string, unknown>
  }
  return { apply, duplicateFields: [] }
}

function mergePatch (text: string, ctx: RequestContext): { apply: Apply; duplicateFields: string[] } {
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
