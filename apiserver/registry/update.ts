// Update (PUT) of the main resource and of /status: merge with the stored object, immutable fields, generation, the write.
// A status write replaces only `status` (the rest is taken from the stored object, as for custom resources);
// a main write keeps the stored `status` when the kind has a status subresource.

import { badRequest, conflict, invalid, notFound, type StatusCause } from '../errors/status-error.js'
import { encoderWithSource, isStorageError, type KeyValue } from '../storage/store.js'
import type { DecodedObject, ObjectResult, RequestContext } from './types.js'
import { managerOf, servedBytes, servedObject, storedObject, type ResourceCore } from './core.js'
import { CONFLICT_MESSAGE, toStatusError } from './storage-errors.js'
import { objectKey } from './keys.js'
import { canonical, metaOf, sameContent, parseJson, rewriteResourceVersion, tracksGeneration, type Obj } from './object-meta.js'
import { checkNamespace, checkTypeMeta, defaultObject, fieldValidation, finishValidation, validationErrors } from './write-checks.js'
import { createObject, finish } from './create.js'
import { completeIfFinalized } from './finalizers-deletion.js'
import { cloneJson } from './patch/json-pointer.js'

const UNCONDITIONAL_RETRIES = 10

export type UpdateResult = ObjectResult & { created: boolean }

export interface UpdateOptions {
  /** A controller's write (finalizer rules relaxed). */
  internal?: boolean
  /** Managed fields are already set (server-side apply computed them). */
  tracked?: boolean
  /** The subresource the write came through, for its managed-fields entry (`scale` writes the main object). */
  managerSubresource?: string
  /**
   * The stored object as the caller already read it (server-side apply): used on the first attempt instead of
   * reading and parsing it again. `object` is the served form of `kv` and must not share anything with the body.
   */
  current?: { kv: KeyValue; object: Obj }
  /** The body holds no unknown fields (server-side apply refused them and merged into the stored object). */
  checkedFields?: boolean
  /**
   * `current.object` is what this handler stored after validating it with its schema (a revision its server-side
   * apply wrote; JSON as stored): the parts of the update equal to it are not schema-validated again (but for
   * metadata, which changed after validation, and status, which the update shares with the stored object).
   */
  validatedCurrent?: boolean
}

