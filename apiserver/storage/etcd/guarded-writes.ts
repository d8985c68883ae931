// Guarded etcd writes in waves: every queued write is sent at once, each Txn expecting the revision its turn gives it.
import { StorageError, type Revision } from '../store.js'
import { isFailover, type EtcdClient } from './etcd-client.js'
import type { Msg } from './etcd-proto.js'
import { isCompactedError, isFutureError, toStorageError } from './errors.js'
import { GUARD_KEY } from './keys.js'

/** A committed write: its revision and the key's value before it (absent for a create). */
export interface Committed {
  revision: Revision
  prev: Msg
}

/** What one guarded write does: the request ops, given the revision it will commit at, and how a refusal reads. */
export interface WriteSpec {
  key: string
  etcdKey: Buffer
  compare: Msg[]
  success: (revision: Revision) => Msg[]
  /** The bytes the last success() call wrote (undefined for a delete). */
  written: () => Buffer | undefined
  /** The key's live kv (or undefined) explains why the key compare failed. */
  refused: (live: Msg | undefined) => StorageError
}

interface Pending {
  spec: WriteSpec
  resolve: (c: Committed) => void
  reject: (err: StorageError) => void
  /** The revision an attempt whose answer was lost (member down, timeout) would have committed at. */
  lost?: Revision
  failures: number
  attempts: number
}

export interface GuardedWriterHost {
  client: EtcdClient
  observe: (revision: Revision) => void
  log: (msg: string) => void
  /** Most writes sent together (default 256). */
  maxWave?: number
}

/**
 * Every write puts the guard key in its Txn and compares the guard's mod_revision with the revision the write before
 * it in the wave will commit at, so a Txn that succeeds committed at exactly that revision + 1: the revision its
 * encoder was given. A wave sends every queued write at once (write i of the wave expects guard + i + 1), so writes
 * to different keys are in flight together and commit in etcd's revision order; the wave's answers move the guard.
 * A write whose Txn failed while the guard compare held was refused by its key compare (a definite NotFound,
 * KeyExists or Conflict); any other failure (etcd applied the wave out of order, another API server wrote, an earlier
 * write of the wave was refused) sends it again in the next wave, before writes queued later.
 */
export class GuardedWriter {
  /** mod_revision of the guard key as last seen. */
  guard: Revision = 0
  private queue: Pending[] = []
  private running = false
  private idleWaiters: Array<() => void> = []
  private readonly maxWave: number

  constructor (private readonly host: GuardedWriterHost) {
    this.maxWave = host.maxWave ?? 256
  }

  submit (spec: WriteSpec): Promise<Committed> {
    return new Promise((resolve, reject) => {
      this.queue.push({ spec, resolve, reject, failures: 0, attempts: 0 })
      this.kick()
    })
  }

  /** Resolves once every submitted write has settled. */
  drain (): Promise<void> {
    if (!this.running && this.queue.length === 0) return Promise.resolve()
    return new Promise(resolve => this.idleWaiters.push(resolve))
  }

  private kick (): void {
    if (this.running) return
    if (this.queue.length === 0) {
      for (const w of this.idleWaiters.splice(0)) w()
      return
    }
    this.running = true
    const wave = this.queue.splice(0, this.maxWave)
    this.runWave(wave).catch(err => { for (const p of wave) p.reject(toStorageError(err, 'write', p.spec.key)) })
      .finally(() => { this.running = false; this.kick() })
  }

  private async runWave (wave: Pending[]): Promise<void> {
    const ready: Pending[] = []
    for (const p of wave) {
      if (p.lost !== undefined) {
        const lost = p.lost
        p.lost = undefined
        try {
          const ours = await this.lostCommit(p.spec, lost)
          if (ours !== undefined) { this.guard = Math.max(this.guard, lost); p.resolve(ours); continue }
        } catch (err) {
          p.reject(toStorageError(err, 'write', p.spec.key))
          continue
        }
      }
      ready.push(p)
    }
    const base = this.guard
    const retry: Array<Pending | undefined> = await Promise.all(ready.map((p, i) => this.attempt(p, base + i)))
    this.queue.unshift(...retry.filter((p): p is Pending => p !== undefined))
  }

  /** One Txn expecting the guard at `prevGuard`; settles the write or returns it to be sent again. */
  private async attempt (p: Pending, prevGuard: Revision): Promise<Pending | undefined> {
    const expected = prevGuard + 1
    const { spec } = p
    let res: Msg
    try {
      res = await this.host.client.call('KV', 'Txn', {
        compare: [{ key: GUARD_KEY, target: 'MOD', result: 'EQUAL', modRevision: prevGuard }, ...spec.compare],
        success: [...spec.success(expected), { requestPut: { key: GUARD_KEY, value: Buffer.alloc(0) } }],
        failure: [{ requestRange: { key: GUARD_KEY } }, { requestRange: { key: spec.etcdKey } }]
      }, undefined, true)
    } catch (err) {
      if (!isFailover(err) || ++p.failures > 3 * this.host.client.endpoints.length) {
        p.reject(toStorageError(err, 'write', spec.key))
        return undefined
      }
      p.lost = expected
      await sleep(50 * p.failures)
      return p
    }
    const rev: Revision = res.header.revision
    this.host.observe(rev)
    if (res.succeeded === true) {
      this.guard = Math.max(this.guard, rev)
      if (rev !== expected) this.host.log(`etcd: a write outside orch moved the revision; ${spec.key} committed at ${rev}, encoded for ${expected}`)
      const r0 = res.responses[0]
      p.resolve({ revision: rev, prev: r0.responsePut?.prevKv ?? r0.responseDeleteRange?.prevKvs?.[0] })
      return undefined
    }
    const guardMod: Revision = res.responses[0].responseRange.kvs[0]?.modRevision ?? 0
    this.guard = Math.max(this.guard, guardMod)
    if (guardMod === prevGuard) {
      p.reject(spec.refused(res.responses[1].responseRange.kvs[0] ?? undefined))
      return undefined
    }
    if (++p.attempts > 100) {
      p.reject(new StorageError('Internal', `etcd write of ${spec.key}: the revision guard kept moving`, spec.key))
      return undefined
    }
    return p
  }

  /**
   * Whether the attempt whose answer was lost committed at `revision`: the key holds that attempt's bytes from it
   * (or, for a delete, was there just before it and is gone at it). A revision not yet reached means it did not.
   */
  private async lostCommit (spec: WriteSpec, revision: Revision): Promise<Committed | undefined> {
    const at = async (rev: Revision): Promise<Msg | undefined | null> => {
      try {
        return (await this.host.client.call('KV', 'Range', { key: spec.etcdKey, revision: rev })).kvs[0] ?? undefined
      } catch (err) {
        if (isFutureError(err) || isCompactedError(err)) return null
        throw err
      }
    }
    const value = spec.written()
    const now = await at(revision)
    if (now === null) return undefined
    if (value === undefined ? now !== undefined : (now?.modRevision !== revision || !value.equals(now.value))) return undefined
    const before = await at(revision - 1)
    if (before === null || (value === undefined && before === undefined)) return undefined
    return { revision, prev: before as Msg }
  }
}

function sleep (ms: number): Promise<void> {
  return new Promise(resolve => setTimeout(resolve, ms))
}
