// The storage contract: a revisioned key/value store that knows keys, bytes and revisions, nothing of kinds.

/**
 * One global revision counter: every committed write (create, update, delete) takes the next one.
 * Revisions are positive integers below 2^53; `resourceVersion` is the revision as a decimal string.
 */
export type Revision = number

/** A live key as stored. `value` holds the bytes the encoder produced for `modRevision`. */
export interface KeyValue {
  key: string
  value: Buffer
  /** Revision of the write that created this incarnation of the key. */
  createRevision: Revision
  /** Revision of the last write to the key. */
  modRevision: Revision
}

/**
 * Produces the bytes to store for a write, given the revision the write will commit at, so the bytes can carry their
 * own revision (the registry writes `metadata.resourceVersion` in here). Must be synchronous and must not throw for
 * valid input. A store that learns the revision only from the commit (etcd, whose writes are in flight together)
 * calls it with PENDING_REVISION instead and writes the revision in (`withRevision`) wherever it hands the bytes out:
 * the written KeyValue, reads and watch events. Callers take the stored bytes from the KeyValue a write returns.
 * `source`, when set (encoderWithSource), is the value the bytes encode as the writer holds it parsed: a store's
 * indexer reads it instead of parsing the bytes. The writer must not change it until the write settles.
 */
export type Encoder = ((revision: Revision) => Buffer) & { readonly source?: unknown }

/** `encode` with the parsed value its bytes encode (Encoder.source). */
export function encoderWithSource (encode: (revision: Revision) => Buffer, source: unknown): Encoder {
  return Object.assign(encode, { source })
}

/** The revision a store passes to an encoder before the commit tells it the real one: 2^53 - 1, never reached. */
export const PENDING_REVISION: Revision = Number.MAX_SAFE_INTEGER
const PENDING_DIGITS = String(PENDING_REVISION)
const PENDING_BYTES = Buffer.from(`${PENDING_DIGITS}"`)
const RV_FIELD = Buffer.from('"resourceVersion":"')

/**
 * Bytes encoded for PENDING_REVISION with `revision` written in, once per write, read or watch event (never per
 * watcher). JSON (the registry's objects, metadata first, resourceVersion right after uid) gets it only at the first
 * `"resourceVersion":"` field and only when that field holds the pending revision, so the same digits anywhere else
 * (a name, a ConfigMap's data, a nested field of that name, an object stored with its real revision) stay as they
 * are. Other encodings (the conformance suite's `text@<revision>`) get it at the first occurrence of the digits.
 * Bytes without it come back as they are (the same buffer).
 */
export function withRevision (bytes: Buffer, revision: Revision): Buffer {
  let at: number
  if (bytes[0] === 0x7b || bytes[0] === 0x5b) { // '{' or '[': JSON
    const field = bytes.indexOf(RV_FIELD)
    if (field < 0) return bytes
    at = field + RV_FIELD.length
    if (at + PENDING_BYTES.length > bytes.length || bytes.compare(PENDING_BYTES, 0, PENDING_BYTES.length, at, at + PENDING_BYTES.length) !== 0) return bytes
  } else {
    at = bytes.indexOf(PENDING_DIGITS)
    if (at < 0) return bytes
  }
  return Buffer.concat([bytes.subarray(0, at), Buffer.from(String(revision)), bytes.subarray(at + PENDING_DIGITS.length)])
}

export interface ListOptions {
  /** Read at this retained revision (a consistent snapshot). Default: the current revision. */
  revision?: Revision
  /** First key to return (inclusive); must start with the prefix. Used for paging. */
  startKey?: string
  /** Maximum number of items; 0 or undefined means no limit. */
  limit?: number
  /**
   * Without `revision`: any snapshot at or after this revision will do (resourceVersion "0" or NotOlderThan), so a
   * watch cache in front of the store may answer. Absent: the read is consistent (sees every write acknowledged before
   * it was made).
   */
  notOlderThan?: Revision
  /**
   * The limit pages a scan within one request (a selector filter), not the client's paging: a watch cache may serve
   * every page from the snapshot of the first, at its revision.
   */
  scan?: boolean
  /**
   * The caller needs only to know whether keys follow the page, not how many: `remaining` is then 0 when none does
   * and at least 1 otherwise, so a store may stop at the first key past the page instead of counting the rest (what
   * keeps a walk through many pages linear in the keys).
   */
  noCount?: boolean
  /**
   * Index terms (StoreIndexer) the caller's filter requires one of: a store keeping an index may return only the keys
   * having at least one of them (in key order; `limit` and `remaining` then count those keys), one without returns
   * every key. A hint, never a filter: callers still check every item they get.
   */
  index?: string[]
}

