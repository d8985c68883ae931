// The one ResourceHandler every kind is served by: a ResourceDefinition plus an optional strategy.

import type { Store, StorageError } from '../storage/store.js'
import type { ResourceDefinition } from '../schema/types.js'
import { methodNotAllowed, notFound, pathNotFound } from '../errors/status-error.js'
import type {
  DecodedObject, DeleteOptions, DeleteResult, GetOptions, ListQuery, ListResult, ObjectResult, RequestContext,
  ResourceHandler, Subresource, WatchEncoder, WatchQuery, WatchSink, WatchSubscription
} from './types.js'
import { lazyResult, makeCore, parseResourceVersion, servedBytes, systemClock, waitForRevision, type Clock, type Logger, type ResourceCore } from './core.js'
import type { Strategy } from './strategy.js'
import { objectKey, resourcePrefix } from './keys.js'
import { toStatusError } from './storage-errors.js'
import { createObject } from './create.js'
import { updateInternal, updateObject, type UpdateResult } from './update.js'
import { deleteObject } from './finalizers-deletion.js'
import { listObjects } from './list.js'
import { watchObjects } from './watch.js'
import { WatchHub } from './watch-hub.js'
import { applyScale, getScale, updateScale } from './scale.js'
import { patchObject, type ApplyPatch } from './patch/patch-object.js'
import type { Obj } from './object-meta.js'
import type { MutatingAdmission, WriteAdmission } from './admission.js'
import { applyObject } from './apply/apply-object.js'

export interface GenericStoreOptions {
  store: Store
  definition: ResourceDefinition
  strategy?: Strategy
  clock?: Clock
  logger: Logger
  /** Longest wait for a requested resourceVersion to appear before 504 (default 3 s). */
  revisionWaitMs?: number
  admitNamespace?: (namespace: string, name: string) => Promise<void>
  admission?: WriteAdmission
  mutating?: MutatingAdmission
  bookmarkIntervalMs?: number
  maxPendingEvents?: number
  /** The WatchList feature gate (sendInitialEvents). */
  watchList?: boolean
  /** The upstream group names are served too (bookmarks carry both initial-events-end annotations). */
  upstreamAliases?: boolean
}

export class GenericStore implements ResourceHandler {
  readonly definition: ResourceDefinition
  readonly core: ResourceCore
  private readonly hub: WatchHub

  constructor (o: GenericStoreOptions) {
    this.definition = o.definition
    this.core = makeCore({
      def: o.definition,
      store: o.store,
      strategy: o.strategy ?? {},
      clock: o.clock ?? systemClock,
      logger: o.logger,
      revisionWaitMs: o.revisionWaitMs ?? 3000,
      admitNamespace: o.admitNamespace,
      admission: o.admission,
      mutating: o.mutating,
      watchList: o.watchList,
      upstreamAliases: o.upstreamAliases
    })
    const core = this.core
    this.hub = new WatchHub({
      store: o.store,
      prefix: resourcePrefix(o.definition),
      apiVersion: core.apiVersion,
      kind: o.definition.kind,
      logger: o.logger,
      convert: core.apiVersion === core.storedApiVersion ? undefined : (b: Buffer) => servedBytes(core, b),
      translate: (err: StorageError, from: number) => toStatusError(err, { resource: core.qr, op: 'watch', requested: from }),
      bookmarkIntervalMs: o.bookmarkIntervalMs,
      maxPending: o.maxPendingEvents
    })
  }

  /** The shared watch hub (tests and metrics). */
  get watchHub (): WatchHub { return this.hub }

  async get (_ctx: RequestContext, namespace: string, name: string, opts: GetOptions, subresource?: Subresource): Promise<ObjectResult | Buffer> {
    const rv = parseResourceVersion(opts.resourceVersion)
    if (rv !== undefined && rv > 0) await waitForRevision(this.core, rv)
    if (subresource === 'scale') return await getScale(this.core, namespace, name)
    this.checkSubresource(subresource)
    try {
      const kv = await this.core.store.get(objectKey(this.definition, namespace, name))
      if (kv === undefined) throw notFound(this.core.qr, name)
      return lazyResult(servedBytes(this.core, kv.value))
    } catch (err) {
      throw toStatusError(err, { resource: this.core.qr, name, op: 'get', requested: rv })
    }
  }

