// The space guard: which writes the store admits as its file system fills or it reaches its quota, and when the
// store enters and leaves the full state (as etcd's NOSPACE alarm).
//
// Headroom is what a write may still use: the file system's free bytes plus the free pages inside the store's
// files, less a reserve kept for deletes, compaction and the store's bookkeeping; with a quota, also the quota less
// the bytes in use. Each admitted write adds an estimate of its bytes to what is pending since the last
// measurement; a batch measures again first when that is older than 250 ms or has spent half the headroom it
// found (so near the limit, every batch measures), and no batch spends the reserve. Deletes are never refused: they are what frees space. The store is full once
// the headroom is gone (or a commit failed for want of space) and stays full, refusing every write but deletes,
// until the headroom is back to `resumeBytes`: the state changes once per transition, not per write.
import { StorageError, type SpaceStatus } from '../store.js'
import type { StoreLogger } from './options.js'

/** One measurement of the store and its file system. */
export interface SpaceUsage {
  /** Size of the store's files. */
  storeBytes: number
  /** Bytes of the pages the store uses (the rest of its files is free pages, which new writes reuse). */
  inUseBytes: number
  /** Bytes free on the file system for this process (statfs `bavail`). */
  freeBytes: number
}

export interface SpaceGuardDeps {
  path: string
  /** 0: no quota beyond the disk. */
  quotaBytes: number
  reserveBytes: number
  /** Headroom needed to leave the full state. */
  resumeBytes: number
  measure: () => SpaceUsage
  now: () => number
  logger: StoreLogger
}

/** A status older than this is measured again when asked for. */
const STATUS_MAX_AGE_MS = 1000
/** A batch measures again when the last measurement is older than this. */
const BATCH_MAX_AGE_MS = 250

/** An I/O error with less than this free on the file system is taken for a full disk (LMDB's short page write). */
const IO_ERROR_FULL_BYTES = 1024 * 1024

/** LMDB's page: values larger than half a page go to overflow pages of their own. */
const PAGE = 4096

/**
 * Bytes a put of a value takes in the store, at most: the live record and the log record (each the value plus
 * headers, whole pages once it overflows), and the per-key history entry.
 */
export function estimateWriteBytes (keyBytes: number, valueBytes: number): number {
  const record = valueBytes + keyBytes + 64
  const stored = record > PAGE / 2 ? Math.ceil(record / PAGE) * PAGE : record
  return 2 * stored + keyBytes + 32
}

export class SpaceGuard {
  private usage: SpaceUsage = { storeBytes: 0, inUseBytes: 0, freeBytes: Number.MAX_SAFE_INTEGER }
  private measuredAt = Number.NEGATIVE_INFINITY
  /** Estimated bytes admitted since the last measurement. */
  private pending = 0
  /** The headroom the last measurement found. */
  private measuredHeadroom = 0
  /** A batch is being built or committed: a measurement now may not see it yet, so `pending` is kept. */
  private inBatch = false
  private full = false
  /** Headroom needed to leave the full state: resumeBytes, more after a commit failed with the headroom believed larger. */
  private resumeAt: number
  private measureFailed = false
  private readonly listeners = new Set<(status: SpaceStatus) => void>()

  constructor (private readonly deps: SpaceGuardDeps) {
    this.resumeAt = deps.resumeBytes
    this.measure()
    // a store that was full when it stopped (less than resumeBytes left) starts full
    if (this.headroom() < deps.resumeBytes) this.enter()
  }

  isFull (): boolean {
    return this.full
  }

  /** Calls `listener` on every transition into and out of the full state. Returns an unsubscribe. */
  subscribe (listener: (status: SpaceStatus) => void): () => void {
    this.listeners.add(listener)
    return () => { this.listeners.delete(listener) }
  }

  /** The current status, measured again when the last measurement is older than a second. */
  status (): SpaceStatus {
    if (this.deps.now() - this.measuredAt >= STATUS_MAX_AGE_MS) this.measure()
    return this.snapshot()
  }

  /** At the start of a batch: measures again unless the last measurement is recent and far from spent. */
  beginBatch (): void {
    this.inBatch = false // every earlier batch has committed (or failed)
    if (this.deps.now() - this.measuredAt >= BATCH_MAX_AGE_MS || this.full || this.pending * 2 >= this.measuredHeadroom) this.measure()
    this.inBatch = true
  }

  /** The batch has committed or failed. */
  endBatch (): void {
    this.inBatch = false
  }