/**
 * The index terms of a stored value (for example `label:app=web`): a store that keeps an index stores (term, key) for
 * each, changed in the same transaction as the value, so it is exact at every revision. Pure and synchronous; a
 * value it cannot read yields no terms. `version` names the term scheme: an index built with another is rebuilt.
 */
export interface StoreIndexer {
  version: string
  /** `source`: the value as its writer parsed it (Encoder.source), when it gave one; the same terms as from `value`. */
  terms(key: string, value: Buffer, source?: unknown): string[]
}

/** Whether a store can keep `term` in its index (printable, at most 512 bytes); queries with others scan. */
export function indexableTerm (term: string): boolean {
  return !/[\x00-\x1f]/.test(term) && (term.length <= 512 / 3 || Buffer.byteLength(term) <= 512)
}

export interface ListResult {
  items: KeyValue[]
  /** The revision the snapshot was read at. */
  revision: Revision
  /** Number of keys under the prefix after the last returned item (at the same revision); see `noCount`. */
  remaining: number
}

/** A page of values joined into one buffer (Store.listJoined). */
export interface JoinedPage {
  /** The values of the page as stored, in key order, `separator` between each two. */
  bytes: Buffer
  /** Number of values in `bytes`. */
  count: number
  /** Key of the last value; undefined for an empty page. */
  lastKey?: string
  /** The revision the snapshot was read at. */
  revision: Revision
  /** 0 when no key follows the page, at least 1 otherwise (ListOptions.noCount). */
  remaining: number
}

export type WatchEventType = 'put' | 'delete'

export interface WatchEvent {
  type: WatchEventType
  key: string
  /** For put: the new value. For delete: the last value before the delete. */
  value: Buffer
  /** For put on an existing key: the value before. Absent on create and on delete. */
  prevValue?: Buffer
  /** Revision of this change. */
  revision: Revision
  /** Create revision of the key the event is about (equals `revision` on a create). */
  createRevision: Revision
}

export interface WatchHandle {
  /** Stops delivery; idempotent. No callback runs after stop() returns. */
  stop(): void
  /** Asks for a progress notification (onProgress) once every change up to the store's current revision is delivered. */
  requestProgress?(): void
}

export interface WatchCallbacks {
  /**
   * Events in revision order, each exactly once, no gaps: every change under the prefix with
   * revision > fromRevision. Called with batches (one or more events of ascending revision).
   */
  onEvents(events: WatchEvent[]): void
  /** Called once when the watch cannot continue (e.g. compacted while catching up, store closed). */
  onError(err: StorageError): void
  /** The watch has delivered every change under the prefix up to `revision` (a progress notification). */
  onProgress?(revision: Revision): void
}

export interface Store {
  /**
   * False when the store's requested progress notifications may run ahead of events still queued for a watch (etcd
   * before 3.4.24 / 3.5.8): a cache must not take them as proof that it holds everything up to their revision.
   */
  readonly reliableProgress?: boolean
  /** The revision of the newest committed write (0 for an empty store). */
  currentRevision(): Revision
  /** The oldest revision still readable; reads and watches from before it fail with Compacted. */
  compactedRevision(): Revision

