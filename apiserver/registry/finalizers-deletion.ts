// Two-phase deletion (spec 3): preconditions, propagation finalizers, graceful deletion, finalizers, removal.
// Propagation: Orphan adds the `orphan` finalizer, Foreground `foregroundDeletion`, as Kubernetes does.
// The garbage collector (garbage-collector.ts) handles those two: it orphans or deletes the dependents, then removes them.

import { conflict, notFound } from '../errors/status-error.js'
import { isStorageError } from '../storage/store.js'
import type { DeleteOptions, DeleteResult, RequestContext } from './types.js'
import { lazyResult, servedBytes, type ResourceCore } from './core.js'
import { toStatusError } from './storage-errors.js'
import { objectKey } from './keys.js'
import { metaOf, parseJson, revisionEncoder, rfc3339, type Meta, type Obj } from './object-meta.js'

export const ORPHAN_FINALIZER = 'orphan'
export const FOREGROUND_FINALIZER = 'foregroundDeletion'
const RETRIES = 10

function checkPreconditions (core: ResourceCore, name: string, meta: Meta, rv: string, opts: DeleteOptions): void {
  const p = opts.preconditions
  if (p?.uid !== undefined && p.uid !== meta.uid) {
    throw conflict(core.qr, name, `Precondition failed: UID in precondition: ${p.uid}, UID in object meta: ${meta.uid ?? ''}`)
  }
  if (p?.resourceVersion !== undefined && p.resourceVersion !== rv) {
    throw conflict(core.qr, name, `Precondition failed: ResourceVersion in precondition: ${p.resourceVersion}, ResourceVersion in object meta: ${rv}`)
  }
}

/** Adds/removes the propagation finalizers; true when the list changed. */
function applyPropagation (meta: Meta, opts: DeleteOptions): boolean {
  let policy = opts.propagationPolicy
  if (policy === undefined && opts.orphanDependents !== undefined) policy = opts.orphanDependents ? 'Orphan' : 'Background'
  if (policy === undefined) return false
  const before = meta.finalizers ?? []
  let after = before.filter(f => f !== ORPHAN_FINALIZER && f !== FOREGROUND_FINALIZER)
  if (policy === 'Orphan') after = [...after, ORPHAN_FINALIZER]
  if (policy === 'Foreground') after = [...after, FOREGROUND_FINALIZER]
  if (after.length === before.length && after.every((f, i) => f === before[i])) return false
  if (after.length === 0) delete meta.finalizers
  else meta.finalizers = after
  return true
}

/** DELETE of one object: marks it (202, deleted=false) or removes it (deleted=true). */
export async function deleteObject (core: ResourceCore, ctx: RequestContext, namespace: string, name: string,
  opts: DeleteOptions): Promise<DeleteResult> {
  const key = objectKey(core.def, namespace, name)
  for (let attempt = 1; ; attempt++) {
    const cur = await core.store.get(key)
    if (cur === undefined) throw notFound(core.qr, name)
    const obj = parseJson(cur.value)
    const meta = metaOf(obj)
    checkPreconditions(core, name, meta, String(cur.modRevision), opts)
    core.strategy.admitDelete?.(obj)
    // Mutating admission sees a DELETE too (webhooks with DELETE rules are called and may refuse), on a copy: nothing it
    // changes is stored, as in kube-apiserver, where a delete has no object to mutate.
    await core.mutating?.admit({ operation: 'DELETE', definition: core.def, namespace, name, subresource: '', object: structuredClone(obj), ctx })
    await core.admission?.admit({ operation: 'DELETE', definition: core.def, namespace, name, subresource: '', object: obj, ctx })
    try {
      const marked = await markForDeletion(core, ctx, key, obj, opts, cur.modRevision)
      if (marked !== undefined) return marked
      if (ctx.dryRun) return lazyResult(servedBytes(core, cur.value), { deleted: true })
      await core.store.delete(key, cur.modRevision)
      await runAfterDelete(core, obj)
      return lazyResult(servedBytes(core, cur.value), { deleted: true })
    } catch (err) {
      if (isStorageError(err, 'Conflict') && opts.preconditions?.resourceVersion === undefined && attempt < RETRIES) continue
      throw toStatusError(err, { resource: core.qr, name, op: 'write' })
    }
  }
}

/**
 * The first phase: when finalizers, a grace period or the strategy keep the object, sets
 * deletionTimestamp (and the grace period) and returns the kept object; undefined = remove now.
 */
async function markForDeletion (core: ResourceCore, ctx: RequestContext, key: string, obj: Obj,
  opts: DeleteOptions, modRevision: number): Promise<DeleteResult | undefined> {
  const meta = metaOf(obj)
  let changed = applyPropagation(meta, opts)
  const grace = core.strategy.gracePeriodSeconds?.(obj, opts) ?? 0
  const holds = (meta.finalizers ?? []).length > 0 || core.strategy.holdsDeletion?.(obj) === true
  if (!holds && grace === 0) return undefined
  const now = core.clock.now()
  if (meta.deletionTimestamp === undefined || meta.deletionTimestamp === null) {
    meta.deletionTimestamp = rfc3339(now + grace * 1000)
    meta.deletionGracePeriodSeconds = grace
    // Kubernetes' BeforeDelete bumps the generation only of objects that have one.
    if (typeof meta.generation === 'number' && meta.generation > 0) meta.generation += 1
    core.strategy.beginDelete?.(obj)
    changed = true
  } else if ((meta.deletionGracePeriodSeconds ?? 0) > grace) {
    meta.deletionTimestamp = rfc3339(now + grace * 1000)
    meta.deletionGracePeriodSeconds = grace
    changed = true
  }
  if (!changed || ctx.dryRun) {
    const bytes = Buffer.from(JSON.stringify(obj))
    return { bytes: servedBytes(core, bytes), object: obj, deleted: false }
  }
  const kv = await core.store.update(key, revisionEncoder(obj), modRevision)
  meta.resourceVersion = String(kv.modRevision)
  return { bytes: servedBytes(core, kv.value), object: obj, deleted: false }
}

/** After an update: removes an object whose deletion was pending and that nothing holds any more. */
export async function completeIfFinalized (core: ResourceCore, key: string, obj: Obj, modRevision: number): Promise<boolean> {
  const meta = metaOf(obj)
  if (meta.deletionTimestamp === undefined || meta.deletionTimestamp === null) return false
  if ((meta.finalizers ?? []).length > 0 || (meta.deletionGracePeriodSeconds ?? 0) !== 0) return false
  if (core.strategy.holdsDeletion?.(obj) === true) return false
  try {
    await core.store.delete(key, modRevision)
  } catch (err) {
    if (isStorageError(err, 'NotFound') || isStorageError(err, 'Conflict')) return false
    throw err
  }
  await runAfterDelete(core, obj)
  return true
}

async function runAfterDelete (core: ResourceCore, obj: Obj): Promise<void> {
  try {
    await core.strategy.afterDelete?.(obj)
  } catch (err) {
    core.logger.warn({ err, resource: core.qr.resource, name: metaOf(obj).name }, 'after-delete hook failed')
  }
}
