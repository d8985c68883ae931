// The etcd v3 store: the Store contract on an etcd cluster, resourceVersion = etcd revision, writes as compare-and-swap Txns.
import { PENDING_REVISION, StorageError, withRevision, type Encoder, type KeyValue, type ListOptions, type ListResult, type Revision, type SpaceStatus, type Store, type WatchCallbacks, type WatchHandle } from '../store.js'
import { EtcdClient, type EtcdClientOptions, type EtcdTls } from './etcd-client.js'
import { TxnWriter, type Committed, type WriteSpec } from './txn-writes.js'
import type { Msg } from './etcd-proto.js'
import { EtcdWatch } from './etcd-watch.js'
import { isCompactedError, isFutureError, toStorageError } from './errors.js'
import { PROBE_KEY, KeySpace } from './keys.js'

export interface EtcdStoreOptions {
  endpoints: string[]
  /** `--etcd-prefix`: every key lives below it (default "/registry"). */
  prefix?: string
  tls?: EtcdTls
  /** EtcdClientOptions.route: endpoints dialled through the `etcd` egress selection. */
  route?: EtcdClientOptions['route']
  callTimeoutMs?: number
  log?: (msg: string) => void
}

export class EtcdStore implements Store {
  private readonly client: EtcdClient
  private readonly keys: KeySpace
  private readonly log: (msg: string) => void
  private rev: Revision = 0
  private compacted: Revision = 0
  private readonly writer: TxnWriter
  private readonly watches = new Set<EtcdWatch>()
  private closed = false
  /** See Store.reliableProgress: learned from the server's version at open. */
  reliableProgress = false

  private constructor (opts: EtcdStoreOptions) {
    this.client = new EtcdClient({ endpoints: opts.endpoints, tls: opts.tls, callTimeoutMs: opts.callTimeoutMs, route: opts.route })
    this.keys = new KeySpace(opts.prefix ?? '/registry')
    this.log = opts.log ?? (() => {})
    this.writer = new TxnWriter({ client: this.client, observe: rev => this.observe(rev), revision: () => this.rev })
  }

  /** Connects and learns the current and compacted revisions. */
  static async open (opts: EtcdStoreOptions): Promise<EtcdStore> {
    const s = new EtcdStore(opts)
    try {
      await s.syncRevision()
      s.compacted = await s.probeCompacted()
      s.reliableProgress = await s.serverVersion().then(progressIsReliable, () => false)
    } catch (err) {
      s.client.close()
      throw toStorageError(err, 'open')
    }
    return s
  }

  get endpoints (): string[] { return this.client.endpoints }
  currentRevision (): Revision { return this.rev }
  /** Write Txns sent, and those whose answer was lost (looked for, then sent again). */
  get writeStats (): { txns: number, lost: number } { return { ...this.writer.stats } }
  compactedRevision (): Revision { return this.compacted }

  async get (key: string, opts: { revision?: Revision } = {}): Promise<KeyValue | undefined> {
    const res = await this.range({ key: this.keys.key(key), revision: opts.revision ?? 0 }, opts.revision, key)
    return res.kvs.length > 0 ? this.keys.kv(res.kvs[0]) : undefined
  }

  async list (prefix: string, opts: ListOptions = {}): Promise<ListResult> {
    const { key, rangeEnd } = this.keys.range(prefix)
    const start = opts.startKey !== undefined && opts.startKey > prefix ? this.keys.key(opts.startKey) : key
    // Without a revision etcd reads its newest (0): this server's own view may lag writes of other API servers.
    const res = await this.range({ key: start, rangeEnd, revision: opts.revision ?? 0, limit: opts.limit ?? 0 }, opts.revision)
    const items = (res.kvs as Msg[]).map(kv => this.keys.kv(kv))
    return { items, revision: opts.revision ?? res.header.revision, remaining: Math.max(0, res.count - items.length) }
  }

  async count (prefix: string): Promise<number> {
    const { key, rangeEnd } = this.keys.range(prefix)
    return (await this.range({ key, rangeEnd, countOnly: true })).count
  }

