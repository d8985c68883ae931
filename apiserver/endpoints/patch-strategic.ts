// The strategic merge patch type: decoding the body and mapping the algorithm's errors to kube-apiserver's answers.

import { type StatusError, badRequest, rejectedRequest, unclassifiedError } from '../errors/status-error.js'
import type { RequestContext, Subresource } from '../registry/types.js'
import { jsonTypeName } from '../registry/patch/json-patch.js'
import { OPAQUE_SCHEMA, patchSchemaOf } from '../registry/patch/smp-schema.js'
import { SmpError, type JsonMap } from '../registry/patch/smp-values.js'
import { strategicMergePatch as applyStrategic } from '../registry/patch/strategic-merge-patch.js'
import type { ResourceDefinition } from '../schema/types.js'
import type { DecodedPatch } from './handlers-patch.js'
import { parse } from './patch-body.js'

/**
 * Decodes a strategic merge patch. As kube-apiserver: `null` is an empty patch, anything but an object is a 400
 * naming the Go type; the `scale` subresource patches the Scale view, whose fields carry no strategies.
 */
export function strategicMergePatch (text: string, _ctx: RequestContext, def: ResourceDefinition, subresource?: Subresource): DecodedPatch {
  const { value, duplicates } = parse(text, why => badRequest(why))
  if (value !== null && (typeof value !== 'object' || Array.isArray(value))) {
    throw badRequest(`json: cannot unmarshal ${jsonTypeName(value)} into Go value of type map[string]interface {}`)
  }
  const patch = (value ?? {}) as JsonMap
  const schema = subresource === 'scale' ? OPAQUE_SCHEMA : patchSchemaOf(def)
  return {
    apply: current => {
      try {
        return applyStrategic(current as JsonMap, patch, schema) as Record<string, unknown>
      } catch (err) {
        if (err instanceof SmpError) throw strategicPatchError(err)
        throw err
      }
    },
    duplicateFields: duplicates
  }
}

/** kube-apiserver's interpretStrategicMergePatchError: 400 and 422 for the classified errors, else 500 unclassified. */
export function strategicPatchError (err: SmpError): StatusError {
  if (err.status === 400) return badRequest(err.message)
  if (err.status === 422) return rejectedRequest(err.message)
  return unclassifiedError(err.message)
}
