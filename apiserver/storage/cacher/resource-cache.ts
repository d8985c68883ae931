// The watch cache of one resource: its full current state in memory, kept by one store watch, sorted snapshots for
// LISTs, and the watchers it serves from memory.
import { StorageError, type KeyValue, type ListResult, type Revision, type Store, type WatchCallbacks, type WatchEvent, type WatchHandle } from '../store.js'
import { CacheWatchers } from './cache-watchers.js'

export interface ResourceCacheOptions {
  /** Page size of the initial LIST (default 1000). */
  pageSize?: number
  /** How often a waiting read asks the watch for a progress notification (default 50 ms). */
  progressEveryMs?: number
  /** Delay before the cache lists and watches again after its watch ended (default 1000 ms). */
  restartMs?: number
  /** Recent events kept for watchers starting in the past (between this and twice this; default 4096). */
  ringSize?: number
  log?: (msg: string) => void
}

interface Snapshot {
  revision: Revision
  /** The cache's change count it was taken at: a later revision with no change shares its items. */
  changes: number
  /** Every live key under the resource prefix, in key order. */
  items: KeyValue[]
}

interface Waiter {
  revision: Revision
  resolve: (reached: boolean) => void
}

/** How many sorted snapshots stay for the pages of one scan (each is only references to the cached values). */
const SNAPSHOTS_KEPT = 4

const byKey = (a: KeyValue, b: KeyValue): number => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)

/**
 * Lists the resource prefix (in pages, at one revision), then watches it from that revision: every event updates the
 * map and moves `revision`, and so does every progress notification (nothing changed under the prefix up to it).
 * When the watch ends (compaction, store closed, a broken cluster) the cache forgets everything and starts over.
 */
export class ResourceCache {
  /** The revision the cache has reached: it holds the state of the prefix at it. 0 while not ready. */
  revision: Revision = 0
  private ready = false
  private readonly items = new Map<string, KeyValue>()
  private snapshots: Snapshot[] = []
  private storeWatch?: WatchHandle
  private waiters: Waiter[] = []
  private progressTimer?: NodeJS.Timeout
  private restartTimer?: NodeJS.Timeout
  private stopped = false
  private generation = 0
  private changes = 0
  private readonly watchers: CacheWatchers

  constructor (private readonly store: Store, readonly prefix: string, private readonly o: ResourceCacheOptions = {}) {
    this.watchers = new CacheWatchers(o.ringSize)
    void this.start()
  }

  get size (): number { return this.items.size }

  /**
   * Resolves true once the cache has reached `revision`, false when `timeoutMs` passed first (or the cache is not
   * working). While waiting it asks the watch for progress notifications, so a quiet prefix catches up too.
   */
  waitFor (revision: Revision, timeoutMs: number): Promise<boolean> {
    if (this.ready && this.revision >= revision) return Promise.resolve(true)
    if (this.stopped) return Promise.resolve(false)
    return new Promise(resolve => {
      const waiter: Waiter = { revision, resolve: reached => { clearTimeout(timer); resolve(reached) } }
      const timer = setTimeout(() => { this.waiters = this.waiters.filter(w => w !== waiter); waiter.resolve(false) }, timeoutMs)
      this.waiters.push(waiter)
      this.askProgress()
    })
  }

  /**
   * Keys with `prefix` (within the resource) from the snapshot at the cache's revision, or at `revision` while that
   * snapshot is kept; undefined when the cache cannot answer (not ready, or the snapshot is gone).
   */
  list (prefix: string, opts: { revision?: Revision, startKey?: string, limit?: number } = {}): ListResult | undefined {
    const snap = opts.revision === undefined ? this.snapshot() : this.snapshots.find(s => s.revision === opts.revision)
    if (snap === undefined) return undefined
    const from = opts.startKey !== undefined && opts.startKey > prefix ? opts.startKey : prefix
    const start = lowerBound(snap.items, from)
    const end = blockEnd(snap.items, start, prefix)
    const limit = opts.limit !== undefined && opts.limit > 0 ? opts.limit : Infinity
    const stop = Math.min(end, start + limit)
    return { items: snap.items.slice(start, stop), revision: snap.revision, remaining: end - stop }
  }

  /** The key's value at the cache's revision (`found` undefined: absent); undefined when the cache is not ready. */
  get (key: string): { found: KeyValue | undefined, revision: Revision } | undefined {
    if (!this.ready || this.stopped) return undefined
    return { found: this.items.get(key), revision: this.revision }
  }

  /**
   * Serves a watch of `prefix` (within the resource) from memory when the cache is ready and holds every event after
   * `from`; undefined otherwise (the caller watches the store).
   */
  watch (prefix: string, from: Revision, cb: WatchCallbacks): WatchHandle | undefined {
    if (!this.ready || this.stopped || !this.watchers.covers(from)) return undefined
    return this.watchers.subscribe(prefix, from, cb)
  }

