// Create (POST, and PUT on a missing object where allowed): names, uid, timestamps, defaults, validation, the write.

import { randomUUID } from 'node:crypto'
import { alreadyExists, badRequest } from '../errors/status-error.js'
import { isStorageError } from '../storage/store.js'
import type { DecodedObject, ObjectResult, RequestContext } from './types.js'
import { managerOf, servedBytes, servedObject, storedObject, type ResourceCore } from './core.js'
import { toStatusError } from './storage-errors.js'
import { objectKey } from './keys.js'
import { canonical, generatedName, metaOf, randomSuffix, revisionEncoder, rfc3339, tracksGeneration, type Obj } from './object-meta.js'
import { checkNamespace, checkTypeMeta, defaultObject, fieldValidation, finishValidation, validationErrors } from './write-checks.js'

const GENERATE_NAME_ATTEMPTS = 8

export interface CreateOptions {
  /** Name from the URL (PUT create-on-update): the body must agree. */
  name?: string
  internal?: boolean
  /** Managed fields are already set (server-side apply computed them). */
  tracked?: boolean
}

/** Runs every create stage; writes unless dry-run. */
export async function createObject (core: ResourceCore, ctx: RequestContext, namespace: string,
  body: DecodedObject, opts: CreateOptions = {}): Promise<ObjectResult> {
  const obj = body.object
  checkTypeMeta(core, obj)
  checkNamespace(core, obj, namespace)
  const strict = fieldValidation(core, ctx, body)
  const meta = metaOf(obj)
  if (meta.resourceVersion !== undefined && meta.resourceVersion !== '') {
    throw badRequest('resourceVersion should not be set on objects to be created')
  }
  const now = core.clock.now()
  meta.uid = randomUUID()
  meta.creationTimestamp = rfc3339(now)
  if (tracksGeneration(core.def)) meta.generation = 1
  else delete meta.generation
  delete meta.deletionTimestamp
  delete meta.deletionGracePeriodSeconds
  if (core.def.subresources.status === true && core.strategy.keepsStatusOnCreate !== true) delete obj.status
  defaultObject(core, obj)
  if (opts.tracked !== true) core.fieldManager.update(undefined, obj, managerOf(ctx))
  const sc = { ctx, now, internal: opts.internal === true }
  await core.strategy.prepareForCreate?.(obj, sc)
  const generate = (meta.name === undefined || meta.name === '') && typeof meta.generateName === 'string' && meta.generateName !== ''
  if (generate) meta.name = generatedName(meta.generateName as string, randomSuffix())
  if (core.mutating !== undefined && opts.internal !== true) {
    await core.mutating.admit({ operation: 'CREATE', definition: core.def, namespace: meta.namespace ?? '', name: meta.name ?? '', subresource: '', object: obj, ctx })
  }
  finishValidation(core, meta.name ?? '', strict, await validationErrors(core, obj))
  if (core.def.namespaced && core.admitNamespace) await core.admitNamespace(meta.namespace ?? '', meta.name ?? '')
  await core.strategy.admitCreate?.(obj, sc)
  if (core.admission !== undefined && opts.internal !== true) {
    await core.admission.admit({ operation: 'CREATE', definition: core.def, namespace: meta.namespace ?? '', name: meta.name ?? '', subresource: '', object: obj, ctx })
  }
  return await writeNew(core, ctx, obj, generate)
}

async function writeNew (core: ResourceCore, ctx: RequestContext, obj: Obj, generate: boolean): Promise<ObjectResult> {
  for (let attempt = 1; ; attempt++) {
    const stored = canonical(storedObject(core, obj), core.storedApiVersion, core.def.kind)
    const meta = metaOf(stored)
    const name = meta.name as string
    const key = objectKey(core.def, meta.namespace ?? '', name)
    try {
      if (ctx.dryRun) {
        if (await core.store.get(key) !== undefined) throw alreadyExists(core.qr, name)
        delete meta.resourceVersion
        const served = servedObject(core, stored)
        return { bytes: Buffer.from(JSON.stringify(served)), object: served }
      }
      // The stored bytes as the store returns them: a store may learn the revision only from the commit.
      const kv = await core.store.create(key, revisionEncoder(stored))
      meta.resourceVersion = String(kv.modRevision)
      return finish(core, stored, kv.value)
    } catch (err) {
      const exists = isStorageError(err, 'KeyExists') || (err instanceof Error && 'reason' in err && err.reason === 'AlreadyExists')
      if (generate && exists && attempt < GENERATE_NAME_ATTEMPTS) {
        metaOf(obj).name = generatedName(metaOf(obj).generateName as string, randomSuffix())
        continue
      }
      throw toStatusError(err, { resource: core.qr, name, op: 'write' })
    }
  }
}

/** The result of a write: stored bytes (converted to the served version if needed) and the object. */
export function finish (core: ResourceCore, stored: Obj, bytes: Buffer): ObjectResult {
  if (core.apiVersion === core.storedApiVersion) return { bytes, object: stored }
  return { bytes: servedBytes(core, bytes), object: servedObject(core, stored) }
}

