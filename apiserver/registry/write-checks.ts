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
export function checkTypeMeta (core: ResourceCore, obj: Obj): void {
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
export function checkNamespace (core: ResourceCore, obj: Obj, namespace: string): void {
  const meta = metaOf(obj)
  if (!core.def.namespaced) { delete meta.namespace; return }
  if (meta.namespace === undefined || meta.namespace === '') { meta.namespace = namespace; return }
  if (namespace !== '' && meta.namespace !== namespace) {
    throw badRequest('the namespace of the provided object does not match the namespace sent on the request')
  }
}

const TYPE_ERROR = 'FieldValueTypeInvalid'

/**
 * Spec 4.10 on a decoded body: unknown (found before pruning) and duplicate fields per
 * ctx.fieldValidation, then pruning. Returns the problems so the caller can apply the first-fatal-error
 * rule once validation has run (see `finishValidation`).
 */
export function fieldValidation (core: ResourceCore, ctx: RequestContext, body: DecodedObject): string[] {
  const obj = body.object
  const problems: string[] = []
  if (ctx.fieldValidation !== 'Ignore' || body.duplicateFields.length > 0) {
    const preserve = core.def.custom?.preserveUnknownFieldsAtRoot === true
    const unknown = ctx.fieldValidation === 'Ignore' || preserve ? [] : findUnknownFields(core.def, obj)
    for (const f of unknown) problems.push(`unknown field "${f}"`)
    for (const f of body.duplicateFields) problems.push(`duplicate field "${f}"`)
  }
  pruneUnknownFields(core.def, obj)
  if (ctx.fieldValidation === 'Ignore') return []
  if (ctx.fieldValidation === 'Warn') { ctx.warnings.push(...problems); return [] }
  return problems
}

/** Applies schema defaults in place. */
export function defaultObject (core: ResourceCore, obj: Obj): void {
  applyDefaults(core.def, obj)
}

/** Schema, metadata and strategy errors of an object about to be stored. */
export function validationErrors (core: ResourceCore, obj: Obj, old?: Obj): FieldError[] {
  const errs: FieldError[] = [...validateObject(core.def, obj)]
  errs.push(...validateObjectMeta(metaOf(obj), { namespaced: core.def.namespaced, isCreate: old === undefined, nameValidation: core.def.nameValidation }))
  if (core.strategy.validate) errs.push(...core.strategy.validate(obj))
  if (old !== undefined && core.strategy.validateUpdate) errs.push(...core.strategy.validateUpdate(obj, old))
  // Rules run on an object that is otherwise valid, as Kubernetes evaluates CEL only after schema validation.
  if (errs.length === 0 && core.strategy.validateTransition) errs.push(...core.strategy.validateTransition(obj, old))
  return errs
}

/**
 * The first-fatal-error rule: strict problems plus a type error answer 400 with only the type error;
 * strict problems alone answer 400 naming all of them; field errors alone answer 422.
 */
export function finishValidation (core: ResourceCore, name: string, strictProblems: string[], errs: FieldError[]): void {
  if (strictProblems.length > 0) {
    const typeErr = errs.find(e => e.type === TYPE_ERROR)
    if (typeErr !== undefined) throw badRequest(`${typeErr.field}: ${typeErr.message}`)
    throw badRequest(`strict decoding error: ${strictProblems.join(', ')}`)
  }
  if (errs.length > 0) {
    throw invalid(core.def.group, core.def.kind, name,
      errs.map(e => ({ reason: e.type, message: e.message, field: e.field })))
  }
}
