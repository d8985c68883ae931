// Checks every write runs: type meta, namespace match, field validation (spec 4.10), pruning, defaulting, 422 validation.

import { badRequest, invalid } from '../errors/status-error.js'
import type { FieldError } from '../schema/types.js'
import { validateObject } from '../schema/validate.js'
import { findUnknownFields, pruneUnknownFields } from '../schema/unknown-fields.js'
import { applyDefaults } from '../schema/defaults.js'
import { validateObjectMeta } from '../schema/metadata.js'
import type { DecodedObject, RequestContext } from './types.js'
import type { ResourceCore } from './core.js'
import { metaOf, type Obj } from './object-meta.js'

/** Sets apiVersion/kind when absent; 400 when they name another kind. */
export function checkTypeMeta (core: Pick<ResourceCore, 'def' | 'apiVersion'>, obj: Obj): void {
  const { apiVersion, kind } = obj
  if (apiVersion !== undefined && apiVersion !== '' && apiVersion !== core.apiVersion) {
    throw badRequest(`the API version in the data (${String(apiVersion)}) does not match the expected API version (${core.apiVersion})`)
  }
  if (kind !== undefined && kind !== '' && kind !== core.def.kind) {
    throw badRequest(`the kind in the data (${String(kind)}) does not match the expected kind (${core.def.kind})`)
  }
  obj.apiVersion = core.apiVersion
  obj.kind = core.def.kind
}

/** Fills the namespace from the URL; 400 when the body names another. Cluster scope drops it. */
export function checkNamespace (core: Pick<ResourceCore, 'def'>, obj: Obj, namespace: string): void {
  const meta = metaOf(obj)
  if (!core.def.namespaced) { delete meta.namespace; return }
  if (meta.namespace === undefined || meta.namespace === '') { meta.namespace = namespace; return }
  if (namespace !== '' && meta.namespace !== namespace) {
    throw badRequest('the namespace of the provided object does not match the namespace sent on the request')
  }
}

export const TYPE_ERROR = 'FieldValueTypeInvalid'

/**
 * Spec 4.10 on a decoded body: unknown (found before pruning) and duplicate fields per
 * ctx.fieldValidation, then pruning. Returns the problems so the caller can apply the first-fatal-error
 * rule once validation has run (see `finishValidation`).
 */
export function fieldValidation (core: Pick<ResourceCore, 'def'>, ctx: RequestContext, body: DecodedObject): string[] {
  const obj = body.object
  const problems: string[] = []
  // Whether the search below walked the whole object and found nothing to prune.
  let clean = false
  if (ctx.fieldValidation !== 'Ignore' || body.duplicateFields.length > 0) {
    const preserve = core.def.custom?.preserveUnknownFieldsAtRoot === true
    const unknown = ctx.fieldValidation === 'Ignore' || preserve ? [] : findUnknownFields(core.def, obj)
    clean = ctx.fieldValidation !== 'Ignore' && !preserve && unknown.length === 0
    for (const f of unknown) problems.push(`unknown field "${f}"`)
    for (const f of body.duplicateFields) problems.push(`duplicate field "${f}"`)
  }
  if (!clean) pruneUnknownFields(core.def, obj)
  if (ctx.fieldValidation === 'Ignore') return []
  if (ctx.fieldValidation === 'Warn') { ctx.warnings.push(...problems); return [] }
  return problems
}

/** Applies schema defaults in place. */
export function defaultObject (core: ResourceCore, obj: Obj): void {
  applyDefaults(core.def, obj)
}

/**
 * Schema, metadata and strategy errors of an object about to be stored. `valid`: a value this kind's schema validation
 * accepted (parts of `obj` equal to its parts are not schema-validated again; validateObject).
 */
export async function validationErrors (core: ResourceCore, obj: Obj, old?: Obj, internal = false, valid?: Obj): Promise<FieldError[]> {
  const errs: FieldError[] = [...validateObject(core.def, obj, valid)]
  errs.push(...validateObjectMeta(metaOf(obj), { namespaced: core.def.namespaced, isCreate: old === undefined, nameValidation: core.def.nameValidation }))
  if (core.strategy.validate) errs.push(...await core.strategy.validate(obj))
  if (old !== undefined && core.strategy.validateUpdate) errs.push(...core.strategy.validateUpdate(obj, old, internal))
  // Rules run on an object that is otherwise valid, as Kubernetes evaluates CEL only after schema validation.
  if (errs.length === 0 && core.strategy.validateTransition) errs.push(...await core.strategy.validateTransition(obj, old))
  return errs
}

/**
 * kube-apiserver decodes built-in kinds into Go types, so a wrongly typed field there is a decode error
 * (400, `ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal ...`); custom
 * resources are decoded loosely and their type errors are schema validation errors (422).
 */
function decodeError (core: Pick<ResourceCore, 'def'>, detail: string): ReturnType<typeof badRequest> {
  const { version, kind } = core.def
  return badRequest(`${kind} in version "${version}" cannot be handled as a ${kind}: ${detail}`)
}

const GO_TYPES: Record<string, string> = { string: 'string', integer: 'int64', int32: 'int32', int64: 'int64', number: 'float64', boolean: 'bool', object: 'map[string]interface {}', array: '[]interface {}' }
const JSON_KINDS: Record<string, string> = { string: 'string', integer: 'number', number: 'number', boolean: 'bool', object: 'object', array: 'array', null: 'null' }

/** A type error in the words of Go's JSON decoder, when the schema's message says what was wanted and found. */
function unmarshalDetail (e: FieldError): string {
  const m = /^Invalid value: "(\w+)": .* must be of type ([\w,-]+)/.exec(e.message)
  if (m === null || JSON_KINDS[m[1]!] === undefined) return `${e.field}: ${e.message}`
  const wanted = m[2]!.includes(',') ? 'intstr.IntOrString' : (GO_TYPES[m[2]!] ?? m[2]!)
  return `json: cannot unmarshal ${JSON_KINDS[m[1]!]} into Go struct field ${e.field} of type ${wanted}`
}

/**
 * The first-fatal-error rule: strict problems plus a type error answer 400 with only the type error;
 * strict problems alone answer 400 naming all of them; field errors alone answer 422. For built-in
 * kinds a type error is a 400 decode error in any case.
 */
export function finishValidation (core: Pick<ResourceCore, 'def'>, name: string, strictProblems: string[], errs: FieldError[]): void {
  const builtin = core.def.custom === undefined
  const typeErr = errs.find(e => e.type === TYPE_ERROR)
  if (builtin && typeErr !== undefined) throw decodeError(core, unmarshalDetail(typeErr))
  if (strictProblems.length > 0) {
    if (typeErr !== undefined) throw badRequest(`${typeErr.field}: ${typeErr.message}`)
    throw decodeError(core, `strict decoding error: ${strictProblems.join(', ')}`)
  }
  if (errs.length > 0) {
    throw invalid(core.def.group, core.def.kind, name,
      errs.map(e => ({ reason: e.type, message: e.message, field: e.field })))
  }
}
