// Server-side apply in the registry: check the configuration, merge it into the current object through the kind's
// field manager, and write the result through the create or update path (which own defaults, validation, dry-run).
// A no-op apply writes nothing and answers the stored object.

import { badRequest, conflict, isStatusError, notFound } from '../../errors/status-error.js'
import { CONFLICT_MESSAGE } from '../storage-errors.js'
import { lazyResult, servedBytes, type ResourceCore } from '../core.js'
import { RecentNoopApplies } from './recent-noops.js'
import { createObject } from '../create.js'
import { objectKey } from '../keys.js'
import { metaOf, parseJson, type Obj } from '../object-meta.js'
import type { ObjectResult, RequestContext } from '../types.js'
import { updateObject } from '../update.js'
import { pruneUnknownFields } from '../../schema/unknown-fields.js'
import { cloneJson } from '../patch/json-pointer.js'
import type { KeyValue } from '../../storage/store.js'
import { parseAroundEntries } from './managed-fields-text.js'
import { entriesFromWritten, type WrittenManagers } from './written-managers.js'

const RETRIES = 10

export interface ApplyRequest {
  config: Obj
  force: boolean
  /** Duplicate keys the YAML decoder met (reported per fieldValidation). */
  duplicateFields: string[]
  subresource?: 'status'
  /** The subresource the managed-fields entry records when it is not `subresource` (`scale`: the main object is applied). */
  entrySubresource?: string
  /** 404 instead of creating a missing object (applies through a subresource). */
  mustExist?: boolean
}

/** Applies `req.config` as `ctx.fieldManager`; creates the object when missing (main resource only). */
export async function applyObject (core: ResourceCore, ctx: RequestContext, namespace: string, name: string,
  req: ApplyRequest): Promise<ObjectResult & { created: boolean }> {
  const manager = ctx.fieldManager ?? ''
  const key = objectKey(core.def, namespace, name)
  const sub = req.entrySubresource ?? req.subresource ?? ''
  // The configuration as sent (checking works on a copy): a repeat of an apply found to change nothing at this
  // revision is answered from the store, before any checking or merging (it passed them the first time).
  let digested: string | undefined
  const digest = (): string => (digested ??= RecentNoopApplies.digest(req.config))
  const current = await core.store.get(key)
  if (current !== undefined && core.noopApplies.has(key, current.modRevision, manager, sub, req.force, digest)) {
    // Not spread: spreading would read the lazy `object` and parse the bytes this path exists to skip.
    return lazyResult(servedBytes(core, current.value), { created: false })
  }
  // Unknown fields are refused below whatever fieldValidation says (apply needs a schema); the write then skips the check.
  const writeCtx: RequestContext = { ...ctx, fieldValidation: 'Ignore' }
  // Checked on a copy; the merge may hand parts of it to the object written (which defaulting then changes), so a
  // retry starts again from the configuration as sent.
  const checked = (): Obj => checkConfig(core, namespace, name, cloneJson(req.config))
  let config = checked()
  const want = metaOf(config).resourceVersion
  for (let attempt = 1; ; attempt++) {
    if (attempt > 1) config = checked()
    const kv = attempt === 1 ? current : await core.store.get(key)
    if (kv === undefined && (req.subresource !== undefined || req.mustExist === true)) throw notFound(core.qr, name)
    // What this handler's last apply stored, when it is still the stored revision: its managers (not decoded again),
    // and that it passed this handler's schema validation as stored (unchanged parts are not validated again).
    const kept = kv === undefined ? undefined : core.revisionManagers.get(key, kv.modRevision)
    if (kv !== undefined && want !== undefined && want !== '' && want !== String(kv.modRevision)) {
      throw conflict(core.qr, name, CONFLICT_MESSAGE)
    }
    // The stored object, and a copy of it for the update path made before the merge shares parts of `live` with
    // what it returns.
    const read = kv === undefined ? undefined : readStored(core, kv, kept)
    const live = read?.live
    const old = read === undefined || kv === undefined ? undefined : { kv, object: read.copy }
    const next = core.fieldManager.apply(live, config, manager, req.force, req.subresource, sub, kept)
    if (next === undefined && live !== undefined && kv !== undefined) {
      core.noopApplies.remember(key, kv.modRevision, manager, sub, req.force, digest())
      return { bytes: servedBytes(core, kv.value), object: live, created: false }
    }
    const body = { object: next as Obj, duplicateFields: req.duplicateFields }
    try {
      if (live === undefined) {
        return { ...await createObject(core, writeCtx, namespace, body, { name, tracked: true }), created: true }
      }
      if (want === undefined || want === '') metaOf(body.object).resourceVersion = String(kv?.modRevision)
      const updated = await updateObject(core, writeCtx, namespace, name, body, req.subresource, { tracked: true, current: old, checkedFields: true, validatedCurrent: kept !== undefined })
      return keep(core, ctx, key, updated)
    } catch (err) {
      const retry = isStatusError(err) && ((err.code === 409 && err.reason === 'Conflict' && (want === undefined || want === '')) ||
        (err.code === 409 && err.reason === 'AlreadyExists'))
      if (retry && attempt < RETRIES) continue
      throw err
    }
  }
}

