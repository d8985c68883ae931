// A hub's watchers that are bound to receive exactly the same bytes (same key prefix, no selector, same encoder,
// same bookmark choice, nothing of their own pending): each event is filtered and queued once for all of them,
// and each tick's events are framed once and written to every member.

import { gone, internalError, type StatusError } from '../errors/status-error.js'
import type { WatchEncoder } from './types.js'
import type { HubEvent } from './watch-events.js'
import type { WatcherSpec } from './watch-hub.js'

/** One watcher of a hub (its state; the hub owns the transitions). */
export interface Watcher {
  spec: WatcherSpec
  /** Highest revision considered; events at or below are skipped. Not kept while in a cohort (the hub's revision is). */
  lastRev: number
  pending: Buffer[]
  /**
   * Events of the current tick received unchanged and back to back, as hub sequence numbers [runStart, runEnd);
   * -1 when none. While a run is open `pending` is empty: anything else first turns the run into `pending`.
   */
  runStart: number
  runEnd: number
  /** Live events queued since the last flush (initial events do not count against maxPending). */
  queued: number
  catchup?: { stop(): void }
  done: boolean
  /** In the hub's dirty set (checked before touching the set: the fan-out loop marks every watcher for every event). */
  isDirty: boolean
  /** The cohort receiving events for this watcher, if any: then `pending` and the run stay empty. */
  cohort?: Cohort
}

export class Cohort {
  readonly members = new Set<Watcher>()
  /** This tick's encoded events (and bookmarks) for every member, in order. */
  chunks: Buffer[] = []
  /** The hub sequence numbers [runStart, runEnd) when `chunks` are exactly those events back to back, else runStart -1. */
  runStart = -1
  runEnd = -1

  constructor (readonly keyPrefix: string, readonly encoder: WatchEncoder, readonly allowBookmarks: boolean) {}

  /** The cohort a watcher of `spec` may join, by key; undefined when it filters on its own (one object, a selector). */
  static keyOf (spec: WatcherSpec): string | undefined {
    if (spec.key !== undefined || (spec.selector !== undefined && !spec.selector.empty)) return undefined
    return `${spec.allowBookmarks ? 'b' : '-'}:${spec.encoder.key}:${spec.keyPrefix}`
  }

  /** Queues the event when it is under the prefix; true when queued. Throws what the encoder throws. */
  offer (he: HubEvent): boolean {
    if (!he.key.startsWith(this.keyPrefix)) return false
    this.chunks.push(he.encode(this.encoder))
    if (this.chunks.length === 1) { this.runStart = he.seq; this.runEnd = he.seq + 1 } else if (this.runEnd === he.seq) this.runEnd++
    else this.runStart = -1
    return true
  }

  /** Queues bytes that are no event of the tick (a bookmark). */
  push (chunk: Buffer): void {
    this.chunks.push(chunk)
    this.runStart = -1
  }

  /** The key a watcher with the same run of events and encoder shares its batch by; undefined when not a run. */
  get runKey (): string | undefined {
    return this.runStart === -1 ? undefined : `${this.runStart}:${this.runEnd}:${this.encoder.key}`
  }

  /** This tick's chunks, leaving none. */
  take (): Buffer[] {
    const c = this.chunks
    this.chunks = []
    this.runStart = this.runEnd = -1
    return c
  }
}

/** A hub's cohorts by Cohort.keyOf, the watchers that may join one, and the cohorts holding events this tick. */
export class Cohorts {
  private readonly byKey = new Map<string, Cohort>()
  /** General watchers without a filter of their own: they join their cohort once in step with it. */
  readonly joining = new Set<Watcher>()
  readonly dirty = new Set<Cohort>()

  values (): IterableIterator<Cohort> { return this.byKey.values() }

  /**
   * Offers one event to every cohort with members; true when one queued it. A cohort whose encoder threw (500) or
   * holding more than `maxPending` chunks (410, its chunks dropped) is handed to `end` with the error for its members.
   */
  offer (he: HubEvent, maxPending: number, end: (c: Cohort, err: StatusError) => void): boolean {
    let queued = false
    for (const c of this.byKey.values()) {
      if (c.members.size === 0) continue
      try {
        if (!c.offer(he)) continue
      } catch (err) {
        end(c, internalError(err))
        continue
      }
      if (c.chunks.length > maxPending) {
        c.take()
        end(c, gone('the watcher fell too far behind and was closed; restart the watch'))
        continue
      }
      this.dirty.add(c)
      queued = true
    }
    return queued
  }

  /** After a flush: candidates with nothing of their own pending and in step with the hub (at `hubRev`) join their cohort. */
  joinReady (hubRev: number, joined: (w: Watcher) => void): void {
    for (const w of this.joining) {
      if (w.done || w.isDirty || w.pending.length > 0 || w.runEnd !== -1 || w.lastRev > hubRev) continue
      this.join(w)
      joined(w)
    }
  }

  /** A watcher that became live: a candidate when it has no filter of its own. */
  consider (w: Watcher): void {
    if (Cohort.keyOf(w.spec) !== undefined) this.joining.add(w)
  }

  private join (w: Watcher): void {
    const k = Cohort.keyOf(w.spec)!
    let c = this.byKey.get(k)
    if (c === undefined) { c = new Cohort(w.spec.keyPrefix, w.spec.encoder, w.spec.allowBookmarks); this.byKey.set(k, c) }
    this.joining.delete(w)
    c.members.add(w)
    w.cohort = c
  }

  /** Takes a watcher out of its cohort and of the candidates; returns the cohort it left (its chunks still there). */
  leave (w: Watcher): Cohort | undefined {
    this.joining.delete(w)
    const c = w.cohort
    if (c === undefined) return undefined
    c.members.delete(w)
    w.cohort = undefined
    if (c.members.size === 0) { this.byKey.delete(Cohort.keyOf(w.spec)!); this.dirty.delete(c) }
    return c
  }
}
