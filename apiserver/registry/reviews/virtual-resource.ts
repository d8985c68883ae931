// The generic create-only, never-stored resource: decodes the posted body as kube-apiserver would, then lets a review fill it in.

import type { ResourceDefinition } from '../../schema/types.js'
import { validateObject } from '../../schema/validate.js'
import type { Obj } from '../object-meta.js'
import type { Creater, RequestContext } from '../types.js'
import { checkNamespace, checkTypeMeta, fieldValidation, finishValidation, TYPE_ERROR } from '../write-checks.js'

/**
 * Answers one posted review: `obj` has passed the decode checks (apiVersion/kind set, namespace filled from the
 * URL for namespaced kinds, unknown fields pruned). Returns the object to answer; apiVersion/kind are set after.
 * Throws StatusError for a review Kubernetes refuses (400/422).
 */
export type Review = (ctx: RequestContext, namespace: string, obj: Obj) => Promise<Obj>

/** A Creater for `def` (definition.virtual) answering with `review`; nothing is stored, so dry-run changes nothing. */
export function virtualResource (def: ResourceDefinition, review: Review): Creater {
  const core = { def, apiVersion: def.group === '' ? def.version : `${def.group}/${def.version}` }
  return {
    definition: def,
    async create (ctx, namespace, body) {
      const obj = body.object
      checkTypeMeta(core, obj)
      checkNamespace(core, obj, namespace)
      const strict = fieldValidation(core, ctx, body)
      // kube-apiserver decodes reviews into Go types: a wrongly typed field is a 400 decode error. Required fields
      // of the published schema (e.g. TokenRequestSpec.audiences) are not enforced there, so they are not here.
      const typeErrors = validateObject(def, obj).filter(e => e.type === TYPE_ERROR)
      finishValidation(core, '', strict, typeErrors)
      const { apiVersion: _v, kind: _k, ...answer } = await review(ctx, namespace, obj)
      return { status: 201, object: { apiVersion: core.apiVersion, kind: def.kind, ...answer } }
    }
  }
}

/** Kubernetes' empty ObjectMeta as Go encodes it (a zero creationTimestamp is `null`). */
export function emptyMeta (): Obj {
  return { creationTimestamp: null }
}
