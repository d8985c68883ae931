// Helpers of the storage conformance suite: a store per test, encoders, and a watch event collector.
import type { Test } from 'tap'
import { isStorageError, type Encoder, type Revision, type Store, type StorageError, type StorageErrorCode, type WatchEvent, type WatchHandle } from './store.js'

export type NewStore = () => Promise<Store>

/**
 * Revision `n` writes into the test: a fresh LMDB store starts at 0, a store on a shared etcd at
 * whatever the cluster is at, so the suite states every revision relative to the start.
 */
export type Rel = (n: number) => Revision

/** Runs `fn` on a fresh store that is closed when the test ends. */
export function withStore (t: Test, newStore: NewStore, name: string, fn: (t: Test, s: Store, r: Rel) => Promise<void>): void {
  t.test(name, async t => {
    const s = await newStore()
    t.teardown(() => s.close())
    const base = s.currentRevision()
    await fn(t, s, n => base + n)
  })
}

/** An encoder writing `text@<revision>`, so every stored value shows the revision it committed at. */
export function enc (text: string): Encoder {
  return rev => Buffer.from(`${text}@${rev}`)
}

export function str (b: Buffer | undefined): string | undefined {
  return b?.toString()
}

/** Resolves to the error code the promise rejects with (or 'resolved'). */
export async function codeOf (p: Promise<unknown>): Promise<StorageErrorCode | 'resolved' | 'other'> {
  try {
    await p
    return 'resolved'
  } catch (err) {
    return isStorageError(err) ? err.code : 'other'
  }
}

export interface Collector {
  events: WatchEvent[]
  errors: StorageError[]
  /** Number of onEvents calls. */
  batches: number
  handle: WatchHandle
  /** Resolves once `pred` holds (checked after every callback); rejects after `ms`. */
  until: (pred: () => boolean, ms?: number) => Promise<void>
  /** Resolves once an event with this revision (or later) arrived. */
  upTo: (rev: Revision, ms?: number) => Promise<void>
}

export function collect (s: Store, prefix: string, from: Revision): Collector {
  const waiters: Array<() => void> = []
  const wake = (): void => { for (const w of waiters.splice(0)) w() }
  const c: Collector = {
    events: [],
    errors: [],
    batches: 0,
    handle: s.watch(prefix, from, {
      onEvents (evs) { c.batches++; c.events.push(...evs); wake() },
      onError (err) { c.errors.push(err); wake() }
    }),
    until: (pred, ms = 5000) => new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`watch condition not met within ${ms} ms (${c.events.length} events)`)), ms)
      const check = (): void => {
        if (pred()) { clearTimeout(timer); resolve() } else waiters.push(check)
      }
      check()
    }),
    upTo: (rev, ms) => c.until(() => c.errors.length > 0 || (c.events.at(-1)?.revision ?? -1) >= rev, ms)
  }
  return c
}

/** The events as compact strings `type key revision value`, for whole-sequence comparisons. */
export function brief (events: WatchEvent[]): string[] {
  return events.map(e => `${e.type} ${e.key} ${e.revision} ${e.value.toString()}`)
}

/** Checks revisions are strictly ascending and, when `from`/`to` are given, exactly from+1..to. */
export function assertContiguous (t: Test, events: WatchEvent[], from: Revision, to: Revision, what: string): void {
  const revs = events.map(e => e.revision)
  const expected = Array.from({ length: to - from }, (_, i) => from + 1 + i)
  t.same(revs, expected, `${what}: every revision in (${from}, ${to}] once, in order`)
}

export function sleep (ms: number): Promise<void> {
  return new Promise(resolve => setTimeout(resolve, ms))
}
