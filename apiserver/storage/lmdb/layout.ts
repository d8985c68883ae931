// The on-disk layout of the LMDB store: its sub-databases, record formats, key checks and key ranges.
//
// One LMDB environment, six sub-databases, every value raw bytes (encoding 'binary'; `live` has a second, raw handle
// for joined scans):
//   live  key            -> [createRev f64][modRev f64][value]       the current state; a list at the
//                                                                    current revision is a range scan here
//   log   rev            -> [type u8][createRev f64][prevModRev f64][time f64][keyLen u32][key][value]
//                           one record per revision: the event log for watch replay and the versions for
//                           reads at older revisions (a delete record carries no value: the last value is
//                           the record at prevModRev)
//   hist  [key, rev]     -> [type u8]                                 per-key index of the log, for reads
//                                                                    at an older revision
//   meta  'rev' | 'compacted' | 'compactDone' -> f64; 'indexVersion' -> the StoreIndexer version idx was built with
//   idx   [term, key]    -> empty                                    the index of live values (term-index.ts)
//   terms key            -> the key's terms, '\n' between each two     what idx holds for the key (to update it
//                                                                    without reading the previous value)
// Keys of live and hist use lmdb's ordered-binary encoding: for keys made of printable characters
// (everything orch stores) the order is the byte order of the UTF-8 key.
import { open, type Database, type DatabaseOptions, type Key, type RootDatabase } from 'lmdb'
import { StorageError, type KeyValue, type Revision } from '../store.js'
import { ValueJoiner } from './joiner.js'

export const PUT = 0
export const DEL = 1
export type RecordType = typeof PUT | typeof DEL

/** Longest key accepted, in UTF-8 bytes (LMDB keys are limited to 1978 bytes; hist adds a revision). */
export const MAX_KEY_BYTES = 1024

export interface Layout {
  root: RootDatabase
  live: Database<Buffer, string>
  /** `live` again, read raw: its decoder hands each record to `joiner` and yields the value's length. */
  liveRaw: Database<number, string>
  joiner: ValueJoiner
  log: Database<Buffer, number>
  hist: Database<Buffer, Key>
  meta: Database<Buffer, string>
  idx: Database<Buffer, Key>
  terms: Database<Buffer, string>
}

export function openLayout (path: string): Layout {
  // overlappingSync (lmdb's default on Linux): a commit becomes visible first and durable a little later;
  // the commit queue acknowledges writes only once `root.flushed` says they are durable.
  // eventTurnBatching off: every write here is a transaction callback, and lmdb's event-turn batch would add a
  // commit promise of its own that nothing awaits, whose rejection when a commit fails (a full disk) is unhandled.
  const root = open({ path, encoding: 'binary', eventTurnBatching: false }) as RootDatabase
  const joiner = new ValueJoiner()
  // A custom encoder makes lmdb pass its shared read buffer to the decoder (no copy per record); never written to.
  const rawEncoder = { encode: (): Buffer => { throw new Error('the raw live handle is read-only') }, decode: (b: Uint8Array, size: number) => joiner.take(b, size) }
  return {
    root,
    joiner,
    liveRaw: root.openDB<number, string>({ name: 'live', encoder: rawEncoder } as DatabaseOptions & { name: string }), // encoder: typed only for the root
    live: root.openDB<Buffer, string>({ name: 'live', encoding: 'binary' }),
    log: root.openDB<Buffer, number>({ name: 'log', encoding: 'binary' }),
    hist: root.openDB<Buffer, Key>({ name: 'hist', encoding: 'binary' }),
    meta: root.openDB<Buffer, string>({ name: 'meta', encoding: 'binary' }),
    idx: root.openDB<Buffer, Key>({ name: 'idx', encoding: 'binary' }),
    terms: root.openDB<Buffer, string>({ name: 'terms', encoding: 'binary' })
  }
}

/** Rejects keys the layout cannot hold; the registry never produces them. */
export function checkKey (key: string): void {
  if (typeof key !== 'string' || key.length === 0) {
    throw new StorageError('Internal', 'storage key must be a non-empty string', String(key))
  }
  if (key.charCodeAt(0) < 0x20 || key.includes('\0')) {
    throw new StorageError('Internal', 'storage key must not start with a control character or contain NUL', key)
  }
  if (Buffer.byteLength(key) > MAX_KEY_BYTES) {
    throw new StorageError('Internal', `storage key longer than ${MAX_KEY_BYTES} bytes`, key.slice(0, 64))
  }
}

