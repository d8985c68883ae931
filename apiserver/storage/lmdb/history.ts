// Reads inside one LMDB read snapshot: live state (the hot path), state at an older revision, event replay.
import { StorageError, type JoinedPage, type KeyValue, type Revision, type WatchEvent } from '../store.js'
import { DEL, PUT, decodeLive, decodeLog, logKeyHasPrefix, prefixEnd, rangeStart, type Layout } from './layout.js'

/** An lmdb read transaction, as `useReadTransaction` returns it. */
export type ReadTxn = ReturnType<Layout['root']['useReadTransaction']>

export interface Page { items: KeyValue[], remaining: number }

export class HistoryReader {
  constructor (private readonly layout: Layout) {}

  /** The newest revision committed in this snapshot. */
  snapshotRevision (txn: ReadTxn): Revision {
    const b = this.layout.meta.get('rev', { transaction: txn })
    return b === undefined ? 0 : b.readDoubleLE(0)
  }

  getLive (key: string, txn?: ReadTxn): KeyValue | undefined {
    const rec = this.layout.live.get(key, txn === undefined ? undefined : { transaction: txn })
    return rec === undefined ? undefined : decodeLive(key, rec)
  }

  /** A plain range scan of live keys, then a count of the keys after the page (1 for "some" with `noCount`). */
  listLive (prefix: string, startKey: string | undefined, limit: number, txn: ReadTxn, noCount = false): Page {
    const end = prefixEnd(prefix)
    const items: KeyValue[] = []
    let remaining = 0
    for (const { key, value } of this.layout.live.getRange({ start: rangeStart(prefix, startKey), end, transaction: txn })) {
      if (end === undefined && !key.startsWith(prefix)) break
      if (limit > 0 && items.length === limit) {
        remaining = noCount ? 1 : this.countLive(prefix, key, txn)
        break
      }
      items.push(decodeLive(key, value))
    }
    return { items, remaining }
  }

  /**
   * `listLive` with `noCount`, the values joined into one buffer as lmdb reads them (no Buffer per record). The scan
   * reads one record past the page (to know whether more follow) and takes its value back.
   */
  listLiveJoined (prefix: string, startKey: string | undefined, limit: number, txn: ReadTxn, separator: Buffer): Omit<JoinedPage, 'revision'> {
    const end = prefixEnd(prefix)
    const { joiner } = this.layout
    joiner.begin(separator)
    let remaining = 0
    let lastKey: string | undefined
    try {
      for (const { key } of this.layout.liveRaw.getRange({ start: rangeStart(prefix, startKey), end, transaction: txn })) {
        if (end === undefined && !key.startsWith(prefix)) { joiner.dropLast(); break }
        if (limit > 0 && joiner.count > limit) { joiner.dropLast(); remaining = 1; break }
        lastKey = key
      }
    } catch (err) {
      joiner.end()
      throw err
    }
    const count = joiner.count
    return { bytes: joiner.end(), count, lastKey, remaining }
  }

  /** Live keys under `prefix`, from `from` (inclusive) when given. */
  countLive (prefix: string, from: string | undefined, txn?: ReadTxn): number {
    const end = prefixEnd(prefix)
    const start = from ?? prefix
    if (end !== undefined || prefix === '') {
      return this.layout.live.getKeysCount({ start, end, transaction: txn })
    }
    let n = 0
    for (const key of this.layout.live.getKeys({ start, transaction: txn })) {
      if (!key.startsWith(prefix)) break
      n++
    }
    return n
  }

  /** The version of `key` at `rev`: the newest version at or before it, unless that is a delete. */
  getAt (key: string, rev: Revision, txn: ReadTxn): KeyValue | undefined {
    for (const { key: hk, value } of this.layout.hist.getRange({ start: [key, rev], end: [key], reverse: true, limit: 1, transaction: txn })) {
      const modRev = (hk as [string, number])[1]
      return value[0] === PUT ? this.versionAt(key, modRev, txn) : undefined
    }
    return undefined
  }

  /**
   * State at `rev` under `prefix`: per key, the newest version at or before `rev`, scanned from hist; with `noCount`
   * the scan stops at the first live key past the page.
   */
  listAt (prefix: string, startKey: string | undefined, limit: number, rev: Revision, txn: ReadTxn, noCount = false): Page {
    const end = prefixEnd(prefix)
    const items: KeyValue[] = []
    let remaining = 0
    let curKey: string | undefined
    let curRev = 0
    let curType = DEL
    const emit = (): void => {
      if (curKey === undefined || curRev === 0 || curType !== PUT) return
      if (limit > 0 && items.length >= limit) remaining++
      else items.push(this.versionAt(curKey, curRev, txn))
    }
    const range = { start: [rangeStart(prefix, startKey)], end: end === undefined ? undefined : [end], transaction: txn }
    for (const { key: hk, value } of this.layout.hist.getRange(range)) {
      const [k, r] = hk as [string, number]
      if (k !== curKey) {
        emit()
        if (noCount && remaining > 0) { curKey = undefined; break }
        if (end === undefined && !k.startsWith(prefix)) { curKey = undefined; break }
        curKey = k
        curRev = 0
        curType = DEL
      }
      if (r <= rev) {
        curRev = r
        curType = value[0] as typeof PUT | typeof DEL
      }
    }
    emit()
    return { items, remaining }
  }

  /**
   * The events of revisions in (after, upTo] whose key starts with `prefix`, in order, read from the log.
   * Every revision in the range must be retained (the caller checks compaction first).
   */
  readEvents (prefix: Buffer, after: Revision, upTo: Revision, txn: ReadTxn): WatchEvent[] {
    const events: WatchEvent[] = []
    for (const { key, value } of this.layout.log.getRange({ start: after + 1, end: upTo + 1, transaction: txn })) {
      if (!logKeyHasPrefix(value, prefix)) continue
      const rec = decodeLog(value)
      const revision = key
      if (rec.type === PUT) {
        const ev: WatchEvent = { type: 'put', key: rec.key, value: rec.value, revision, createRevision: rec.createRev }
        if (rec.prevModRev !== 0) ev.prevValue = this.valueAt(rec.key, rec.prevModRev, txn)
        events.push(ev)
      } else {
        events.push({ type: 'delete', key: rec.key, value: this.valueAt(rec.key, rec.prevModRev, txn), revision, createRevision: rec.createRev })
      }
    }
    return events
  }

  private versionAt (key: string, modRev: Revision, txn: ReadTxn): KeyValue {
    const b = this.layout.log.get(modRev, { transaction: txn })
    if (b === undefined) throw missingVersion(key, modRev)
    const rec = decodeLog(b)
    return { key, value: rec.value, createRevision: rec.createRev, modRevision: modRev }
  }

  private valueAt (key: string, modRev: Revision, txn: ReadTxn): Buffer {
    return this.versionAt(key, modRev, txn).value
  }
}

function missingVersion (key: string, rev: Revision): StorageError {
  return new StorageError('Internal', `history record of revision ${rev} is missing`, key, rev)
}
