// One store watch per resource shared by all its watchers: events converted once, filtered per watcher,
// encoded once per media type, written to each watcher at most once per tick; slow watchers are dropped.
// Watchers that receive exactly the same run of this tick's events share one joined and framed batch.
// Watchers without a filter of their own join a cohort once in step (watch-cohort.ts): one offer per event for all.
//
// The hub keeps a ring of recent events. Every event under the prefix with revision in (ringStart, hubRev]
// is in the ring, so a watcher starting at rv >= ringStart replays from it; an older start runs its own
// catch-up store watch (gap-free) until it meets an event the ring holds, then joins the shared stream.

import type { Store, StorageError, WatchEvent, WatchHandle } from '../storage/store.js'
import { gone, internalError, type StatusError } from '../errors/status-error.js'
import type { WatchEncoder, WatchSink, WatchSubscription } from './types.js'
import type { Selector } from './selectors.js'
import { bookmarkEvent, errorEvent, fromStoreEvent, type Convert, type HubEvent } from './watch-events.js'
import type { Logger } from './core.js'
import { WatchBatch } from './watch-batch.js'
import { Cohorts, type Cohort, type Watcher } from './watch-cohort.js'
import { WatchSelectorIndex } from './watch-selector-index.js'

export interface HubOptions {
  store: Store
  /** Key prefix of the resource (all namespaces). */
  prefix: string
  apiVersion: string
  kind: string
  logger: Logger
  /** Turns stored bytes into served bytes (version conversion); identity when absent. */
  convert?: Convert
  /** Translates a storage error ending the shared or a catch-up watch. */
  translate: (err: StorageError, fromRevision: number) => StatusError
  ringSize?: number
  /** Pending events per watcher before it is dropped as too slow. */
  maxPending?: number
  bookmarkIntervalMs?: number
  /** Defers the per-tick flush (default setImmediate). */
  defer?: (fn: () => void) => void
}

export interface WatcherSpec {
  /** Only keys with this prefix (a namespace, or the whole resource). */
  keyPrefix: string
  /** Only this key (watch of one object). */
  key?: string
  selector?: Selector
  encoder: WatchEncoder
  sink: WatchSink
  allowBookmarks: boolean
}

export class WatchHub {
  private readonly o: Required<Omit<HubOptions, 'convert'>> & { convert?: Convert }
  private storeWatch?: WatchHandle
  private ring: HubEvent[] = []
  private ringStart = 0
  private hubRev = 0
  private readonly live = new Set<Watcher>()
  /** Live watchers without an indexable selector: offered every event. */
  private readonly general = new Set<Watcher>()
  /** Live watchers whose selector has an equality (pods by spec.nodeName, objects by a label value). */
  private readonly indexed = new WatchSelectorIndex()
  private readonly catchups = new Set<Watcher>()
  private readonly cohorts = new Cohorts()
  private readonly dirty = new Set<Watcher>()
  private flushScheduled = false
  /** Events received since the last flush, in order; `tick[i].seq === tickBase + i`. */
  private tick: HubEvent[] = []
  private tickBase = 0
  private nextSeq = 0
  private bookmarkTimer?: NodeJS.Timeout

  constructor (opts: HubOptions) {
    this.o = {
      ...opts,
      ringSize: opts.ringSize ?? 4096,
      maxPending: opts.maxPending ?? 10_000,
      bookmarkIntervalMs: opts.bookmarkIntervalMs ?? 60_000,
      defer: opts.defer ?? setImmediate
    }
  }

  /** Number of watchers attached (live or catching up). */
  get size (): number { return this.live.size + this.catchups.size }
  /** Whether the shared store watch runs (for tests and metrics). */
  get running (): boolean { return this.storeWatch !== undefined }
  /** Watchers served through a cohort (for tests). */
  get inCohorts (): number { let n = 0; for (const c of this.cohorts.values()) n += c.members.size; return n }

