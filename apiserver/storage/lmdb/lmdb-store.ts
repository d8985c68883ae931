// The Store on LMDB: composes the layout, the group commit, history reads, the watch hub and compaction.
//
// Visibility: lmdb makes a commit visible before it is flushed (overlappingSync), so a read can see a
// write whose acknowledgement still waits for the flush; every read reports the revision of the
// snapshot it read, so a watch from that revision continues exactly after it. Only an OS crash or
// power loss in that window can take back such a write; a process crash (kill -9) cannot.
//
// Decisions the contract leaves open: a watch from a revision not reached yet waits for it (as etcd);
// a watch or read from before `compactedRevision()` fails with Compacted, revision 0 included (callers
// that mean "from now" pass `currentRevision()`); event arrays and their Buffers are shared between
// watchers and must not be mutated.
//
// Space: the space guard admits writes while the file system (and the quota) have room; while the store is full,
// only deletes commit, compaction sets retention aside, and the space is measured every few seconds so writes
// resume by themselves once deletes and compaction (or anything else) have freed enough.
import { mkdirSync } from 'node:fs'
import {
  StorageError, type Encoder, type JoinedPage, type KeyValue, type ListOptions, type ListResult, type Revision, type SpaceStatus, type Store,
  type WatchCallbacks, type WatchHandle
} from '../store.js'
import { CommitQueue, type WriteRequest } from './commit-queue.js'
import { Compactor } from './compaction.js'
import { HistoryReader, type ReadTxn } from './history.js'
import { checkKey, fitsKey, openLayout, readMetaNumber, type Layout } from './layout.js'
import type { ResolvedOptions } from './options.js'
import { SpaceGuard } from './space-guard.js'
import { measureLmdb } from './space-probe.js'
import { TermIndex } from './term-index.js'
import { WatchHub } from './watch-hub.js'

export class LmdbStore implements Store {
  private readonly reader: HistoryReader
  private readonly queue: CommitQueue
  private readonly hub: WatchHub
  private readonly compactor: Compactor
  private readonly guard: SpaceGuard
  private readonly index: TermIndex
  private spaceTimer: NodeJS.Timeout | undefined
  private closing: Promise<void> | undefined
  private readable = true

  private constructor (private readonly layout: Layout, private readonly opts: ResolvedOptions) {
    const rev = readMetaNumber(layout, 'rev')
    this.reader = new HistoryReader(layout)
    this.index = new TermIndex(layout, opts.indexer)
    this.guard = new SpaceGuard({
      path: opts.path,
      quotaBytes: opts.quotaBytes,
      reserveBytes: opts.reserveBytes,
      resumeBytes: opts.resumeBytes,
      measure: () => opts.measureSpace(() => measureLmdb(layout, opts.path)),
      now: opts.now,
      logger: opts.logger
    })
    this.compactor = new Compactor({
      layout,
      logger: opts.logger,
      now: opts.now,
      retentionMs: opts.retentionMs,
      intervalMs: opts.compactionIntervalMs,
      committedRevision: () => this.queue.committedRevision(),
      underPressure: () => this.guard.isFull()
    }, readMetaNumber(layout, 'compacted'), readMetaNumber(layout, 'compactDone'))
    this.guard.subscribe(status => {
      if (status.full && this.closing === undefined) {
        this.compactor.compactExpired().catch(err => opts.logger.error({ err }, 'compaction of a full store failed'))
      }
    })
    this.hub = new WatchHub({
      logger: opts.logger,
      compactedRevision: () => this.compactor.compactedRevision(),
      readEvents: (prefix, after, upTo) => this.readEvents(prefix, after, upTo)
    }, rev)
    this.queue = new CommitQueue({
      layout,
      now: opts.now,
      logger: opts.logger,
      space: this.guard,
      publish: (events, revision) => this.hub.publish(events, revision),
      onFatal: (err) => this.hub.closeAll(err),
      onLive: (key, next, at, source) => this.index.change(key, next, at, source),
      onApplied: lastRev => this.index.applied(lastRev)
    }, rev)
  }

