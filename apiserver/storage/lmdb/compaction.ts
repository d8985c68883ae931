// Compaction: drops the history no retained revision needs, in small transactions, resumable after a crash.
//
// Compacting to R keeps exactly what reads at revisions >= R and watches from R need: every log record
// after R, plus, per key live at R, its version at R. Walking the log records in (done, R] in order,
// each record supersedes its key's previous version (deleted), and a delete record is itself dropped.
// `compacted` (the oldest readable revision) moves to R before anything is deleted, and is persisted
// in the same transaction as the first deletions, together with `compactDone` (the progress).
//
// While the store is full (`underPressure`), retention is set aside: compaction goes to the newest revision, so
// the history of deleted and replaced objects is freed at once (watchers behind it get 410 Gone and relist).
import { StorageError, type Revision } from '../store.js'
import { DEL, decodeLog, encodeNumber, logTime, type Layout } from './layout.js'
import type { StoreLogger } from './options.js'
import { commitCause } from './space-probe.js'

/** Log records processed per transaction. */
const CHUNK = 1000

export interface CompactorDeps {
  layout: Layout
  logger: StoreLogger
  now: () => number
  retentionMs: number
  intervalMs: number
  /** The newest committed revision; compaction never goes past it. */
  committedRevision: () => Revision
  /** True while the store is full: retention is set aside. */
  underPressure: () => boolean
}

export class Compactor {
  private compacted: Revision
  private done: Revision
  private running: Promise<void> = Promise.resolve()
  private timer: NodeJS.Timeout | undefined

  constructor (private readonly deps: CompactorDeps, compacted: Revision, done: Revision) {
    this.compacted = compacted
    this.done = done
  }

  compactedRevision (): Revision {
    return this.compacted
  }

  /** Starts the background timer, and finishes a compaction a crash interrupted. */
  start (): void {
    if (this.done < this.compacted) this.schedule(this.compacted)
    this.timer = setInterval(() => {
      this.compactExpired().catch(err => this.deps.logger.error({ err }, 'background compaction failed'))
    }, this.deps.intervalMs)
    this.timer.unref()
  }

  async stop (): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer)
    this.timer = undefined
    await this.running
  }

  /** Compacts to the newest revision committed at or before `now() - retentionMs`. */
  async compactExpired (): Promise<void> {
    const target = this.expiredRevision()
    if (target > this.compacted) await this.compact(target)
  }

  /** Drops history older than `rev`; resolves once done. */
  compact (rev: Revision): Promise<void> {
    if (!Number.isSafeInteger(rev) || rev < 0) {
      return Promise.reject(new StorageError('Internal', `invalid compaction revision ${rev}`))
    }
    const current = this.deps.committedRevision()
    if (rev > current) {
      return Promise.reject(new StorageError('FutureRevision', `revision ${rev} is newer than the current revision ${current}`, undefined, current))
    }
    if (rev <= this.compacted) return this.running
    return this.schedule(rev)
  }

  private schedule (target: Revision): Promise<void> {
    this.compacted = target
    const done = this.running.then(() => this.process(target))
    this.running = done.catch(err => this.deps.logger.error({ err, revision: target }, 'compaction failed'))
    return done
  }

  /**
   * Binary search by commit time over (base, committed]: every revision there still has its log record
   * (compaction only deletes at or below its target), and commit times grow with revisions.
   */
  private expiredRevision (): Revision {
    // A full store sets retention aside: everything committed is expired. Answered without reading the log, whose
    // read snapshot (outside a transaction) may not show the newest commits yet; the search below would stop at that gap.
    if (this.deps.underPressure()) return this.deps.committedRevision()
    const cutoff = this.deps.now() - this.deps.retentionMs
    const { log } = this.deps.layout
    let lo = Math.max(this.done, this.compacted) // known expired (or the base)
    let hi = this.deps.committedRevision() + 1 // known not expired (or past the end)
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2)
      const rec = log.get(mid)
      if (rec === undefined) return lo // a gap breaks the search's premise: compact no further now
      if (logTime(rec) <= cutoff) lo = mid
      else hi = mid
    }
    return lo
  }

  private async process (target: Revision): Promise<void> {
    const { root, log, hist, meta } = this.deps.layout
    while (this.done < target) {
      let last = this.done
      await root.childTransaction(() => {
        const chunk: Array<{ rev: Revision, type: number, key: string, prev: Revision }> = []
        for (const { key, value } of log.getRange({ start: this.done + 1, end: target + 1, limit: CHUNK })) {
          const rec = decodeLog(value)
          chunk.push({ rev: key, type: rec.type, key: rec.key, prev: rec.prevModRev })
        }
        for (const c of chunk) {
          if (c.prev > 0) {
            log.removeSync(c.prev)
            hist.removeSync([c.key, c.prev])
          }
          if (c.type === DEL) {
            log.removeSync(c.rev)
            hist.removeSync([c.key, c.rev])
          }
        }
        last = chunk.length === CHUNK ? chunk[chunk.length - 1].rev : target
        meta.putSync('compacted', encodeNumber(target))
        meta.putSync('compactDone', encodeNumber(last))
      }).catch(async (err: unknown) => { throw await commitCause(err) }) // lmdb's commitError must be handled
      this.done = last
    }
    this.deps.logger.info({ revision: target }, 'storage compacted')
  }
}