/** PUT on the main resource or on /status. */
export async function updateObject (core: ResourceCore, ctx: RequestContext, namespace: string, name: string,
  body: DecodedObject, subresource: 'status' | 'approval' | undefined, opts: UpdateOptions = {}): Promise<UpdateResult> {
  const internal = opts.internal === true
  // Read from `opts` once, so the write's wait does not hold the stored object given (`opts.current`): see `given`.
  const tracked = opts.tracked === true
  const tracking: Tracking | undefined = tracked ? undefined : { manager: managerOf(ctx), subresource: opts.managerSubresource ?? subresource ?? '' }
  let current = opts.current
  const validatedCurrent = opts.validatedCurrent === true
  const obj = body.object
  checkTypeMeta(core, obj)
  checkNamespace(core, obj, namespace)
  const meta = metaOf(obj)
  if (meta.name !== name) {
    throw badRequest(`the name of the object (${meta.name ?? ''}) does not match the name on the URL (${name})`)
  }
  // A built-in kind's server-side apply checked its configuration for unknown fields, and the rest is stored.
  const strict = opts.checkedFields === true && core.def.custom === undefined ? [] : fieldValidation(core, ctx, body)
  const key = objectKey(core.def, namespace, name)
  const wantRv = meta.resourceVersion !== undefined && meta.resourceVersion !== '' ? meta.resourceVersion : undefined
  // An unconditional update may be retried on conflicts: each attempt starts from the object as sent.
  const pristine = wantRv === undefined ? cloneJson(obj) : undefined
  for (let attempt = 1; ; attempt++) {
    const sent = attempt === 1 || pristine === undefined ? obj : cloneJson(pristine)
    // Used once: nothing left referring to the stored object (a copy as large as the object) while the write waits
    // for its commit, so the many writes in flight do not keep their copies alive through young-generation GCs.
    const given = attempt === 1 ? current : undefined
    current = undefined
    const cur = given?.kv ?? await core.store.get(key)
    if (cur === undefined) {
      if (core.def.allowCreateOnUpdate && subresource === undefined && wantRv === undefined) {
        const created = await createObject(core, ctx, namespace, { object: sent, duplicateFields: [] }, { name, internal })
        return { ...created, created: true }
      }
      throw notFound(core.qr, name)
    }
    if (wantRv !== undefined && wantRv !== String(cur.modRevision)) throw conflict(core.qr, name, CONFLICT_MESSAGE)
    const old = given?.object ?? servedObject(core, parseJson(cur.value))
    // An approval write starts like a status write; the strategy keeps only its conditions (strategies/csr.ts).
    const next = subresource === 'status' || subresource === 'approval' ? withStatusOf(old, sent) : withStoredStatus(core, sent, old)
    if (subresource === 'status' && tracked) metaOf(next).managedFields = metaOf(sent).managedFields
    const valid = given !== undefined && validatedCurrent ? { ...given.object, metadata: undefined, status: undefined } : undefined
    await prepareUpdate(core, ctx, next, old, strict, internal, tracking, subresource, valid)
    if (core.admission !== undefined && !internal) {
      await core.admission.admit({ operation: 'UPDATE', definition: core.def, namespace, name, subresource: subresource ?? '', object: next, oldObject: old, ctx })
    }
    try {
      return { ...await writeUpdate(core, ctx, key, next, cur), created: false }
    } catch (err) {
      if (isStorageError(err, 'Conflict') && wantRv === undefined && attempt < UNCONDITIONAL_RETRIES) continue
      throw toStatusError(err, { resource: core.qr, name, op: 'write' })
    }
  }
}

function withStatusOf (old: Obj, incoming: Obj): Obj {
  const next = cloneJson(old)
  if (incoming.status === undefined) delete next.status
  else next.status = cloneJson(incoming.status)
  return next
}

function withStoredStatus (core: ResourceCore, next: Obj, old: Obj): Obj {
  if (core.def.subresources.status === true) {
    if (old.status === undefined) delete next.status
    else next.status = old.status
  }
  return next
}

/** The managed-fields entry a write records (undefined: managed fields are already set, as by server-side apply). */
interface Tracking { manager: string, subresource: string }