  /** Starts the shared store watch if needed; returns the revision it covers from. */
  ensureStarted (): number {
    if (this.storeWatch === undefined) {
      this.hubRev = this.ringStart = this.o.store.currentRevision()
      this.ring = []
      this.storeWatch = this.o.store.watch(this.o.prefix, this.hubRev, {
        onEvents: evs => this.onEvents(evs),
        onError: err => this.fail(err)
      })
      this.bookmarkTimer = setInterval(() => this.sendBookmarks(), this.o.bookmarkIntervalMs)
      this.bookmarkTimer.unref()
    }
    return this.ringStart
  }

  /**
   * Attaches a watcher receiving every matching change after `fromRev`, preceded by `initial` (already
   * encoded synthetic events and bookmark). Synchronous: nothing can slip in between.
   */
  subscribe (spec: WatcherSpec, fromRev: number, initial: Buffer[] = []): WatchSubscription {
    this.ensureStarted()
    const w: Watcher = { spec, lastRev: fromRev, pending: [...initial], runStart: -1, runEnd: -1, queued: 0, done: false, isDirty: false }
    if (initial.length > 0) this.markDirty(w)
    if (fromRev >= this.ringStart) {
      this.replay(w)
      this.addLive(w)
    } else {
      this.catchups.add(w)
      w.catchup = this.o.store.watch(this.o.prefix, fromRev, {
        onEvents: evs => this.onCatchup(w, evs),
        onError: err => this.drop(w, this.o.translate(err, fromRev))
      })
    }
    return { stop: () => this.remove(w) }
  }

  /** Ends every watcher (no error) and the shared watch. */
  stop (): void {
    for (const w of [...this.live, ...this.catchups]) { this.flushOne(w); this.detach(w); w.spec.sink.end() }
    this.shutdown()
  }

  private onEvents (evs: WatchEvent[]): void {
    for (const ev of evs) {
      // The last watcher may have gone mid-batch (dropped for an error): nothing more to do then.
      if (this.storeWatch === undefined) return
      const he = fromStoreEvent(ev, this.o.convert)
      he.seq = this.nextSeq++
      this.tick.push(he)
      this.ring.push(he)
      this.hubRev = ev.revision
      if (this.cohorts.offer(he, this.o.maxPending, (c, err) => this.endCohort(c, err))) this.scheduleFlush()
      for (const w of this.general) this.offer(w, he)
      if (this.indexed.size > 0) this.indexed.offer(he, w => this.offer(w, he))
    }
    // Trim in bulk (amortized O(1) per event): the ring holds between ringSize and 2 * ringSize events.
    if (this.ring.length > 2 * this.o.ringSize) {
      const cut = this.ring.length - this.o.ringSize
      this.ringStart = this.ring[cut - 1].revision
      this.ring = this.ring.slice(cut)
    }
    for (const w of this.catchups) if (w.lastRev >= this.ringStart) this.join(w)
    // No flush pending means no watcher holds a run: the tick can restart here instead of growing.
    if (!this.flushScheduled) this.resetTick()
  }

  private resetTick (): void {
    this.tick = []
    this.tickBase = this.nextSeq
  }

  private onCatchup (w: Watcher, evs: WatchEvent[]): void {
    for (const ev of evs) {
      if (w.done || w.catchup === undefined) return
      if (ev.revision <= w.lastRev) continue
      if (ev.revision > this.ringStart && ev.revision <= this.hubRev) { this.join(w); return }
      this.offer(w, fromStoreEvent(ev, this.o.convert))
    }
  }

  /** Ends every member of a cohort (its encoder failed, or it fell too far behind). */
  private endCohort (c: Cohort, err: StatusError): void {
    if (err.code === 500) this.o.logger.warn({ err }, 'watch event could not be delivered to one cohort of watchers; ending those watches')
    for (const w of c.members) this.drop(w, err)
  }

  /** Moves a watcher out of its cohort into the general set, this tick's cohort events becoming its own pending. */
  private leaveCohort (w: Watcher): void {
    if (w.cohort === undefined) return
    const c = this.cohorts.leave(w)!
    w.lastRev = this.hubRev
    this.general.add(w)
    if (c.chunks.length === 0) return
    w.pending = [...c.chunks]
    w.queued = c.chunks.length
    this.markDirty(w)
  }

