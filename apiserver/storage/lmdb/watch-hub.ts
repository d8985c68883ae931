// In-process fan-out of durable events to prefix watchers, with catch-up from the event log.
//
// A watcher is either live (in `groups`, receives each published batch) or catching up (replays the log
// in chunks, one chunk per event-loop turn). The switch is race-free because everything runs on one
// thread: a catch-up step reads the log up to `publishedRev` at that moment, and when it has reached it
// the watcher joins the live group before any later publish can run. Catch-up never reads past
// `publishedRev`, so events that are committed but not yet durable are left to the live path.
import { StorageError, type Revision, type WatchCallbacks, type WatchEvent, type WatchHandle } from '../store.js'
import type { StoreLogger } from './options.js'

/** Revisions replayed per catch-up step (one event-loop turn). */
const CATCH_UP_REVISIONS = 2000

export interface WatchHubDeps {
  logger: StoreLogger
  /** Oldest revision a watch may start from. */
  compactedRevision: () => Revision
  /** Events under the prefix with revision in (after, upTo], from the log (one read snapshot). */
  readEvents: (prefix: string, after: Revision, upTo: Revision) => WatchEvent[]
}

interface Watcher {
  prefix: string
  callbacks: WatchCallbacks
  /** Revision of the last event delivered (or skipped as before the start). */
  lastRev: Revision
  state: 'catching-up' | 'live' | 'stopped'
}

export class WatchHub {
  private readonly groups = new Map<string, Set<Watcher>>()
  private readonly catchingUp = new Set<Watcher>()
  private publishedRev: Revision
  private closedWith: StorageError | undefined

  constructor (private readonly deps: WatchHubDeps, publishedRevision: Revision) {
    this.publishedRev = publishedRevision
  }

  /** Number of active watchers (live and catching up). */
  size (): number {
    let n = this.catchingUp.size
    for (const set of this.groups.values()) n += set.size
    return n
  }

  watch (prefix: string, fromRevision: Revision, callbacks: WatchCallbacks): WatchHandle {
    const w: Watcher = { prefix, callbacks, lastRev: fromRevision, state: 'catching-up' }
    const handle: WatchHandle = { stop: () => this.stop(w) }
    if (this.closedWith !== undefined) {
      this.failLater(w, this.closedWith)
    } else if (!Number.isSafeInteger(fromRevision) || fromRevision < 0) {
      this.failLater(w, new StorageError('Internal', `invalid watch revision ${fromRevision}`))
    } else if (fromRevision < this.deps.compactedRevision()) {
      this.failLater(w, compacted(fromRevision, this.deps.compactedRevision()))
    } else if (fromRevision >= this.publishedRev) {
      this.goLive(w)
    } else {
      this.catchingUp.add(w)
      setImmediate(() => this.catchUpStep(w))
    }
    return handle
  }

  /** Delivers a durable batch (ascending revisions, last one `revision`) to the live watchers. */
  publish (events: WatchEvent[], revision: Revision): void {
    this.publishedRev = revision
    for (const [prefix, set] of this.groups) {
      const matched = prefix === '' ? events : events.filter(e => e.key.startsWith(prefix))
      if (matched.length === 0) continue
      for (const w of set) this.deliver(w, matched)
    }
  }

  /** Ends every watch with `err` (store closing); later watches fail with it too. */
  closeAll (err: StorageError): void {
    this.closedWith = err
    const all = [...this.catchingUp]
    for (const set of this.groups.values()) all.push(...set)
    for (const w of all) this.fail(w, err)
  }

  private stop (w: Watcher): void {
    if (w.state === 'stopped') return
    if (w.state === 'live') {
      const set = this.groups.get(w.prefix)
      set?.delete(w)
      if (set?.size === 0) this.groups.delete(w.prefix)
    } else {
      this.catchingUp.delete(w)
    }
    w.state = 'stopped'
  }

  private goLive (w: Watcher): void {
    this.catchingUp.delete(w)
    w.state = 'live'
    let set = this.groups.get(w.prefix)
    if (set === undefined) this.groups.set(w.prefix, set = new Set())
    set.add(w)
  }

  private catchUpStep (w: Watcher): void {
    if (w.state !== 'catching-up') return
    const compactedRev = this.deps.compactedRevision()
    if (w.lastRev < compactedRev) {
      this.fail(w, compacted(w.lastRev, compactedRev))
      return
    }
    const upTo = Math.min(this.publishedRev, w.lastRev + CATCH_UP_REVISIONS)
    let events: WatchEvent[]
    try {
      events = this.deps.readEvents(w.prefix, w.lastRev, upTo)
    } catch (err) {
      this.fail(w, err instanceof StorageError ? err : new StorageError('Internal', `watch replay failed: ${String(err)}`))
      return
    }
    if (events.length > 0) this.deliver(w, events)
    if (w.state !== 'catching-up') return
    w.lastRev = upTo
    if (upTo >= this.publishedRev) this.goLive(w)
    else setImmediate(() => this.catchUpStep(w))
  }

  private deliver (w: Watcher, events: WatchEvent[]): void {
    if (w.state === 'stopped') return
    let batch = events
    if (events[0].revision <= w.lastRev) {
      batch = events.filter(e => e.revision > w.lastRev)
      if (batch.length === 0) return
    }
    w.lastRev = batch[batch.length - 1].revision
    try {
      w.callbacks.onEvents(batch)
    } catch (err) {
      this.deps.logger.error({ err, prefix: w.prefix }, 'watch callback threw; ending the watch')
      this.fail(w, new StorageError('Internal', `watch callback threw: ${String(err)}`))
    }
  }

  private fail (w: Watcher, err: StorageError): void {
    if (w.state === 'stopped') return
    this.stop(w)
    try {
      w.callbacks.onError(err)
    } catch (cbErr) {
      this.deps.logger.error({ err: cbErr, prefix: w.prefix }, 'watch onError threw')
    }
  }

  /** Fails a watch that never started, after `watch` has returned its handle. */
  private failLater (w: Watcher, err: StorageError): void {
    this.catchingUp.add(w)
    setImmediate(() => this.fail(w, err))
  }
}

function compacted (from: Revision, compactedRev: Revision): StorageError {
  return new StorageError('Compacted', `revision ${from} has been compacted (oldest is ${compactedRev})`, undefined, compactedRev)
}
