// The watchers a resource's watch cache serves from memory: a ring of its recent events, replayed and then followed.
import type { Revision, StorageError, WatchCallbacks, WatchEvent, WatchHandle } from '../store.js'

interface Subscriber {
  prefix: string
  /** The newest revision delivered (or skipped as not under the prefix). */
  last: Revision
  replayed: boolean
  stopped: boolean
  cb: WatchCallbacks
}

/**
 * Keeps every event of the cache with revision in (start, newest] (between `size` and twice `size` of them) and the
 * watchers following them. A watcher from a revision at or after `start` gets the ring's later events (on a microtask,
 * after watch() returned), then every new one under its prefix, in revision order, each once.
 */
export class CacheWatchers {
  private ring: WatchEvent[] = []
  /** Events after this revision are all in the ring. */
  private start: Revision = 0
  private readonly subs = new Set<Subscriber>()

  constructor (private readonly size = 4096) {}

  get count (): number { return this.subs.size }

  /** Starts over at `revision` (the cache listed at it); nothing is in the ring yet. */
  reset (revision: Revision): void {
    this.ring = []
    this.start = revision
  }

  /** Whether a watch from `revision` can be served. */
  covers (revision: Revision): boolean {
    return revision >= this.start
  }

  subscribe (prefix: string, from: Revision, cb: WatchCallbacks): WatchHandle {
    const s: Subscriber = { prefix, last: from, replayed: false, stopped: false, cb }
    this.subs.add(s)
    queueMicrotask(() => {
      if (s.stopped) return
      s.replayed = true
      this.deliver(s, this.ring)
    })
    return { stop: () => { s.stopped = true; this.subs.delete(s) } }
  }

  add (events: WatchEvent[]): void {
    this.ring.push(...events)
    if (this.ring.length > 2 * this.size) {
      const cut = this.ring.length - this.size
      this.start = this.ring[cut - 1].revision
      this.ring = this.ring.slice(cut)
    }
    for (const s of this.subs) if (s.replayed) this.deliver(s, events)
  }

  progress (revision: Revision): void {
    for (const s of this.subs) {
      if (!s.replayed || s.stopped || revision <= s.last) continue
      s.last = revision
      s.cb.onProgress?.(revision)
    }
  }

  /** Ends every watcher with `err` (the cache lost its watch and starts over). */
  fail (err: StorageError): void {
    const subs = [...this.subs]
    this.subs.clear()
    for (const s of subs) {
      if (s.stopped) continue
      s.stopped = true
      s.cb.onError(err)
    }
  }

  private deliver (s: Subscriber, events: WatchEvent[]): void {
    if (s.stopped) return
    let batch: WatchEvent[] | undefined
    for (const ev of events) {
      if (ev.revision <= s.last || !ev.key.startsWith(s.prefix)) continue
      ;(batch ??= []).push(ev)
    }
    const newest = events.length > 0 ? events[events.length - 1].revision : s.last
    if (newest > s.last) s.last = newest
    if (batch !== undefined) s.cb.onEvents(batch)
  }
}