  private addLive (w: Watcher): void {
    this.live.add(w)
    if (this.indexed.add(w)) return
    this.general.add(w)
    this.cohorts.consider(w)
  }

  private removeLive (w: Watcher): void {
    if (!this.live.delete(w)) return
    this.general.delete(w)
    this.cohorts.leave(w)
    this.indexed.remove(w)
  }

  /** Moves a catching-up watcher onto the shared stream. */
  private join (w: Watcher): void {
    w.catchup?.stop()
    w.catchup = undefined
    this.catchups.delete(w)
    this.replay(w)
    this.addLive(w)
  }

  private replay (w: Watcher): void {
    const ring = this.ring
    let i = ring.length
    while (i > 0 && ring[i - 1].revision > w.lastRev) i--
    for (; i < ring.length; i++) this.offer(w, ring[i])
  }

  /**
   * Offers one event to one watcher. A failure that is this watcher's own (its selector or encoder
   * throwing on this object) ends only this watcher, never the shared watch of every other one.
   */
  private offer (w: Watcher, he: HubEvent): void {
    try {
      this.offerTo(w, he)
    } catch (err) {
      this.o.logger.warn({ err }, 'watch event could not be delivered to one watcher; ending that watch')
      this.drop(w, internalError(err))
    }
  }

  /** Filters one event for one watcher (namespace, name, selector transitions) and queues its bytes. */
  private offerTo (w: Watcher, he: HubEvent): void {
    if (w.done || he.revision <= w.lastRev) return
    w.lastRev = he.revision
    const s = w.spec
    if (s.key !== undefined ? he.key !== s.key : !he.key.startsWith(s.keyPrefix)) return
    let out: HubEvent = he
    if (s.selector !== undefined && !s.selector.empty) {
      const now = s.selector.matches(he.object())
      if (he.type === 'MODIFIED') {
        const prev = he.prevObject()
        const before = prev !== undefined && s.selector.matches(prev)
        if (!now && !before) return
        if (now && !before) out = he.entered()
        else if (!now && before) out = he.left()
      } else if (!now) return
    }
    const bytes = out.encode(s.encoder)
    if (out === he && he.seq >= this.tickBase && w.pending.length === 0 && (w.runEnd === -1 || w.runEnd === he.seq)) {
      if (w.runEnd === -1) w.runStart = he.seq
      w.runEnd = he.seq + 1
      this.count(w)
    } else {
      this.enqueue(w, bytes)
    }
  }

  private enqueue (w: Watcher, bytes: Buffer): void {
    this.closeRun(w)
    w.pending.push(bytes)
    this.count(w)
  }

  /** Turns the watcher's open run into ordinary pending bytes. */
  private closeRun (w: Watcher): void {
    if (w.runEnd === -1) return
    w.pending = this.runChunks(w)
    w.runStart = w.runEnd = -1
  }

  /** The run's bytes; every event of it was encoded for this encoder when offered, so nothing can throw here. */
  private runChunks (w: Watcher): Buffer[] {
    const out: Buffer[] = []
    for (let s = w.runStart; s < w.runEnd; s++) out.push(this.tick[s - this.tickBase].encode(w.spec.encoder))
    return out
  }

  private count (w: Watcher): void {
    if (++w.queued > this.o.maxPending) {
      w.pending = []
      w.runStart = w.runEnd = -1
      this.drop(w, gone('the watcher fell too far behind and was closed; restart the watch'))
      return
    }
    this.markDirty(w)
  }

  private markDirty (w: Watcher): void {
    if (w.isDirty) return
    w.isDirty = true
    this.dirty.add(w)
    this.scheduleFlush()
  }

  private scheduleFlush (): void {
    if (!this.flushScheduled) {
      this.flushScheduled = true
      this.o.defer(() => this.flush())
    }
  }

