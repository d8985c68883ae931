// PATCH in the registry: read the current object, apply the patch, write the result through the update path.
// The update path owns every rule (defaults, validation, field validation, dry-run, status vs spec, scale);
// this loop only supplies the object and retries when another writer got in between.

import { badRequest, conflict, isStatusError, notFound } from '../../errors/status-error.js'
import type { ObjectResult, RequestContext, Subresource } from '../types.js'
import { servedBytes, type ResourceCore } from '../core.js'
import { objectKey } from '../keys.js'
import { metaOf, parseJson, type Obj } from '../object-meta.js'
import { CONFLICT_MESSAGE } from '../storage-errors.js'
import { updateObject } from '../update.js'
import { getScale, updateScale } from '../scale.js'

const RETRIES = 10

export type ApplyPatch = (current: Obj) => Obj

/**
 * Applies `apply` to the current object and writes the result as an update conditioned on the version read.
 * A `metadata.resourceVersion` the patch sets is a precondition (409 when it is not the current one); without
 * one, a conflict with a concurrent writer re-reads and re-applies the patch.
 */
export async function patchObject (core: ResourceCore, ctx: RequestContext, namespace: string, name: string,
  apply: ApplyPatch, subresource?: Subresource, duplicateFields: string[] = []): Promise<ObjectResult> {
  const warningsBefore = ctx.warnings.length
  for (let attempt = 1; ; attempt++) {
    ctx.warnings.length = warningsBefore // a retried attempt reports its own warnings only
    const current = await readCurrent(core, namespace, name, subresource)
    const currentRv = metaOf(current).resourceVersion
    const patched = apply(current)
    if (patched === null || typeof patched !== 'object' || Array.isArray(patched)) {
      throw badRequest('the patched document is not a JSON object')
    }
    const meta = patchedMeta(patched)
    dropEmptyMetaFields(meta)
    if (meta.resourceVersion === undefined || meta.resourceVersion === null || meta.resourceVersion === '') {
      meta.resourceVersion = currentRv
    } else if (meta.resourceVersion !== currentRv) {
      throw conflict(core.qr, name, CONFLICT_MESSAGE)
    }
    try {
      const body = { object: patched, duplicateFields }
      if (subresource === 'scale') return await updateScale(core, ctx, namespace, name, body)
      return await updateObject(core, ctx, namespace, name, body, subresource)
    } catch (err) {
      if (isStatusError(err) && err.code === 409 && err.reason === 'Conflict' && attempt < RETRIES) continue
      throw err
    }
  }
}

/** The object the patch applies to, in served form with its resourceVersion; 404 when missing. */
async function readCurrent (core: ResourceCore, namespace: string, name: string, subresource?: Subresource): Promise<Obj> {
  if (subresource === 'scale') return parseJson(await getScale(core, namespace, name))
  const kv = await core.store.get(objectKey(core.def, namespace, name))
  if (kv === undefined) throw notFound(core.qr, name)
  const obj = parseJson(servedBytes(core, kv.value))
  metaOf(obj).resourceVersion = String(kv.modRevision)
  return obj
}

/**
 * A patch that removes the last label leaves `labels: {}`; kube-apiserver's typed ObjectMeta omits empty
 * maps and lists when it encodes, so the stored object has no `labels` at all. Same here.
 */
function dropEmptyMetaFields (meta: Record<string, unknown>): void {
  for (const f of ['labels', 'annotations', 'finalizers', 'ownerReferences']) {
    const v = meta[f]
    if (v !== null && typeof v === 'object' && Object.keys(v).length === 0) delete meta[f]
  }
}

function patchedMeta (obj: Obj): Record<string, unknown> & { resourceVersion?: unknown } {
  const meta = obj.metadata
  if (meta === undefined || meta === null) {
    const fresh = {}
    obj.metadata = fresh
    return fresh
  }
  if (typeof meta !== 'object' || Array.isArray(meta)) throw badRequest('metadata: Invalid value: must be an object')
  return meta as Record<string, unknown>
}
