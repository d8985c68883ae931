// The server-side apply patch type (`application/apply-patch+yaml`): PatchOptions checks, YAML decoding with
// duplicate keys found, and the registry's apply; 201 when the apply created the object.

import { LineCounter, parseDocument, visit } from 'yaml'
import { badRequest, invalid } from '../errors/status-error.js'
import type { RequestContext } from '../registry/types.js'
import type { Call } from './handlers.js'
import { respond } from './handlers-write.js'
import { parseBoolean } from './request-context.js'
import { findDuplicateKeys } from './json-duplicates.js'

export const APPLY_PATCH = 'application/apply-patch+yaml'

export async function serveApply (call: Call, ctx: RequestContext, body: string): Promise<void> {
  const force = parseBoolean('force', call.url.searchParams.get('force')) === true
  if (ctx.fieldManager === undefined || ctx.fieldManager === '') {
    // kube-apiserver's ValidatePatchOptions: a 422 on PatchOptions, before the object is looked up.
    throw invalid('meta.orch.io', 'PatchOptions', '', [{ reason: 'FieldValueRequired', field: 'fieldManager', message: 'Required value: is required for apply patch' }])
  }
  const { config, duplicates } = decodeApplyYaml(body, ctx)
  const result = await call.handler.apply(ctx, call.info.namespace, call.info.name, config, force, call.subresource, duplicates)
  respond(call, result.created ? 201 : 200, result.bytes, ctx)
}

/**
 * The body as an object. Malformed YAML and non-objects are 400 `error decoding YAML: ...`; duplicate keys are
 * a 400 `error strict decoding YAML: ...` under fieldValidation=Strict, a warning under Warn.
 */
export function decodeApplyYaml (text: string, ctx: RequestContext): { config: Record<string, unknown>, duplicates: string[] } {
  const json = asJsonObject(text)
  if (json !== undefined) return { config: json, duplicates: [] }
  const doc = parseDocument(text, { uniqueKeys: false, schema: 'core', prettyErrors: false })
  if (doc.errors.length > 0) throw badRequest(`error decoding YAML: error converting YAML to JSON: yaml: ${doc.errors[0].message}`)
  const value = doc.toJS({ maxAliasCount: 100 }) as unknown
  if (value === null || value === undefined) return { config: {}, duplicates: [] }
  if (typeof value !== 'object' || Array.isArray(value)) {
    const type = Array.isArray(value) ? 'array' : typeof value === 'string' ? 'string' : typeof value === 'number' ? 'number' : 'bool'
    throw badRequest(`error decoding YAML: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal ${type} into Go value of type map[string]interface {}`)
  }
  const duplicates = duplicateKeys(text)
  if (duplicates.length > 0 && ctx.fieldValidation !== 'Ignore') {
    const lines = duplicates.map(d => `  ${d}`).join('\n')
    const why = `error converting YAML to JSON: yaml: unmarshal errors:\n${lines}`
    if (ctx.fieldValidation === 'Strict') throw badRequest(`error strict decoding YAML: ${why}`)
    ctx.warnings.push(why)
  }
  return { config: value as Record<string, unknown>, duplicates: [] }
}

/** `line N: key "k" already set in map` for each repeated key, as go-yaml words it. */
function duplicateKeys (text: string): string[] {
  const lines = new LineCounter()
  const doc = parseDocument(text, { uniqueKeys: false, schema: 'core', lineCounter: lines })
  const out: string[] = []
  visit(doc, {
    Map (_key, map) {
      const seen = new Set<string>()
      for (const pair of map.items) {
        const k = pair.key as { value?: unknown, range?: [number, number, number] } | null
        const name = String(k !== null && typeof k === 'object' && 'value' in k ? k.value : k)
        if (seen.has(name)) out.push(`line ${lines.linePos(k?.range?.[0] ?? 0).line}: key ${JSON.stringify(name)} already set in map`)
        seen.add(name)
      }
    }
  })
  return out
}

/**
 * Most clients (kubectl, client-go, client-node) send JSON, which is YAML too: parsed as JSON when it is a JSON object
 * without duplicate members (anything else takes the YAML path and its errors).
 */
function asJsonObject (text: string): Record<string, unknown> | undefined {
  if (!text.trimStart().startsWith('{')) return undefined
  try {
    const value = JSON.parse(text) as unknown
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined
    if (findDuplicateKeys(text).length > 0) return undefined
    return value as Record<string, unknown>
  } catch {
    return undefined
  }
}