  /** etcd's current revision, from a count-only Range of the prefix (one cheap read, as kube-apiserver's). */
  async latestRevision (prefix: string): Promise<Revision> {
    const { key, rangeEnd } = this.keys.range(prefix)
    return (await this.range({ key, rangeEnd, countOnly: true, limit: 1 })).header.revision
  }

  create (key: string, encode: Encoder): Promise<KeyValue> {
    const etcdKey = this.keys.key(key)
    const raw = encode(PENDING_REVISION)
    return this.write({
      key,
      etcdKey,
      compare: [{ key: etcdKey, target: 'CREATE', result: 'EQUAL', createRevision: 0 }],
      success: [{ requestPut: { key: etcdKey, value: raw } }],
      value: raw,
      refused: () => new StorageError('KeyExists', `key ${key} already exists`, key)
    }).then(res => ({ key, value: withRevision(raw, res.revision), createRevision: res.revision, modRevision: res.revision }))
  }

  update (key: string, encode: Encoder, expectedModRevision?: Revision): Promise<KeyValue> {
    const etcdKey = this.keys.key(key)
    const raw = encode(PENDING_REVISION)
    return this.write({
      key,
      etcdKey,
      compare: this.expect(key, expectedModRevision),
      success: [{ requestPut: { key: etcdKey, value: raw, prevKv: true } }],
      value: raw,
      refused: live => this.refusal(key, live)
    }).then(res => ({ key, value: withRevision(raw, res.revision), createRevision: res.prev?.createRevision ?? 0, modRevision: res.revision }))
  }

  delete (key: string, expectedModRevision?: Revision): Promise<KeyValue> {
    const etcdKey = this.keys.key(key)
    return this.write({
      key,
      etcdKey,
      compare: this.expect(key, expectedModRevision),
      success: [{ requestDeleteRange: { key: etcdKey, prevKv: true } }],
      refused: live => this.refusal(key, live)
    }).then(res => ({ ...this.keys.kv(res.prev ?? { key: etcdKey, value: Buffer.alloc(0), createRevision: 0, modRevision: 0 }), modRevision: res.revision }))
  }

  watch (prefix: string, fromRevision: Revision, callbacks: WatchCallbacks): WatchHandle {
    if (this.closed) {
      queueMicrotask(() => callbacks.onError(new StorageError('StoreClosed', 'the store is closed')))
      return { stop () {} }
    }
    const w: EtcdWatch = new EtcdWatch({
      client: this.client,
      keys: this.keys,
      observe: rev => this.observe(rev),
      compacted: rev => { if (rev > this.compacted) this.compacted = rev },
      log: this.log
    }, prefix, fromRevision, {
      onEvents: evs => callbacks.onEvents(evs),
      onError: err => { this.watches.delete(w); callbacks.onError(err) },
      onProgress: rev => callbacks.onProgress?.(rev)
    })
    this.watches.add(w)
    const stop = w.stop.bind(w)
    return { stop: () => { this.watches.delete(w); stop() }, requestProgress: () => w.requestProgress() }
  }

  /** etcd's Compact (physical, so it is done when this resolves); an older revision than the last one is a no-op. */
  async compact (revision: Revision): Promise<void> {
    if (revision <= this.compacted) return
    try {
      await this.client.call('KV', 'Compact', { revision, physical: true }, 60_000)
    } catch (err) {
      if (!isCompactedError(err)) throw toStorageError(err, 'compact')
    }
    this.compacted = Math.max(this.compacted, revision)
  }

  async close (): Promise<void> {
    if (this.closed) return
    this.closed = true
    await this.writer.drain()
    for (const w of [...this.watches]) w.fail(new StorageError('StoreClosed', 'the store is closed'))
    this.watches.clear()
    this.client.close()
  }

  /** etcd keeps its own quota (`--quota-backend-bytes`) and answers NoSpace itself; there is no local file to watch. */
  space (): SpaceStatus {
    return {
      full: false, path: this.client.endpoints.join(','), storeBytes: 0, inUseBytes: 0, freeBytes: 0, quotaBytes: 0,
      reserveBytes: 0, message: `etcd at ${this.client.endpoints.join(',')}`
    }
  }