  async list (_ctx: RequestContext, namespace: string, query: ListQuery): Promise<ListResult> {
    return await listObjects(this.core, namespace, query)
  }

  async watch (_ctx: RequestContext, namespace: string, query: WatchQuery, encoder: WatchEncoder, sink: WatchSink): Promise<WatchSubscription> {
    return await watchObjects(this.core, this.hub, namespace, query, encoder, sink)
  }

  async create (ctx: RequestContext, namespace: string, body: DecodedObject): Promise<ObjectResult> {
    return await createObject(this.core, ctx, namespace, body)
  }

  async update (ctx: RequestContext, namespace: string, name: string, body: DecodedObject, subresource?: Subresource): Promise<UpdateResult> {
    if (subresource === 'scale') return await updateScale(this.core, ctx, namespace, name, body)
    this.checkSubresource(subresource)
    return await updateObject(this.core, ctx, namespace, name, body, subresource)
  }

  async patch (ctx: RequestContext, namespace: string, name: string, apply: ApplyPatch, subresource?: Subresource,
    duplicateFields: string[] = []): Promise<ObjectResult> {
    this.checkSubresource(subresource)
    return await patchObject(this.core, ctx, namespace, name, apply, subresource, duplicateFields)
  }

  async apply (ctx: RequestContext, namespace: string, name: string, config: Obj, force: boolean, subresource?: Subresource,
    duplicateFields: string[] = []): Promise<ObjectResult & { created: boolean }> {
    if (subresource === 'scale') return await applyScale(this.core, ctx, namespace, name, config, force, duplicateFields)
    this.checkSubresource(subresource)
    if (subresource === 'approval') throw methodNotAllowed('PATCH', `${this.core.qr.resource}/approval with an apply patch`)
    return await applyObject(this.core, ctx, namespace, name, { config, force, duplicateFields, subresource })
  }

  async delete (ctx: RequestContext, namespace: string, name: string, opts: DeleteOptions): Promise<DeleteResult> {
    return await deleteObject(this.core, ctx, namespace, name, opts)
  }

  async deleteCollection (ctx: RequestContext, namespace: string, query: ListQuery, opts: DeleteOptions): Promise<ListResult> {
    const listed = await listObjects(this.core, namespace, { labelSelector: query.labelSelector, fieldSelector: query.fieldSelector })
    const items: Buffer[] = []
    for (const bytes of listed.items) {
      const obj = lazyResult(bytes).object
      const meta = obj.metadata as { name: string, namespace?: string }
      try {
        items.push((await deleteObject(this.core, ctx, meta.namespace ?? '', meta.name, opts)).bytes)
      } catch (err) {
        if ((err as { code?: number }).code !== 404) throw err
      }
    }
    return { items, resourceVersion: String(this.core.store.currentRevision()), continue: '' }
  }

  /** Controllers' read-modify-write (see update.ts); undefined when the object is gone. */
  async updateInternal (ctx: RequestContext, namespace: string, name: string, mutate: (obj: Obj) => boolean,
    subresource?: 'status' | 'approval'): Promise<ObjectResult | undefined> {
    return await updateInternal(this.core, ctx, namespace, name, mutate, subresource)
  }

  /** Ends every watch of this resource. */
  stop (): void {
    this.hub.stop()
  }

  private checkSubresource (subresource: Subresource | undefined): void {
    if (subresource === 'status' && this.definition.subresources.status !== true) {
      throw pathNotFound()
    }
    if (subresource === 'approval' && this.definition.subresources.approval !== true) {
      throw pathNotFound()
    }
  }
}