  /** Measures afresh (batches, periodically, status) and enters or leaves the full state. */
  measure (): SpaceStatus {
    try {
      this.usage = this.deps.measure()
      this.measureFailed = false
    } catch (err) {
      // keep the last measurement; say so once
      if (!this.measureFailed) this.deps.logger.warn({ err, path: this.deps.path }, 'measuring the storage space failed')
      this.measureFailed = true
    }
    this.measuredAt = this.deps.now()
    if (!this.inBatch) this.pending = 0
    const headroom = this.headroom()
    this.measuredHeadroom = headroom + this.pending
    if (!this.full && headroom <= 0) this.enter()
    else if (this.full && headroom >= this.resumeAt) this.leave()
    return this.snapshot()
  }

  /**
   * Whether a write other than a delete, taking about `bytes`, may go ahead in the batch being built: undefined if
   * so (the bytes are counted against the headroom), else the NoSpace error to fail it with.
   */
  admit (key: string, bytes: number): StorageError | undefined {
    if (this.full) return this.refusal(key, 'storage is full')
    const headroom = this.headroom()
    if (headroom - bytes < 0) {
      // a write larger than what is left: full if little is left, else only this write is refused
      if (headroom < this.deps.resumeBytes) {
        this.enter()
        return this.refusal(key, 'storage is full')
      }
      return this.refusal(key, `not enough storage for a write of about ${bytes} bytes`)
    }
    this.pending += bytes
    return undefined
  }

  /**
   * A commit failed. Measures again; when the failure is for want of space (`spaceError`, or an I/O error with
   * less than the reserve, and at least 1 MiB, free on the file system), enters the full state and returns the
   * error to fail its writes with.
   */
  commitFailed (spaceError: boolean, ioError: boolean): StorageError | undefined {
    this.measure()
    const nearlyFull = this.usage.freeBytes < Math.max(this.deps.reserveBytes, IO_ERROR_FULL_BYTES)
    if (!spaceError && !(ioError && nearlyFull)) return undefined
    // the estimate was wrong (the disk filled from elsewhere, or pages were not reusable yet): ask for more than it
    this.resumeAt = Math.max(this.deps.resumeBytes, this.headroom() + this.deps.resumeBytes)
    this.enter()
    return this.refusal(undefined, 'storage is full')
  }

  private headroom (): number {
    const u = this.usage
    const disk = u.freeBytes + Math.max(0, u.storeBytes - u.inUseBytes) - this.deps.reserveBytes
    const quota = this.deps.quotaBytes > 0 ? this.deps.quotaBytes - u.inUseBytes : Number.POSITIVE_INFINITY
    return Math.min(disk, quota) - this.pending
  }

  private describe (): string {
    const u = this.usage
    const quota = this.deps.quotaBytes > 0 ? String(this.deps.quotaBytes) : 'none'
    return `store ${this.deps.path} is ${u.storeBytes} bytes (${u.inUseBytes} in use), ` +
      `${u.freeBytes} bytes free on its file system (quota ${quota}, reserve ${this.deps.reserveBytes})`
  }

  private refusal (key: string | undefined, why: string): StorageError {
    return new StorageError('NoSpace', `${why}: ${this.describe()}`, key)
  }

  private snapshot (): SpaceStatus {
    const u = this.usage
    return {
      full: this.full,
      path: this.deps.path,
      storeBytes: u.storeBytes,
      inUseBytes: u.inUseBytes,
      freeBytes: u.freeBytes,
      quotaBytes: this.deps.quotaBytes,
      reserveBytes: this.deps.reserveBytes,
      message: this.full ? `storage is full: ${this.describe()}` : `storage has room: ${this.describe()}`
    }
  }

  private enter (): void {
    if (this.full) return
    this.full = true
    this.transition('storage is full: refusing writes other than deletes until space is freed')
  }

  private leave (): void {
    if (!this.full) return
    this.full = false
    this.resumeAt = this.deps.resumeBytes
    this.transition('storage space recovered: accepting writes again')
  }

  private transition (msg: string): void {
    const s = this.snapshot()
    const fields = { path: s.path, storeBytes: s.storeBytes, inUseBytes: s.inUseBytes, freeBytes: s.freeBytes, quotaBytes: s.quotaBytes, reserveBytes: s.reserveBytes }
    if (s.full) this.deps.logger.warn(fields, msg)
    else this.deps.logger.info(fields, msg)
    // after the current turn: a transition is often seen inside a commit, where listeners must not run
    setImmediate(() => {
      for (const listener of [...this.listeners]) {
        try {
          listener(s)
        } catch (err) {
          this.deps.logger.error({ err }, 'storage space listener threw')
        }
      }
    })
  }
}
