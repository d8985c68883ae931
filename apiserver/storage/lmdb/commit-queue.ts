// Group commit: queued writes are applied in queue order, a whole batch in one durable LMDB transaction, and
// acknowledged (and published to watchers) as soon as its commit returns.
//
// The batch commits synchronously on this thread (lmdb's transactionSync: pages written and fdatasync'd, then the
// meta page written with O_DSYNC), so a write's acknowledgement needs no hand-off to lmdb's write thread and back
// (a wake-up each way, and the main thread blocked on the writer's lock during its flush anyway). Writes are gathered
// for one turn of the event loop (setImmediate: every request parsed in that turn joins the batch) and then
// committed together; writes that arrive while a batch commits form the next one.
//
// Space: each batch asks the space guard to measure if due, and every write other than a delete to be admitted (refused
// ones fail with NoSpace and take no revision). A batch whose commit fails for want of space anyway (the disk
// filled from elsewhere) fails its writes with NoSpace and is retried once with its deletes alone. A failed commit
// (a failed fsync included) is rolled back whole: nothing of it is visible, nothing acknowledged.
import { StorageError, type Encoder, type KeyValue, type Revision, type WatchEvent } from '../store.js'
import { DEL, PUT, decodeLive, encodeLive, encodeLog, encodeNumber, type Layout } from './layout.js'
import type { StoreLogger } from './options.js'
import { estimateWriteBytes, type SpaceGuard } from './space-guard.js'
import { classifyCommitError, commitCause } from './space-probe.js'

/** A write as the store asks for it. */
export type WriteRequest =
  | { kind: 'create', key: string, encode: Encoder }
  | { kind: 'update', key: string, encode: Encoder, expected?: Revision }
  | { kind: 'delete', key: string, expected?: Revision }

/** A queued write: the request and the settling of its promise; `retried` once its batch failed for want of space. */
export type WriteOp = WriteRequest & { resolve: (kv: KeyValue) => void, reject: (err: Error) => void, retried?: boolean }

interface Batch {
  ops: WriteOp[]
  outcomes: Array<KeyValue | StorageError>
  events: WatchEvent[]
  lastRev: Revision
}

export interface CommitQueueDeps {
  layout: Layout
  now: () => number
  logger: StoreLogger
  /** Admits the writes other than deletes while space lasts. */
  space: SpaceGuard
  /** Called once per durable batch with changes, in revision order, before its writers' promises settle. */
  publish: (events: WatchEvent[], revision: Revision) => void
}

/** Most writes per transaction. */
const MAX_BATCH = 4096

const TYPE_PUT = Buffer.from([PUT])
const TYPE_DEL = Buffer.from([DEL])

export class CommitQueue {
  private queue: WriteOp[] = []
  private running: Promise<void> | undefined
  private lastRev: Revision
  private closed = false

  constructor (private readonly deps: CommitQueueDeps, committedRevision: Revision) {
    this.lastRev = committedRevision
  }

  /** The newest committed (durable and visible) revision. */
  committedRevision (): Revision {
    return this.lastRev
  }

  submit (op: WriteOp): void {
    if (this.closed) {
      op.reject(new StorageError('StoreClosed', 'store is closed', op.key))
      return
    }
    this.queue.push(op)
    this.kick()
  }

  /**
   * Starts the commit loop, after this turn's I/O, unless it is scheduled or runs; a write queued as the loop was
   * ending (its writers' continuations run first) starts it again.
   */
  private kick (): void {
    if (this.running !== undefined) return
    this.running = new Promise<void>(resolve => setImmediate(resolve)).then(async () => await this.run()).finally(() => {
      this.running = undefined
      if (this.queue.length > 0) this.kick()
    })
  }

  /** Refuses new writes and waits until every queued write has settled. */
  async close (): Promise<void> {
    this.closed = true
    while (this.running !== undefined) await this.running
  }

  private async run (): Promise<void> {
    const { root } = this.deps.layout
    while (this.queue.length > 0) {
      let ops: WriteOp[] = []
      let batch: Batch | undefined
      try {
        // abortable and durable on return: if anything throws (the commit's own fsync included), nothing of it stays
        root.transactionSync(() => {
          ops = this.take()
          this.deps.space.beginBatch()
          batch = this.apply(ops)
        })
        if (batch === undefined) throw new Error('transaction callback did not run')
      } catch (err) {
        this.deps.space.endBatch()
        if (ops.length === 0) ops = this.take()
        await this.failBatch(ops, err)
        continue
      }
      this.deps.space.endBatch()
      this.lastRev = batch.lastRev
      this.settle(batch)
      // writes made by the settled writers' continuations, and requests that arrived meanwhile, form the next batch
      if (this.queue.length > 0) await new Promise<void>(resolve => setImmediate(resolve))
    }
  }