  /** Writes every dirty watcher; watchers with the same run and encoder get the same batch object. */
  private flush (): void {
    this.flushScheduled = false
    const shared = new Map<string, WatchBatch>()
    // Cohort members hold nothing of their own: their tick is the cohort's, written first.
    for (const c of this.cohorts.dirty) {
      const k = c.runKey
      const chunks = c.take()
      if (chunks.length === 0) continue
      let batch = k === undefined ? undefined : shared.get(k)
      if (batch === undefined) { batch = new WatchBatch(chunks); if (k !== undefined) shared.set(k, batch) }
      for (const w of c.members) this.deliver(w, batch)
    }
    this.cohorts.dirty.clear()
    const ws = [...this.dirty]
    this.dirty.clear()
    for (const w of ws) w.isDirty = false
    for (const w of ws) {
      if (w.done || w.runEnd === -1) { this.flushOne(w); continue }
      const k = `${w.runStart}:${w.runEnd}:${w.spec.encoder.key}`
      let batch = shared.get(k)
      if (batch === undefined) { batch = new WatchBatch(this.runChunks(w)); shared.set(k, batch) }
      w.runStart = w.runEnd = -1
      this.deliver(w, batch)
    }
    this.resetTick()
    if (this.cohorts.joining.size > 0) this.cohorts.joinReady(this.hubRev, w => this.general.delete(w))
  }

  private flushOne (w: Watcher): void {
    if (w.done) return
    this.leaveCohort(w)
    this.closeRun(w)
    if (w.pending.length === 0) return
    const chunks = w.pending
    w.pending = []
    this.deliver(w, new WatchBatch(chunks))
  }

  private deliver (w: Watcher, batch: WatchBatch): void {
    w.queued = 0
    const sink = w.spec.sink
    try {
      if (sink.writeShared !== undefined) sink.writeShared(batch)
      else sink.write([...batch.chunks])
    } catch (err) {
      this.o.logger.debug({ err }, 'watch sink write failed; dropping watcher')
      this.detach(w)
      w.spec.sink.end()
      this.shutdownIfIdle()
    }
  }

  private sendBookmarks (): void {
    let bm: HubEvent | undefined
    for (const c of this.cohorts.values()) {
      if (!c.allowBookmarks || c.members.size === 0) continue
      bm ??= bookmarkEvent(this.o.apiVersion, this.o.kind, this.hubRev)
      c.push(bm.encode(c.encoder))
      this.cohorts.dirty.add(c)
      this.scheduleFlush()
    }
    for (const w of this.live) {
      if (!w.spec.allowBookmarks || w.done || w.cohort !== undefined) continue
      bm ??= bookmarkEvent(this.o.apiVersion, this.o.kind, this.hubRev)
      if (w.lastRev <= this.hubRev) this.enqueue(w, bm.encode(w.spec.encoder))
    }
  }

  /** Ends one watcher with an ERROR event (written after what is pending) and the error. */
  private drop (w: Watcher, err: StatusError): void {
    if (w.done) return
    // The ERROR event is best effort: the watcher's own encoder may be what failed.
    this.leaveCohort(w)
    this.closeRun(w)
    try { w.pending.push(errorEvent(err).encode(w.spec.encoder)) } catch { /* end without it */ }
    this.flushOne(w)
    this.detach(w)
    w.spec.sink.end(err)
    this.shutdownIfIdle()
  }

  /** The shared store watch, bookmarks and ring live only while someone watches. */
  private shutdownIfIdle (): void {
    if (this.size === 0 && (this.storeWatch !== undefined || this.bookmarkTimer !== undefined)) this.shutdown()
  }

  private fail (err: StorageError): void {
    const status = this.o.translate(err, this.ringStart)
    this.storeWatch?.stop()
    this.storeWatch = undefined
    for (const w of [...this.live, ...this.catchups]) this.drop(w, status)
    this.shutdown()
  }

  private detach (w: Watcher): void {
    w.done = true
    w.catchup?.stop()
    w.catchup = undefined
    this.removeLive(w)
    this.catchups.delete(w)
    this.dirty.delete(w)
    w.isDirty = false
  }

  private remove (w: Watcher): void {
    if (w.done) return
    this.detach(w)
    if (this.size === 0) this.shutdown()
  }

  private shutdown (): void {
    this.storeWatch?.stop()
    this.storeWatch = undefined
    if (this.bookmarkTimer !== undefined) clearInterval(this.bookmarkTimer)
    this.bookmarkTimer = undefined
    this.ring = []
  }
}