/** System fields from the stored object, immutability and finalizer rules, defaults, strategy, validation. */
async function prepareUpdate (core: ResourceCore, ctx: RequestContext, next: Obj, old: Obj, strict: string[], internal: boolean,
  tracking: Tracking | undefined, subresource?: 'status' | 'approval', valid?: Obj): Promise<void> {
  const meta = metaOf(next)
  const oldMeta = metaOf(old)
  const errs: StatusCause[] = []
  if (meta.uid === undefined || meta.uid === '') meta.uid = oldMeta.uid
  else if (meta.uid !== oldMeta.uid) errs.push(immutable('metadata.uid', meta.uid))
  for (const f of ['creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'generateName'] as const) {
    if (oldMeta[f] === undefined || oldMeta[f] === null) delete meta[f]
    else meta[f] = oldMeta[f] as never
  }
  const generation = tracksGeneration(core.def)
  if (generation) meta.generation = oldMeta.generation ?? 1
  else if (oldMeta.generation === undefined) delete meta.generation
  else meta.generation = oldMeta.generation
  if (oldMeta.deletionTimestamp && !internal) {
    const added = (meta.finalizers ?? []).filter(f => !(oldMeta.finalizers ?? []).includes(f))
    if (added.length > 0) {
      errs.push({ reason: 'FieldValueForbidden', field: 'metadata.finalizers',
        message: `Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{${added.map(f => JSON.stringify(f)).join(', ')}}` })
    }
  }
  defaultObject(core, next)
  if (tracking !== undefined) core.fieldManager.update(old, next, tracking.manager, tracking.subresource)
  await core.strategy.prepareForUpdate?.(next, old, { ctx, now: core.clock.now(), internal, subresource })
  if (core.mutating !== undefined && !internal) {
    await core.mutating.admit({ operation: 'UPDATE', definition: core.def, namespace: meta.namespace ?? '', name: meta.name ?? '', subresource: subresource ?? '', object: next, oldObject: old, ctx })
  }
  const fieldErrs = await validationErrors(core, next, old, internal, valid)
  finishValidation(core, meta.name ?? '', strict, fieldErrs)
  if (errs.length > 0) throw invalid(core.def.group, core.def.kind, meta.name ?? '', errs)
  const statusSub = core.def.subresources.status === true
  if (generation && !sameContent(next, old, statusSub)) meta.generation = (oldMeta.generation ?? 1) + 1
}

function immutable (field: string, value: unknown): StatusCause {
  return { reason: 'FieldValueInvalid', field, message: `Invalid value: ${JSON.stringify(value)}: field is immutable` }
}

/** Writes `next` over `cur` (skipped when nothing changed), then completes a finalized deletion. */
async function writeUpdate (core: ResourceCore, ctx: RequestContext, key: string, next: Obj, cur: KeyValue): Promise<ObjectResult> {
  const stored = canonical(storedObject(core, next), core.storedApiVersion, core.def.kind)
  metaOf(stored).resourceVersion = String(cur.modRevision)
  // JSON.stringify, but for the managed-fields entries the field manager already has the text of (most of them).
  const same = core.fieldManager.serialize(stored)
  if (same.equals(cur.value)) {
    // Nothing to write, but a finalized object left behind (a crash between its last finalizer's removal
    // and its delete) is removed now, so it cannot stay Terminating.
    if (!ctx.dryRun) await completeIfFinalized(core, key, stored, cur.modRevision)
    return finish(core, stored, cur.value)
  }
  if (ctx.dryRun) return finish(core, stored, same)
  // Serialized once: the commit revision is spliced into the bytes already made for the comparison.
  const kv = await core.store.update(key, encoderWithSource(revision => rewriteResourceVersion(same, String(revision)), stored), cur.modRevision)
  metaOf(stored).resourceVersion = String(kv.modRevision)
  const result = finish(core, stored, kv.value)
  await completeIfFinalized(core, key, stored, kv.modRevision)
  return result
}

/**
 * Controllers' read-modify-write: `mutate` edits the parsed object (return false for no change);
 * retried on conflicts; bypasses field validation but not schema validation.
 */
export async function updateInternal (core: ResourceCore, ctx: RequestContext, namespace: string, name: string,
  mutate: (obj: Obj) => boolean, subresource?: 'status' | 'approval'): Promise<ObjectResult | undefined> {
  const key = objectKey(core.def, namespace, name)
  for (let attempt = 1; attempt <= UNCONDITIONAL_RETRIES; attempt++) {
    const cur = await core.store.get(key)
    if (cur === undefined) return undefined
    const obj = servedObject(core, parseJson(cur.value))
    if (!mutate(obj)) return { bytes: servedBytes(core, cur.value), object: obj }
    try {
      return await updateObject(core, ctx, namespace, name, { object: obj, duplicateFields: [] }, subresource, { internal: true })
    } catch (err) {
      if (err instanceof Error && 'code' in err && err.code === 409 && attempt < UNCONDITIONAL_RETRIES) {
        // Busy objects (a pod whose status changes often): a short, growing pause before re-reading.
        await new Promise(resolve => setTimeout(resolve, attempt * 3))
        continue
      }
      if (err instanceof Error && 'code' in err && err.code === 404) return undefined
      throw err
    }
  }
  return undefined
}