  /**
   * A batch's transaction failed and was rolled back whole: its writes fail, with NoSpace when the disk is full
   * (then its deletes, which free space, go again once on their own), else with Internal.
   */
  private async failBatch (ops: WriteOp[], err: unknown): Promise<void> {
    const cause = await commitCause(err)
    const kind = classifyCommitError(cause)
    const noSpace = this.deps.space.commitFailed(kind.space, kind.io)
    if (noSpace === undefined) {
      this.deps.logger.error({ err: cause, writes: ops.length }, 'storage commit failed')
      for (const op of ops) op.reject(new StorageError('Internal', `commit failed: ${String(cause)}`, op.key))
      return
    }
    const again = ops.filter(op => op.kind === 'delete' && op.retried !== true)
    this.deps.logger.warn({ err: cause, writes: ops.length, retried: again.length }, 'storage commit failed: no space')
    for (const op of ops) {
      if (!again.includes(op)) op.reject(new StorageError('NoSpace', noSpace.message, op.key))
    }
    this.queue.unshift(...again.map(op => ({ ...op, retried: true })))
  }

  /** The next batch: everything queued, up to MAX_BATCH writes (bounds the time the loop is held). */
  private take (): WriteOp[] {
    if (this.queue.length <= MAX_BATCH) {
      const ops = this.queue
      this.queue = []
      return ops
    }
    return this.queue.splice(0, MAX_BATCH)
  }

  private apply (ops: WriteOp[]): Batch {
    const time = this.deps.now()
    const batch: Batch = { ops, outcomes: [], events: [], lastRev: this.lastRev }
    for (const op of ops) {
      const outcome = this.applyOne(op, batch.lastRev + 1, time, batch.events)
      if (!(outcome instanceof StorageError)) batch.lastRev++
      batch.outcomes.push(outcome)
    }
    if (batch.lastRev !== this.lastRev) this.deps.layout.meta.putSync('rev', encodeNumber(batch.lastRev))
    return batch
  }

  /** Checks and applies one write at revision `rev` inside the batch transaction. */
  private applyOne (op: WriteOp, rev: Revision, time: number, events: WatchEvent[]): KeyValue | StorageError {
    const { live, log, hist } = this.deps.layout
    const rec = live.get(op.key)
    const prev = rec === undefined ? undefined : decodeLive(op.key, rec)
    const refused = refusal(op, prev)
    if (refused !== undefined) return refused
    if (op.kind === 'delete') {
      const p = prev as KeyValue
      live.removeSync(op.key)
      log.putSync(rev, encodeLog(DEL, op.key, p.createRevision, p.modRevision, time, undefined), { append: true })
      hist.putSync([op.key, rev], TYPE_DEL)
      events.push({ type: 'delete', key: op.key, value: p.value, revision: rev, createRevision: p.createRevision })
      return { key: op.key, value: p.value, createRevision: p.createRevision, modRevision: rev }
    }
    let value: Buffer
    try {
      value = asBuffer(op.encode(rev))
    } catch (err) {
      return new StorageError('Internal', `encoder failed: ${String(err)}`, op.key)
    }
    const noSpace = this.deps.space.admit(op.key, estimateWriteBytes(Buffer.byteLength(op.key), value.length))
    if (noSpace !== undefined) return noSpace
    const createRev = prev?.createRevision ?? rev
    live.putSync(op.key, encodeLive(createRev, rev, value))
    log.putSync(rev, encodeLog(PUT, op.key, createRev, prev?.modRevision ?? 0, time, value), { append: true })
    hist.putSync([op.key, rev], TYPE_PUT)
    const ev: WatchEvent = { type: 'put', key: op.key, value, revision: rev, createRevision: createRev }
    if (prev !== undefined) ev.prevValue = prev.value
    events.push(ev)
    return { key: op.key, value, createRevision: createRev, modRevision: rev }
  }

  private settle (batch: Batch): void {
    if (batch.events.length > 0) {
      try {
        this.deps.publish(batch.events, batch.lastRev)
      } catch (err) {
        this.deps.logger.error({ err }, 'publishing committed events failed')
      }
    }
    batch.ops.forEach((op, i) => {
      const outcome = batch.outcomes[i]
      if (outcome instanceof StorageError) op.reject(outcome)
      else op.resolve(outcome)
    })
  }

}

function refusal (op: WriteOp, prev: KeyValue | undefined): StorageError | undefined {
  if (op.kind === 'create') {
    return prev === undefined ? undefined : new StorageError('KeyExists', `key ${op.key} already exists`, op.key, prev.modRevision)
  }
  if (prev === undefined) return new StorageError('NotFound', `key ${op.key} not found`, op.key)
  if (op.expected !== undefined && op.expected !== prev.modRevision) {
    return new StorageError('Conflict', `key ${op.key} is at revision ${prev.modRevision}, not ${op.expected}`, op.key, prev.modRevision)
  }
  return undefined
}

function asBuffer (v: Uint8Array): Buffer {
  if (Buffer.isBuffer(v)) return v
  if (v instanceof Uint8Array) return Buffer.from(v.buffer, v.byteOffset, v.byteLength)
  throw new TypeError('encoder must return a Buffer')
}