  stop (): void {
    this.watchers.fail(new StorageError('StoreClosed', 'the store is closed'))
    this.stopped = true
    this.storeWatch?.stop()
    clearTimeout(this.restartTimer)
    clearInterval(this.progressTimer)
    for (const w of this.waiters.splice(0)) w.resolve(false)
  }

  /** The sorted snapshot of the current state (built once per revision a read asks at). */
  private snapshot (): Snapshot | undefined {
    if (!this.ready) return undefined
    const last = this.snapshots[this.snapshots.length - 1]
    if (last !== undefined && last.revision === this.revision) return last
    const items = last !== undefined && last.changes === this.changes ? last.items : [...this.items.values()].sort(byKey)
    const snap = { revision: this.revision, changes: this.changes, items }
    this.snapshots.push(snap)
    if (this.snapshots.length > SNAPSHOTS_KEPT) this.snapshots.shift()
    return snap
  }

  private async start (): Promise<void> {
    const generation = ++this.generation
    try {
      let revision: Revision | undefined
      let startKey: string | undefined
      for (;;) {
        const page = await this.store.list(this.prefix, { revision, startKey, limit: this.o.pageSize ?? 1000, noCount: true })
        if (this.stopped || generation !== this.generation) return
        revision = page.revision
        for (const kv of page.items) this.items.set(kv.key, kv)
        if (page.remaining === 0 || page.items.length === 0) break
        startKey = page.items[page.items.length - 1].key + '\x00'
      }
      this.revision = revision
      this.watchers.reset(revision)
      this.storeWatch = this.store.watch(this.prefix, revision, {
        onEvents: evs => { if (generation === this.generation) this.apply(evs) },
        onProgress: rev => { if (generation === this.generation) { this.advance(rev); this.watchers.progress(rev) } },
        onError: err => { if (generation === this.generation) this.restart(err) }
      })
      this.ready = true
      this.release()
    } catch (err) {
      if (generation === this.generation) this.restart(err as StorageError)
    }
  }

  private apply (evs: WatchEvent[]): void {
    this.changes++
    for (const ev of evs) {
      if (ev.type === 'delete') this.items.delete(ev.key)
      else {
        const prev = this.items.get(ev.key)
        this.items.set(ev.key, { key: ev.key, value: ev.value, createRevision: prev !== undefined && ev.createRevision === 0 ? prev.createRevision : ev.createRevision, modRevision: ev.revision })
      }
    }
    this.advance(evs[evs.length - 1].revision)
    this.watchers.add(evs)
  }

  private advance (revision: Revision): void {
    if (revision <= this.revision) return
    this.revision = revision
    this.release()
  }

  private release (): void {
    if (this.waiters.length === 0) return
    const still: Waiter[] = []
    for (const w of this.waiters) {
      if (this.ready && this.revision >= w.revision) w.resolve(true)
      else still.push(w)
    }
    this.waiters = still
    if (still.length === 0) { clearInterval(this.progressTimer); this.progressTimer = undefined }
  }

  private askProgress (): void {
    this.storeWatch?.requestProgress?.()
    if (this.progressTimer !== undefined) return
    this.progressTimer = setInterval(() => {
      if (this.waiters.length === 0) { clearInterval(this.progressTimer); this.progressTimer = undefined; return }
      this.storeWatch?.requestProgress?.()
    }, this.o.progressEveryMs ?? 50)
    this.progressTimer.unref()
  }

  private restart (err: unknown): void {
    this.ready = false
    this.watchers.fail(err instanceof StorageError ? err : new StorageError('Internal', String((err as Error)?.message ?? err)))
    this.storeWatch?.stop()
    this.storeWatch = undefined
    this.items.clear()
    this.snapshots = []
    this.revision = 0
    this.generation++
    if (this.stopped) return
    if (!(err instanceof StorageError && err.code === 'StoreClosed')) {
      this.o.log?.(`watch cache of ${this.prefix}: ${String((err as Error)?.message ?? err)}; listing again`)
    } else {
      this.stop()
      return
    }
    this.restartTimer = setTimeout(() => { void this.start() }, this.o.restartMs ?? 1000)
    this.restartTimer.unref()
  }
}

/** Index of the first item from `start` on whose key does not start with `prefix` (those that do form one block). */
function blockEnd (items: KeyValue[], start: number, prefix: string): number {
  let lo = start
  let hi = items.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (items[mid].key.startsWith(prefix)) lo = mid + 1
    else hi = mid
  }
  return lo
}

/** Index of the first item whose key is >= key. */
function lowerBound (items: KeyValue[], key: string): number {
  let lo = 0
  let hi = items.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (items[mid].key < key) lo = mid + 1
    else hi = mid
  }
  return lo
}
