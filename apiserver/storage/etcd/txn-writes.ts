// etcd writes as independent Txns: each compares only its own key, so writes to different keys are in flight together.
import type { StorageError, Revision } from '../store.js'
import { isFailover, type EtcdClient } from './etcd-client.js'
import type { Msg } from './etcd-proto.js'
import { isCompactedError, isFutureError, toStorageError } from './errors.js'

/** A committed write: its revision and the key's kv before it (absent for a create). */
export interface Committed {
  revision: Revision
  prev: Msg | undefined
}

/** One write: the key compares, the ops, the bytes it puts, and how a refusal reads. */
export interface WriteSpec {
  key: string
  etcdKey: Buffer
  compare: Msg[]
  success: Msg[]
  /** The bytes put (as encoded, before the revision is known); undefined for a delete. */
  value?: Buffer
  /** The key's live kv (or undefined) explains why the key compare failed. */
  refused: (live: Msg | undefined) => StorageError
}

export interface TxnWriterHost {
  client: EtcdClient
  observe: (revision: Revision) => void
  /** The newest revision the store has seen (where a lost attempt's search starts). */
  revision: () => Revision
}

/**
 * Sends each write as one Txn of its own as soon as it is submitted: compare-and-swap on the key (create revision 0,
 * or the expected mod_revision), the put or delete, a read of the key when the compare fails. etcd gives it its
 * revision; the order of writes, and of their watch events, is etcd's revision order. A Txn whose answer was lost
 * (member down, timeout) is looked for before it is sent again: the key holding the very bytes it put, or, for a
 * delete, the key gone since it was sent (the revision of the delete found by a search over reads at revisions).
 */
export class TxnWriter {
  readonly stats = { txns: 0, lost: 0 }
  private readonly inflight = new Set<Promise<unknown>>()

  constructor (private readonly host: TxnWriterHost) {}

  submit (spec: WriteSpec): Promise<Committed> {
    const p = this.run(spec)
    const tracked = p.catch(() => {}).finally(() => this.inflight.delete(tracked))
    this.inflight.add(tracked)
    return p
  }

  /** Resolves once every submitted write has settled. */
  async drain (): Promise<void> {
    while (this.inflight.size > 0) await Promise.all([...this.inflight])
  }

  private async run (spec: WriteSpec): Promise<Committed> {
    let failures = 0
    let sentAt: Revision | undefined
    for (;;) {
      if (sentAt !== undefined) {
        const ours = await this.lostCommit(spec, sentAt).catch(err => { throw toStorageError(err, 'write', spec.key) })
        if (ours !== undefined) return ours
      }
      const before = this.host.revision()
      let res: Msg
      this.stats.txns++
      try {
        res = await this.host.client.call('KV', 'Txn', { compare: spec.compare, success: spec.success, failure: [{ requestRange: { key: spec.etcdKey } }] }, undefined, true)
      } catch (err) {
        if (!isFailover(err) || ++failures > 3 * this.host.client.endpoints.length) throw toStorageError(err, 'write', spec.key)
        this.stats.lost++
        sentAt = before
        await sleep(50 * failures)
        continue
      }
      const rev: Revision = res.header.revision
      this.host.observe(rev)
      if (res.succeeded !== true) throw spec.refused(res.responses[0].responseRange.kvs[0] ?? undefined)
      const r0 = res.responses[0]
      return { revision: rev, prev: r0.responsePut?.prevKv ?? r0.responseDeleteRange?.prevKvs?.[0] ?? undefined }
    }
  }

  /** Whether an attempt sent when the store was at `sentAt` committed; how it did if so. */
  private async lostCommit (spec: WriteSpec, sentAt: Revision): Promise<Committed | undefined> {
    const now = await this.host.client.call('KV', 'Range', { key: spec.etcdKey })
    this.host.observe(now.header.revision)
    const live: Msg | undefined = now.kvs[0] ?? undefined
    if (spec.value !== undefined) {
      if (live === undefined || !spec.value.equals(live.value)) return undefined
      const prev = await this.at(spec.etcdKey, live.modRevision - 1)
      return { revision: live.modRevision, prev: prev ?? { key: spec.etcdKey, value: Buffer.alloc(0), createRevision: live.createRevision, modRevision: 0 } }
    }
    if (live !== undefined || !(await this.at(spec.etcdKey, sentAt))) return undefined
    let lo = sentAt // there
    let hi: Revision = now.header.revision // gone
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2)
      const kv = await this.at(spec.etcdKey, mid)
      if (kv === null) return undefined
      if (kv !== undefined) lo = mid
      else hi = mid
    }
    return { revision: hi, prev: await this.at(spec.etcdKey, lo) ?? undefined }
  }

  /** The key's kv at a revision; undefined when absent, null when that revision is not readable. */
  private async at (key: Buffer, revision: Revision): Promise<Msg | undefined | null> {
    try {
      return (await this.host.client.call('KV', 'Range', { key, revision })).kvs[0] ?? undefined
    } catch (err) {
      if (isFutureError(err) || isCompactedError(err)) return null
      throw err
    }
  }
}

function sleep (ms: number): Promise<void> {
  return new Promise(resolve => setTimeout(resolve, ms))
}