  onSpaceChange (): () => void { return () => {} }

  private observe (revision: Revision): void {
    if (revision > this.rev) this.rev = revision
  }

  private expect (key: string, expectedModRevision?: Revision): Msg[] {
    return expectedModRevision === undefined
      ? [{ key: this.keys.key(key), target: 'VERSION', result: 'GREATER', version: 0 }]
      : [{ key: this.keys.key(key), target: 'MOD', result: 'EQUAL', modRevision: expectedModRevision }]
  }

  private refusal (key: string, live: Msg | undefined): StorageError {
    if (live === undefined) return new StorageError('NotFound', `key ${key} not found`, key)
    return new StorageError('Conflict', `key ${key} was modified (now at revision ${String(live.modRevision)})`, key, live.modRevision)
  }

  /** A Range with revision errors mapped: compacted or future revisions carry the revision the registry reports. */
  private async range (req: Msg, requested?: Revision, key?: string): Promise<Msg> {
    if (this.closed) throw new StorageError('StoreClosed', 'the store is closed', key)
    try {
      const res = await this.client.call('KV', 'Range', req)
      this.observe(res.header.revision)
      return res
    } catch (err) {
      if (isCompactedError(err)) {
        this.compacted = Math.max(this.compacted, await this.probeCompacted().catch(() => this.compacted))
        throw new StorageError('Compacted', `revision ${requested ?? 0} has been compacted (at ${this.compacted})`, key, this.compacted)
      }
      if (isFutureError(err)) {
        await this.syncRevision().catch(() => {})
        throw new StorageError('FutureRevision', `revision ${requested ?? 0} is newer than the current revision ${this.rev}`, key, this.rev)
      }
      throw toStorageError(err, 'read', key)
    }
  }

  /** Sends one write now, in flight with any others (see TxnWriter). */
  private write (spec: WriteSpec): Promise<Committed> {
    // Refused at the call once closing began; a write sent before close() still commits (close waits for it).
    if (this.closed) return Promise.reject(new StorageError('StoreClosed', 'the store is closed', spec.key))
    return this.writer.submit(spec)
  }

  /** The version of the member answering (Maintenance.Status), e.g. "3.4.23". */
  async serverVersion (): Promise<string> {
    const res = await this.client.call('Maintenance', 'Status', {})
    return String(res.version ?? '')
  }

  private async syncRevision (): Promise<void> {
    const res = await this.client.call('KV', 'Range', { key: PROBE_KEY, countOnly: true })
    this.observe(res.header.revision)
  }

  /**
   * etcd tells no client its compacted revision directly; reads below it fail and reads at it succeed, so a binary
   * search over revision reads of one key finds it (about 20 reads; only at open and after a Compacted answer).
   */
  private async probeCompacted (): Promise<Revision> {
    const readable = async (revision: Revision): Promise<boolean> => {
      try {
        await this.client.call('KV', 'Range', { key: PROBE_KEY, revision, countOnly: true })
        return true
      } catch (err) {
        if (isCompactedError(err)) return false
        throw err
      }
    }
    if (this.rev <= 1 || await readable(1)) return 0
    let lo = 1 // not readable
    let hi = this.rev // readable (the current revision always is)
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2)
      if (await readable(mid)) hi = mid
      else lo = mid
    }
    return hi
  }
}

/**
 * Whether an etcd of this version answers a progress request only after the events queued before it (fixed in 3.4.24
 * and 3.5.8, etcd-io/etcd#15220). One member's answer stands for the cluster; an unknown version counts as not.
 */
export function progressIsReliable (version: string): boolean {
  const m = /^(\d+)\.(\d+)\.(\d+)/.exec(version)
  if (m === null) return false
  const [major, minor, patch] = [Number(m[1]), Number(m[2]), Number(m[3])]
  if (major !== 3) return major > 3
  if (minor === 4) return patch >= 24
  if (minor === 5) return patch >= 8
  return minor > 5
}