  /**
   * The value at the key, at the current or a retained older revision; undefined if absent. With `notOlderThan` (and
   * no `revision`) any state at or after that revision will do, so a watch cache in front of the store may answer.
   */
  get(key: string, opts?: { revision?: Revision, notOlderThan?: Revision }): Promise<KeyValue | undefined>
  /** Keys with the prefix, in byte order of the key, from a consistent snapshot. */
  list(prefix: string, opts?: ListOptions): Promise<ListResult>
  /**
   * What `list` with `noCount` reads, with the values joined into one buffer instead of one KeyValue each: a store
   * that can copy values straight from its snapshot into the page saves an allocation per key on long walks.
   * Optional: callers join `list` pages themselves without it.
   */
  listJoined?(prefix: string, opts: ListOptions, separator: Buffer): Promise<JoinedPage>
  /** Number of keys under the prefix at the current revision. */
  count(prefix: string): Promise<number>
  /**
   * The newest revision of the store as its server knows it now (a remote store asks; this process's own view of
   * `currentRevision` may lag writes of other API servers). Absent: `currentRevision()` is always current.
   */
  latestRevision?(prefix: string): Promise<Revision>

  /** Atomically creates the key; fails with KeyExists when it is live. Resolves once durable. */
  create(key: string, encode: Encoder): Promise<KeyValue>
  /**
   * Atomically replaces the value; fails with NotFound when absent and with Conflict when
   * `expectedModRevision` is given and differs from the live modRevision. Resolves once durable.
   */
  update(key: string, encode: Encoder, expectedModRevision?: Revision): Promise<KeyValue>
  /**
   * Atomically removes the key; fails with NotFound or Conflict as update does. Resolves once
   * durable with the removed value and `modRevision` set to the revision of the delete.
   */
  delete(key: string, expectedModRevision?: Revision): Promise<KeyValue>

  /** Streams every change under the prefix after `fromRevision` (see WatchCallbacks). */
  watch(prefix: string, fromRevision: Revision, callbacks: WatchCallbacks): WatchHandle

  /** Drops history older than `revision` (never the live values). */
  compact(revision: Revision): Promise<void>
  /** Flushes and closes; pending writes settle first. Watches end with a StoreClosed error. */
  close(): Promise<void>
  /** How full the store and its file system are, freshly measured when the last look is older than a second. */
  space(): SpaceStatus
  /** Called once per transition into and out of the full state (not per refused write). Returns an unsubscribe. */
  onSpaceChange(listener: (status: SpaceStatus) => void): () => void
}

/**
 * The space a store has left. While `full`, writes other than deletes fail with NoSpace; deletes, compaction and the
 * store's bookkeeping still commit (they use a reserve kept free for them).
 */
export interface SpaceStatus {
  full: boolean
  /** Where the store lives (a directory). */
  path: string
  /** Size of the store's files on disk. */
  storeBytes: number
  /** Bytes the store's data needs (its files hold free pages too, which new writes reuse). */
  inUseBytes: number
  /** Bytes free for the store on its file system (for an unprivileged process). */
  freeBytes: number
  /** The size the store may use (`--storage-quota-bytes`); 0 for no quota beyond the disk. */
  quotaBytes: number
  /** Bytes kept free for deletes, compaction and bookkeeping: other writes stop before touching them. */
  reserveBytes: number
  /** One line for logs, health checks and the 507 answers. */
  message: string
}

export type StorageErrorCode =
  | 'KeyExists' | 'NotFound' | 'Conflict' | 'Compacted' | 'FutureRevision' | 'StoreClosed' | 'Internal'
  /** The store or its file system is full (or at its quota): the write was refused, nothing was written. */
  | 'NoSpace'
  /** A remote store (etcd) could not be reached or did not answer in time; the outcome of a write is unknown. */
  | 'Unavailable'

/** The one storage error; translated to API errors at one seam (registry/storage-errors.ts). */
export class StorageError extends Error {
  readonly code: StorageErrorCode
  readonly key?: string
  /** For Conflict: the live modRevision; for Compacted: the compacted revision; for FutureRevision: current. */
  readonly revision?: Revision

  constructor (code: StorageErrorCode, message: string, key?: string, revision?: Revision) {
    super(message)
    this.name = 'StorageError'
    this.code = code
    this.key = key
    this.revision = revision
  }
}

export function isStorageError (err: unknown, code?: StorageErrorCode): err is StorageError {
  return err instanceof StorageError && (code === undefined || err.code === code)
}
