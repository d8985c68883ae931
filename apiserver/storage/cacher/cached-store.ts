// A watch cache in front of a store: LISTs and watches that may be served from memory are, per resource, as kube-apiserver's cacher.
import type { Encoder, KeyValue, ListOptions, ListResult, Revision, SpaceStatus, Store, WatchCallbacks, WatchHandle } from '../store.js'
import { ResourceCache, type ResourceCacheOptions } from './resource-cache.js'

export interface CachedStoreOptions extends ResourceCacheOptions {
  /** The ConsistentListFromCache feature gate (alpha in v1.29, off by default). */
  consistentListFromCache: boolean
  /** The resource prefix a list prefix belongs to (one cache each); undefined: not cached. Default: registry keys. */
  resourceOf?: (prefix: string) => string | undefined
  /** Longest wait for the cache to reach the revision a read needs before it reads the store (default 3 s). */
  waitMs?: number
}

/** `/<group>/<plural>/...` → `/<group>/<plural>/` (registry/keys.ts); anything shorter is not one resource. */
export function registryResourceOf (prefix: string): string | undefined {
  const m = /^(\/[^/]+\/[^/]+\/)/.exec(prefix)
  return m?.[1]
}

export interface CacheStats {
  /** LISTs answered from a cache. */
  fromCache: number
  /** LISTs that could have been, read from the store because the cache did not catch up in time. */
  fallbacks: number
  /** Watches served from a cache's events. */
  watchesFromCache: number
  /** Gets (with notOlderThan) answered from a cache. */
  getsFromCache: number
}

/**
 * Which LISTs a cache answers (kube-apiserver v1.29's rules): resourceVersion "0" and NotOlderThan (`notOlderThan`),
 * once the cache reached that revision; consistent ones (no resourceVersion) only with ConsistentListFromCache, no
 * limit and a store whose progress answers never run ahead of its events (etcd 3.4.24 / 3.5.8 on), once the cache reached the store's latest revision (asked of the store by a cheap read; the cache catches up
 * on a quiet resource through progress notifications), or from the store when it did not within `waitMs`. Exact
 * revisions and continue pages read the store. The pages of a selector scan after the first come from the same cached
 * snapshot. Watches are served from the cache's events when it holds them all. Gets with `notOlderThan` come from the
 * cache once it reached that revision; writes and other gets go to the store.
 */
export class CachedStore implements Store {
  /** The inner store's (see Store.reliableProgress). */
  get reliableProgress (): boolean | undefined { return this.inner.reliableProgress }

  readonly stats: CacheStats = { fromCache: 0, fallbacks: 0, watchesFromCache: 0, getsFromCache: 0 }
  private readonly caches = new Map<string, ResourceCache>()
  private readonly resourceOf: (prefix: string) => string | undefined
  private closed = false

  constructor (private readonly inner: Store, private readonly o: CachedStoreOptions) {
    this.resourceOf = o.resourceOf ?? registryResourceOf
  }

  currentRevision (): Revision { return this.inner.currentRevision() }
  compactedRevision (): Revision { return this.inner.compactedRevision() }
  /**
   * A get with `notOlderThan` (no revision) from the resource's cache once it reached that revision (the first such get
   * starts the cache); any other get, and one the cache cannot answer yet, from the store.
   */
  async get (key: string, opts?: { revision?: Revision, notOlderThan?: Revision }): Promise<KeyValue | undefined> {
    const resource = this.closed || opts?.notOlderThan === undefined || opts.revision !== undefined ? undefined : this.resourceOf(key)
    if (resource === undefined) return await this.inner.get(key, opts === undefined ? undefined : { revision: opts.revision })
    const cached = this.cacheOf(resource).get(key)
    if (cached !== undefined && cached.revision >= opts!.notOlderThan!) { this.stats.getsFromCache++; return cached.found }
    return await this.inner.get(key)
  }
  count (prefix: string): Promise<number> { return this.inner.count(prefix) }
  create (key: string, encode: Encoder): Promise<KeyValue> { return this.inner.create(key, encode) }
  update (key: string, encode: Encoder, expected?: Revision): Promise<KeyValue> { return this.inner.update(key, encode, expected) }
  delete (key: string, expected?: Revision): Promise<KeyValue> { return this.inner.delete(key, expected) }
  compact (revision: Revision): Promise<void> { return this.inner.compact(revision) }
  space (): SpaceStatus { return this.inner.space() }
  onSpaceChange (listener: (status: SpaceStatus) => void): () => void { return this.inner.onSpaceChange(listener) }

  async latestRevision (prefix: string): Promise<Revision> {
    return this.inner.latestRevision !== undefined ? await this.inner.latestRevision(prefix) : this.inner.currentRevision()
  }

  async list (prefix: string, opts: ListOptions = {}): Promise<ListResult> {
    const resource = this.closed ? undefined : this.resourceOf(prefix)
    if (resource === undefined) return await this.inner.list(prefix, opts)
    const scan = opts.scan === true
    if (opts.revision !== undefined) {
      // The next page of a scan: from the snapshot its first page came from, while the cache keeps it.
      const page = scan ? this.caches.get(resource)?.list(prefix, opts) : undefined
      if (page !== undefined) { this.stats.fromCache++; return page }
      return await this.inner.list(prefix, opts)
    }
    if (opts.startKey !== undefined && !scan) return await this.inner.list(prefix, opts)
    let needed: Revision
    if (opts.notOlderThan !== undefined) {
      needed = opts.notOlderThan
    } else {
      if (!this.o.consistentListFromCache || ((opts.limit ?? 0) > 0 && !scan)) return await this.inner.list(prefix, opts)
      // The cache could only catch up on a quiet resource by progress answers the store may send too early.
      if (this.inner.reliableProgress === false) return await this.inner.list(prefix, opts)
      needed = await this.latestRevision(prefix)
    }
    const cache = this.cacheOf(resource)
    if (await cache.waitFor(needed, this.o.waitMs ?? 3000)) {
      const res = cache.list(prefix, { startKey: opts.startKey, limit: opts.limit })
      if (res !== undefined) { this.stats.fromCache++; return res }
    }
    this.stats.fallbacks++
    this.o.log?.(`watch cache of ${resource} did not reach revision ${needed} in time; listing from the store`)
    return await this.inner.list(prefix, opts)
  }

  /**
   * From the resource's cache when it holds every event after `from` (and `from` is not compacted away); else from the
   * store, and the cache starts (its first LIST and watch) for the watches after.
   */
  watch (prefix: string, from: Revision, callbacks: WatchCallbacks): WatchHandle {
    const resource = this.closed ? undefined : this.resourceOf(prefix)
    if (resource !== undefined && from >= this.inner.compactedRevision()) {
      const handle = this.cacheOf(resource).watch(prefix, from, callbacks)
      if (handle !== undefined) { this.stats.watchesFromCache++; return handle }
    }
    return this.inner.watch(prefix, from, callbacks)
  }

  async close (): Promise<void> {
    this.closed = true
    for (const c of this.caches.values()) c.stop()
    this.caches.clear()
    await this.inner.close()
  }

  private cacheOf (resource: string): ResourceCache {
    let c = this.caches.get(resource)
    if (c === undefined) {
      c = new ResourceCache(this.inner, resource, this.o)
      this.caches.set(resource, c)
    }
    return c
  }
}
