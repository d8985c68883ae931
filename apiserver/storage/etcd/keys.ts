// How the store's keys map onto etcd's byte keys: one base prefix, range ends, and the probe key.
import { withRevision, type KeyValue } from '../store.js'
import type { Msg } from './etcd-proto.js'

/** The first key after every key that starts with `prefix` (etcd's range_end for a prefix range). */
export function prefixEnd (prefix: Buffer): Buffer {
  const end = Buffer.from(prefix)
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i] < 0xff) {
      end[i]++
      return end.subarray(0, i + 1)
    }
  }
  return Buffer.from([0]) // every key (etcd: range_end "\0" means no end)
}

export class KeySpace {
  /** Every key of this store lives below `base` (`--etcd-prefix` plus "/"). */
  readonly base: string
  private readonly baseLen: number

  constructor (etcdPrefix: string) {
    this.base = etcdPrefix.replace(/\/+$/, '') + '/'
    this.baseLen = Buffer.byteLength(this.base)
  }

  key (k: string): Buffer {
    return Buffer.from(this.base + k)
  }

  range (prefix: string): { key: Buffer, rangeEnd: Buffer } {
    const key = this.key(prefix)
    return { key, rangeEnd: prefixEnd(key) }
  }

  /** The store key of an etcd key below the base. */
  strip (etcdKey: Buffer): string {
    return etcdKey.subarray(this.baseLen).toString()
  }

  kv (m: Msg): KeyValue {
    return { key: this.strip(m.key), value: withRevision(m.value, m.modRevision), createRevision: m.createRevision, modRevision: m.modRevision }
  }
}

/**
 * A key outside every `--etcd-prefix` ("/..." keys), read (never written) to learn the current and compacted
 * revisions. Until writes became independent Txns every orch write also put it, as a revision guard; it may exist.
 */
export const PROBE_KEY = Buffer.from('\0orch/revision-guard')
