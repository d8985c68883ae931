// The term index of live values: (term, key) entries written in the transaction of each value, read by indexed LISTs.
import { StorageError, indexableTerm, type Revision, type StoreIndexer } from '../store.js'
import type { ReadTxn } from './history.js'
import { LIVE_HEADER, encodeNumber, prefixEnd, rangeStart, readMetaNumber, type Layout } from './layout.js'

const EMPTY = Buffer.alloc(0)
const VERSION_KEY = 'indexVersion'
const LAYOUT_VERSION = 'idx2'
/** The revision of the last write the index took: behind 'rev' after writes by a build that keeps no index. */
const REV_KEY = 'indexRev'

/** The keys of one page of an indexed list, in key order; `remaining` as ListResult's (1 for "some" with noCount). */
export interface Candidates { keys: string[], remaining: number }

/**
 * Without an indexer the store keeps no entries (and drops an index left by an earlier run, so a later run with one
 * rebuilds it instead of trusting entries that missed writes). A build that knows no index at all leaves it as it is
 * but moves 'rev' past 'indexRev' with its first write: the next run with the index rebuilds it then too.
 */
export class TermIndex {
  constructor (private readonly layout: Layout, private readonly indexer: StoreIndexer | undefined) {}

  /** Builds the index from the live values when it is missing or was built by another term scheme; run before any write. */
  prepare (): { rebuilt: boolean, entries: number } {
    const { root, meta, idx, live, terms: termsDb } = this.layout
    const stored = meta.get(VERSION_KEY)?.toString()
    // the layout of idx and terms is part of the version: an index of an older layout is rebuilt too
    const wanted = this.indexer === undefined ? undefined : `${LAYOUT_VERSION}:${this.indexer.version}`
    const current = stored !== undefined && readMetaNumber(this.layout, REV_KEY) === readMetaNumber(this.layout, 'rev')
    if (stored === wanted && (wanted === undefined || current)) return { rebuilt: false, entries: 0 }
    let entries = 0
    root.transactionSync(() => {
      idx.clearSync()
      termsDb.clearSync()
      if (wanted === undefined) {
        meta.removeSync(VERSION_KEY)
        return
      }
      for (const { key, value } of live.getRange({})) {
        const terms = this.termsOf(key, value.subarray(LIVE_HEADER))
        for (const term of terms) idx.putSync([term, key], EMPTY)
        if (terms.length > 0) termsDb.putSync(key, Buffer.from(terms.join('\n')))
        entries += terms.length
      }
      meta.putSync(VERSION_KEY, Buffer.from(wanted))
      meta.putSync(REV_KEY, encodeNumber(readMetaNumber(this.layout, 'rev')))
    })
    return { rebuilt: wanted !== undefined, entries }
  }

  /**
   * Inside the write transaction of revision `rev`: moves the entries of `key` to those of its value `next`
   * (undefined: deleted). The entries it had come from `terms`, so only the new value is read (or `source`, the
   * value as its writer parsed it). The transaction's writer calls `applied` after its last change.
   */
  change (key: string, next: Buffer | undefined, rev: Revision, source?: unknown): void {
    if (this.indexer === undefined) return
    const { idx, terms: termsDb } = this.layout
    const had = termsDb.get(key)?.toString() ?? ''
    const after = next === undefined ? [] : this.termsOf(key, next, source)
    const joined = after.join('\n')
    if (joined === had) return
    const before = had === '' ? [] : had.split('\n')
    for (const t of before) if (!after.includes(t)) idx.removeSync([t, key])
    for (const t of after) if (!before.includes(t)) idx.putSync([t, key], EMPTY)
    if (joined === '') termsDb.removeSync(key)
    else termsDb.putSync(key, Buffer.from(joined))
  }

  /**
   * Inside a write transaction, after its changes: the index has taken every write up to `lastRev` (written once per
   * transaction rather than with each change, as a batch commits many; only its last value was ever read).
   */
  applied (lastRev: Revision): void {
    if (this.indexer === undefined) return
    this.layout.meta.putSync(REV_KEY, encodeNumber(lastRev))
  }

  /**
   * Keys under `prefix` (from `startKey`) having at least one of `terms`, at the snapshot of `txn` (which must read the
   * live state); undefined when the index cannot answer (none kept, or a term it never holds), so the caller scans.
   */
  candidates (prefix: string, startKey: string | undefined, terms: string[], limit: number, noCount: boolean, txn: ReadTxn): Candidates | undefined {
    if (this.indexer === undefined || terms.length === 0 || !terms.every(indexableTerm)) return undefined
    const end = prefixEnd(prefix)
    const start = rangeStart(prefix, startKey)
    const perTerm = noCount && limit > 0 ? limit + 1 : 0
    let keys: string[] = []
    for (const term of new Set(terms)) {
      let n = 0
      const range = { start: [term, start], end: end === undefined ? undefined : [term, end], transaction: txn }
      for (const k of this.layout.idx.getKeys(range)) {
        const [t, key] = k as [string, string]
        if (t !== term || !key.startsWith(prefix)) break
        keys.push(key)
        if (perTerm > 0 && ++n === perTerm) break
      }
    }
    if (terms.length > 1) keys = [...new Set(keys)].sort((a, b) => a < b ? -1 : a > b ? 1 : 0)
    if (limit === 0 || keys.length <= limit) return { keys, remaining: 0 }
    return { keys: keys.slice(0, limit), remaining: noCount ? 1 : keys.length - limit }
  }

  private termsOf (key: string, value: Buffer, source?: unknown): string[] {
    let terms: string[]
    try {
      terms = (this.indexer as StoreIndexer).terms(key, value, source)
    } catch (err) {
      throw new StorageError('Internal', `index terms of ${key}: ${String(err)}`, key)
    }
    return terms.filter(indexableTerm)
  }
}