/**
 * Keeps the managers of what an apply's update stored for the next apply. The update's result object is what the
 * update path serialized as the stored bytes (when this handler serves the stored version), so managedFields the
 * field manager encoded and finds unchanged there are the ones stored at its resourceVersion.
 */
function keep (core: ResourceCore, ctx: RequestContext, key: string, updated: ObjectResult & { created: boolean }): ObjectResult & { created: boolean } {
  if (ctx.dryRun || core.apiVersion !== core.storedApiVersion) return updated
  const revision = Number(metaOf(updated.object).resourceVersion)
  const managers = core.fieldManager.writtenManagers(updated.object)
  if (Number.isSafeInteger(revision) && managers !== undefined) core.revisionManagers.put(key, revision, managers)
  return updated
}

/**
 * The stored object at this handler's version with its resourceVersion, and a copy. When `kept` knows the text its
 * managedFields were stored as, the bytes are parsed around them and both get entries rebuilt from what was written
 * (sharing its FieldsV1 trees, which are never edited in place); otherwise the bytes are parsed whole and copied.
 */
function readStored (core: ResourceCore, kv: KeyValue, kept: WrittenManagers | undefined): { live: Obj, copy: Obj } {
  const around = kept?.text === undefined || core.apiVersion !== core.storedApiVersion ? undefined : parseAroundEntries(kv.value, kept.text)
  if (around === undefined || kept === undefined) {
    const live = parseJson(servedBytes(core, kv.value))
    metaOf(live).resourceVersion = String(kv.modRevision)
    return { live, copy: cloneJson(live) }
  }
  metaOf(around).resourceVersion = String(kv.modRevision)
  const copy = cloneJson(around)
  metaOf(around).managedFields = entriesFromWritten(kept)
  metaOf(copy).managedFields = entriesFromWritten(kept)
  return { live: around, copy }
}

/** What kube-apiserver refuses before merging: managedFields, a wrong apiVersion/kind/name, unknown fields. */
function checkConfig (core: ResourceCore, namespace: string, name: string, config: Obj): Obj {
  if (config.apiVersion !== core.apiVersion) {
    throw badRequest(`Incorrect version specified in apply patch. Specified patch version: ${String(config.apiVersion ?? '')}, expected: ${core.apiVersion}`)
  }
  if (config.kind !== core.def.kind) {
    throw badRequest(`Incorrect kind specified in apply patch. Specified patch kind: ${String(config.kind ?? '')}, expected: ${core.def.kind}`)
  }
  const meta = config.metadata
  if (meta === null || typeof meta !== 'object' || Array.isArray(meta)) throw badRequest('metadata: Invalid value: must be an object')
  const m = meta as Record<string, unknown>
  if (m.managedFields !== undefined && m.managedFields !== null) throw badRequest('metadata.managedFields must be nil')
  if (m.name === undefined || m.name === null || m.name === '') m.name = name
  else if (m.name !== name) {
    throw badRequest(`the name of the object (${String(m.name)}) does not match the name on the URL (${name})`)
  }
  if (core.def.namespaced && m.namespace !== undefined && m.namespace !== '' && m.namespace !== namespace) {
    throw badRequest('the namespace of the provided object does not match the namespace sent on the request')
  }
  if (core.def.namespaced && (m.namespace === undefined || m.namespace === '')) m.namespace = namespace
  const preserve = core.def.custom?.preserveUnknownFieldsAtRoot === true
  const unknown = pruneUnknownFields(core.def, config)
  if (!preserve && unknown.length > 0) {
    const gvk = `${core.apiVersion}, Kind=${core.def.kind}`
    const errs = unknown.map(f => `.${f}: field not declared in schema`)
    const why = errs.length === 1 ? errs[0] : `errors:\n  ${errs.join('\n  ')}`
    throw badRequest(`failed to create typed patch object (${namespace}/${name}; ${gvk}): ${why}`)
  }
  return config
}