/** Whether a key or prefix can be looked up at all (longer ones name nothing stored). */
export function fitsKey (key: string): boolean {
  return key.length <= MAX_KEY_BYTES / 3 || Buffer.byteLength(key) <= MAX_KEY_BYTES
}

// ---- numbers (revisions and times are integers below 2^53: a double holds them exactly)

export function encodeNumber (n: number): Buffer {
  const b = Buffer.allocUnsafe(8)
  b.writeDoubleLE(n, 0)
  return b
}

export function readMetaNumber (layout: Layout, name: string): number {
  const b = layout.meta.get(name)
  return b === undefined ? 0 : b.readDoubleLE(0)
}

// ---- live records

export const LIVE_HEADER = 16

export function encodeLive (createRev: Revision, modRev: Revision, value: Buffer): Buffer {
  const b = Buffer.allocUnsafe(LIVE_HEADER + value.length)
  b.writeDoubleLE(createRev, 0)
  b.writeDoubleLE(modRev, 8)
  value.copy(b, LIVE_HEADER)
  return b
}

/** The KeyValue of a live record; `value` is a view into `rec` (which lmdb returned as a fresh copy). */
export function decodeLive (key: string, rec: Buffer): KeyValue {
  return {
    key,
    value: rec.subarray(LIVE_HEADER),
    createRevision: rec.readDoubleLE(0),
    modRevision: rec.readDoubleLE(8)
  }
}

// ---- log records

const LOG_HEADER = 1 + 8 + 8 + 8 + 4

export interface LogRecord {
  type: RecordType
  key: string
  createRev: Revision
  /** Revision of the key's previous version (0 on a create). */
  prevModRev: Revision
  /** Commit time (the store's clock) of the batch that wrote it. */
  time: number
  /** The new value of a put; empty for a delete. */
  value: Buffer
}

export function encodeLog (type: RecordType, key: string, createRev: Revision, prevModRev: Revision,
  time: number, value: Buffer | undefined): Buffer {
  const keyLen = Buffer.byteLength(key)
  const b = Buffer.allocUnsafe(LOG_HEADER + keyLen + (value?.length ?? 0))
  b[0] = type
  b.writeDoubleLE(createRev, 1)
  b.writeDoubleLE(prevModRev, 9)
  b.writeDoubleLE(time, 17)
  b.writeUInt32LE(keyLen, 25)
  b.write(key, LOG_HEADER, keyLen, 'utf8')
  if (value !== undefined) value.copy(b, LOG_HEADER + keyLen)
  return b
}

export function decodeLog (rec: Buffer): LogRecord {
  const keyLen = rec.readUInt32LE(25)
  return {
    type: rec[0] as RecordType,
    createRev: rec.readDoubleLE(1),
    prevModRev: rec.readDoubleLE(9),
    time: rec.readDoubleLE(17),
    key: rec.toString('utf8', LOG_HEADER, LOG_HEADER + keyLen),
    value: rec.subarray(LOG_HEADER + keyLen)
  }
}

export function logTime (rec: Buffer): number {
  return rec.readDoubleLE(17)
}

/** Whether the key of a log record starts with `prefix` (given as UTF-8 bytes), without decoding it. */
export function logKeyHasPrefix (rec: Buffer, prefix: Buffer): boolean {
  const keyLen = rec.readUInt32LE(25)
  return keyLen >= prefix.length && rec.compare(prefix, 0, prefix.length, LOG_HEADER, LOG_HEADER + prefix.length) === 0
}

// ---- key ranges

/**
 * The first key after every key starting with `prefix`, or undefined when there is none that is
 * safe to compute (empty prefix, or a last character that is not a plain BMP character); callers
 * then check `startsWith` themselves.
 */
export function prefixEnd (prefix: string): string | undefined {
  if (prefix === '') return undefined
  const last = prefix.charCodeAt(prefix.length - 1)
  if (last >= 0xd800) return undefined
  return prefix.slice(0, -1) + String.fromCharCode(last + 1)
}

/** Where a scan of `prefix` paged from `startKey` begins. */
export function rangeStart (prefix: string, startKey: string | undefined): string {
  return startKey !== undefined && startKey > prefix ? startKey : prefix
}
