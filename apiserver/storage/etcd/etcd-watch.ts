// One etcd Watch stream behind one Store.watch(): decodes events, resumes on another endpoint from the last revision.
import type { ClientDuplexStream } from '@grpc/grpc-js'
import { StorageError, withRevision, type Revision, type WatchCallbacks, type WatchEvent, type WatchHandle } from '../store.js'
import type { EtcdClient } from './etcd-client.js'
import type { Msg } from './etcd-proto.js'
import type { KeySpace } from './keys.js'

export interface WatchHost {
  client: EtcdClient
  keys: KeySpace
  /** Every revision the stream reports (events and progress notifications) raises the store's current revision. */
  observe: (revision: Revision) => void
  /** Called when etcd says the start revision was compacted; resolves to the compacted revision to report. */
  compacted: (revision: Revision) => void
  log: (msg: string) => void
}

/** Delay before reopening a broken stream (on the next endpoint). */
const RESUME_DELAY_MS = 100

export class EtcdWatch implements WatchHandle {
  private stream?: ClientDuplexStream<Msg, Msg>
  private stopped = false
  /** The newest revision delivered (or promised complete by a progress notification). */
  private last: Revision
  /**
   * The revision of the last answer to requestProgress() not yet confirmed. etcd before 3.4.24/3.5.8 may send that
   * answer ahead of events it has queued for the stream; an event queued then is sent before the answer to a request
   * made after it arrived, so a requested revision counts once the next answer comes.
   */
  private unconfirmed = 0
  private progressWanted = false

  constructor (private readonly host: WatchHost, private readonly prefix: string, from: Revision,
    private readonly cb: WatchCallbacks) {
    this.last = from
    this.open()
  }

  stop (): void {
    if (this.stopped) return
    this.stopped = true
    this.stream?.cancel()
  }

  requestProgress (): void {
    if (this.stopped || this.stream === undefined) return
    this.progressWanted = true
    this.stream.write({ progressRequest: {} })
  }

  /** Ends the watch with an error (the store is closing, or the history is gone). */
  fail (err: StorageError): void {
    if (this.stopped) return
    this.stop()
    this.cb.onError(err)
  }

  private open (): void {
    const { key, rangeEnd } = this.host.keys.range(this.prefix)
    const stream = this.host.client.watchStream()
    this.stream = stream
    stream.on('data', (msg: Msg) => { if (this.stream === stream) this.onMessage(msg) })
    // A call ends with 'status' (and 'error' before it when it failed); either way the first one resumes.
    const ended = (): void => { if (this.stream === stream) this.resume() }
    stream.on('error', ended)
    stream.on('status', ended)
    stream.on('end', ended)
    stream.write({ createRequest: { key, rangeEnd, startRevision: this.last + 1, prevKv: true, progressNotify: true } })
  }

  /** The stream broke (member down, network): reopen on the next endpoint from the last delivered revision. */
  private resume (): void {
    if (this.stopped) return
    this.stream = undefined
    this.unconfirmed = 0
    this.host.log(`etcd watch on ${this.prefix} broke; resuming from revision ${this.last + 1}`)
    this.host.client.nextEndpoint()
    setTimeout(() => { if (!this.stopped) this.open() }, RESUME_DELAY_MS)
  }

  private onMessage (msg: Msg): void {
    if (this.stopped) return
    if (msg.compactRevision > 0) {
      this.host.compacted(msg.compactRevision)
      this.fail(new StorageError('Compacted', `watch from revision ${this.last} is older than the compacted revision ${msg.compactRevision}`, undefined, msg.compactRevision))
      return
    }
    if (msg.canceled === true) {
      this.fail(new StorageError('Internal', `etcd cancelled the watch on ${this.prefix}: ${String(msg.cancelReason)}`))
      return
    }
    const rev: Revision = msg.header?.revision ?? 0
    if (rev > 0) this.host.observe(rev)
    const events: WatchEvent[] = []
    for (const e of msg.events as Msg[]) {
      const ev = this.decode(e)
      if (ev.revision > this.last) events.push(ev)
    }
    if (events.length > 0) {
      this.last = events[events.length - 1].revision
      this.cb.onEvents(events)
    } else if (msg.events.length === 0 && msg.created !== true && Number(msg.watchId) === -1) {
      this.onRequestedProgress(rev)
    } else if (msg.events.length === 0 && msg.created !== true && rev > this.last) {
      this.progress(rev) // a periodic progress notification of this watch: nothing under the prefix up to rev
    }
  }

  /** An answer to requestProgress(): confirms the one before it; the first answer to a request asks once more. */
  private onRequestedProgress (rev: Revision): void {
    if (this.unconfirmed > this.last) this.progress(this.unconfirmed)
    this.unconfirmed = rev
    if (!this.progressWanted) return
    this.progressWanted = false
    this.stream?.write({ progressRequest: {} })
  }

  private progress (rev: Revision): void {
    this.last = rev
    this.cb.onProgress?.(rev)
  }

  private decode (e: Msg): WatchEvent {
    const kv: Msg = e.kv
    const prev: Msg | undefined = e.prevKv ?? undefined
    const key = this.host.keys.strip(kv.key)
    if (e.type === 'DELETE') {
      return { type: 'delete', key, value: prev === undefined ? Buffer.alloc(0) : withRevision(prev.value, prev.modRevision), revision: kv.modRevision, createRevision: prev?.createRevision ?? 0 }
    }
    const ev: WatchEvent = { type: 'put', key, value: withRevision(kv.value, kv.modRevision), revision: kv.modRevision, createRevision: kv.createRevision }
    if (prev != null && kv.createRevision !== kv.modRevision) ev.prevValue = withRevision(prev.value, prev.modRevision)
    return ev
  }
}