  static open (opts: ResolvedOptions): LmdbStore {
    mkdirSync(opts.path, { recursive: true })
    const store = new LmdbStore(openLayout(opts.path), opts)
    const built = store.index.prepare()
    if (built.rebuilt) opts.logger.info({ entries: built.entries, version: opts.indexer?.version }, 'storage index rebuilt')
    store.compactor.start()
    store.startSpaceChecks()
    return store
  }

  space (): SpaceStatus {
    return this.guard.status()
  }

  onSpaceChange (listener: (status: SpaceStatus) => void): () => void {
    return this.guard.subscribe(listener)
  }

  currentRevision (): Revision {
    return this.queue.committedRevision()
  }

  compactedRevision (): Revision {
    return this.compactor.compactedRevision()
  }

  async get (key: string, opts?: { revision?: Revision }): Promise<KeyValue | undefined> {
    this.checkReadable()
    const revision = opts?.revision
    if (!fitsKey(key)) return this.read(revision, () => undefined) // names nothing stored
    if (revision === undefined) return this.reader.getLive(key)
    return this.read(revision, (txn, at, current) => current ? this.reader.getLive(key, txn) : this.reader.getAt(key, at, txn))
  }

  async list (prefix: string, opts: ListOptions = {}): Promise<ListResult> {
    this.checkReadable()
    const limit = opts.limit !== undefined && opts.limit > 0 ? Math.floor(opts.limit) : 0
    return this.read(opts.revision, (txn, at, current) => {
      if (!fitsKey(prefix) || (opts.startKey !== undefined && !fitsKey(opts.startKey))) return { items: [], remaining: 0, revision: at }
      const indexed = current && opts.index !== undefined ? this.index.candidates(prefix, opts.startKey, opts.index, limit, opts.noCount === true, txn) : undefined
      if (indexed !== undefined) return { items: indexed.keys.map(key => this.liveAt(key, txn)), remaining: indexed.remaining, revision: at }
      // older snapshots are not indexed: they scan (the caller checks every item either way)
      const page = current
        ? this.reader.listLive(prefix, opts.startKey, limit, txn, opts.noCount)
        : this.reader.listAt(prefix, opts.startKey, limit, at, txn, opts.noCount)
      return { items: page.items, remaining: page.remaining, revision: at }
    })
  }

  /** A live value the index names in the same snapshot: it exists there, or the index is broken. */
  private liveAt (key: string, txn: ReadTxn): KeyValue {
    const kv = this.reader.getLive(key, txn)
    if (kv === undefined) throw new StorageError('Internal', `the index names ${key}, which is not live`, key)
    return kv
  }

  async listJoined (prefix: string, opts: ListOptions, separator: Buffer): Promise<JoinedPage> {
    this.checkReadable()
    const limit = opts.limit !== undefined && opts.limit > 0 ? Math.floor(opts.limit) : 0
    return this.read(opts.revision, (txn, at, current) => {
      if (!fitsKey(prefix) || (opts.startKey !== undefined && !fitsKey(opts.startKey))) return { bytes: Buffer.alloc(0), count: 0, remaining: 0, revision: at }
      if (current) return { ...this.reader.listLiveJoined(prefix, opts.startKey, limit, txn, separator), revision: at }
      // an older snapshot is assembled from history, a version at a time: join those
      const page = this.reader.listAt(prefix, opts.startKey, limit, at, txn, true)
      const parts = page.items.flatMap((kv, i) => i === 0 ? [kv.value] : [separator, kv.value])
      return { bytes: Buffer.concat(parts), count: page.items.length, lastKey: page.items[page.items.length - 1]?.key, remaining: page.remaining, revision: at }
    })
  }

  async count (prefix: string): Promise<number> {
    this.checkReadable()
    return fitsKey(prefix) ? this.reader.countLive(prefix, undefined) : 0
  }

  create (key: string, encode: Encoder): Promise<KeyValue> {
    return this.write({ kind: 'create', key, encode })
  }

  update (key: string, encode: Encoder, expectedModRevision?: Revision): Promise<KeyValue> {
    return this.write({ kind: 'update', key, encode, expected: expectedModRevision })
  }

  delete (key: string, expectedModRevision?: Revision): Promise<KeyValue> {
    return this.write({ kind: 'delete', key, expected: expectedModRevision })
  }

  watch (prefix: string, fromRevision: Revision, callbacks: WatchCallbacks): WatchHandle {
    return this.hub.watch(prefix, fromRevision, callbacks)
  }

  compact (revision: Revision): Promise<void> {
    if (this.closing !== undefined) return Promise.reject(closedError())
    return this.compactor.compact(revision)
  }

  /** Runs the retention-based compaction now (what the background timer does). */
  compactExpired (): Promise<void> {
    if (this.closing !== undefined) return Promise.reject(closedError())
    return this.compactor.compactExpired()
  }

  /** Number of open watches (for tests and metrics). */
  watchCount (): number {
    return this.hub.size()
  }

  close (): Promise<void> {
    this.closing ??= (async () => {
      clearInterval(this.spaceTimer)
      await this.queue.close()
      await this.compactor.stop()
      this.hub.closeAll(closedError())
      this.readable = false
      await this.layout.root.close()
    })()
    return this.closing
  }

  /**
   * Measures the space every few seconds, so the full state is left (and entered) without writes; while full,
   * compacts what the deletes since the last look left behind.
   */
  private startSpaceChecks (): void {
    this.spaceTimer = setInterval(() => {
      if (this.closing !== undefined) return
      if (!this.guard.measure().full) return
      this.compactor.compactExpired().catch(err => this.opts.logger.error({ err }, 'compaction of a full store failed'))
    }, this.opts.spaceCheckIntervalMs)
    this.spaceTimer.unref()
  }

  private write (req: WriteRequest): Promise<KeyValue> {
    return new Promise((resolve, reject) => {
      try {
        checkKey(req.key)
        if (req.kind !== 'create') checkRevision(req.expected, 'expected revision')
      } catch (err) {
        reject(err)
        return
      }
      this.queue.submit({ ...req, resolve, reject })
    })
  }

  /**
   * Runs `fn` in one read snapshot at `revision` (default: the snapshot's own revision); `current`
   * says whether that is the snapshot's revision, i.e. whether the live records answer it.
   */
  private read<T> (revision: Revision | undefined, fn: (txn: ReadTxn, at: Revision, current: boolean) => T): T {
    checkRevision(revision, 'revision')
    const { root } = this.layout
    let txn = root.useReadTransaction()
    try {
      let snap = this.reader.snapshotRevision(txn)
      if (revision !== undefined && revision > snap && revision <= this.currentRevision()) {
        // the shared read transaction predates a commit this process already saw: renew it
        txn.done()
        root.resetReadTxn()
        txn = root.useReadTransaction()
        snap = this.reader.snapshotRevision(txn)
      }
      if (revision === undefined || revision === snap) return fn(txn, snap, true)
      if (revision > snap) {
        throw new StorageError('FutureRevision', `revision ${revision} is newer than the current revision ${snap}`, undefined, snap)
      }
      const compacted = this.compactor.compactedRevision()
      if (revision < compacted) {
        throw new StorageError('Compacted', `revision ${revision} has been compacted (oldest is ${compacted})`, undefined, compacted)
      }
      return fn(txn, revision, false)
    } finally {
      txn.done()
    }
  }

  private readEvents (prefix: string, after: Revision, upTo: Revision): ReturnType<HistoryReader['readEvents']> {
    if (!this.readable) throw closedError()
    const { root } = this.layout
    let txn = root.useReadTransaction()
    try {
      if (this.reader.snapshotRevision(txn) < upTo) {
        // a replay must never silently skip: renew a read transaction older than the published revision
        txn.done()
        root.resetReadTxn()
        txn = root.useReadTransaction()
        const snap = this.reader.snapshotRevision(txn)
        if (snap < upTo) throw new StorageError('Internal', `replay snapshot at ${snap} is behind ${upTo}`)
      }
      return this.reader.readEvents(Buffer.from(prefix), after, upTo, txn)
    } finally {
      txn.done()
    }
  }

  private checkReadable (): void {
    if (!this.readable) throw closedError()
  }
}

function closedError (): StorageError {
  return new StorageError('StoreClosed', 'store is closed')
}

function checkRevision (rev: Revision | undefined, what: string): void {
  if (rev !== undefined && (!Number.isSafeInteger(rev) || rev < 0)) {
    throw new StorageError('Internal', `${what} must be a non-negative integer, got ${String(rev)}`)
  }
}
