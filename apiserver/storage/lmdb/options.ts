// Options of the LMDB store, with their defaults, and the logger shape it needs (pino's fits).
import type { StoreIndexer } from '../store.js'
import type { SpaceUsage } from './space-guard.js'

export interface StoreLogger {
  info(obj: object, msg?: string): void
  warn(obj: object, msg?: string): void
  error(obj: object, msg?: string): void
}

export interface LmdbStoreOptions {
  /** Directory of the LMDB environment (created if missing). */
  path: string
  /** History younger than this is kept for reads and watches at older revisions. Default 5 minutes. */
  retentionMs?: number
  /** How often the background compaction runs. Default: a tenth of the retention, between 1 s and 30 s. */
  compactionIntervalMs?: number
  /** The clock compaction measures retention with (ms since the epoch). Default Date.now. */
  now?: () => number
  logger?: StoreLogger
  /** Most bytes the store may use (as etcd's `--quota-backend-bytes`); 0 (default): no quota beyond the disk. */
  quotaBytes?: number
  /** Bytes kept free on the file system for deletes, compaction and bookkeeping. Default 1 MiB. */
  reserveBytes?: number
  /** How often the space is measured when no write does it (to notice space freed from elsewhere). Default 2 s. */
  spaceCheckIntervalMs?: number
  /** Measures the store's space (default: its files, LMDB's statistics and statfs); for tests. */
  measureSpace?: (measured: () => SpaceUsage) => SpaceUsage
  /** The terms to index live values by (ListOptions.index); none: no index is kept and indexed lists scan. */
  indexer?: StoreIndexer
}

export interface ResolvedOptions {
  path: string
  retentionMs: number
  compactionIntervalMs: number
  now: () => number
  logger: StoreLogger
  quotaBytes: number
  reserveBytes: number
  /** Headroom needed to leave the full state: a quarter of the reserve, at least 64 KiB. */
  resumeBytes: number
  spaceCheckIntervalMs: number
  measureSpace: (measured: () => SpaceUsage) => SpaceUsage
  indexer?: StoreIndexer
}

export const DEFAULT_RETENTION_MS = 5 * 60 * 1000
export const DEFAULT_RESERVE_BYTES = 1024 * 1024

const silent: StoreLogger = { info () {}, warn () {}, error () {} }

export function resolveOptions (o: LmdbStoreOptions): ResolvedOptions {
  if (typeof o.path !== 'string' || o.path === '') throw new TypeError('openLmdbStore: path is required')
  const retentionMs = o.retentionMs ?? DEFAULT_RETENTION_MS
  if (!Number.isFinite(retentionMs) || retentionMs < 0) throw new TypeError('openLmdbStore: retentionMs must be >= 0')
  const compactionIntervalMs = o.compactionIntervalMs ?? Math.min(30_000, Math.max(1000, retentionMs / 10))
  if (!Number.isFinite(compactionIntervalMs) || compactionIntervalMs <= 0) {
    throw new TypeError('openLmdbStore: compactionIntervalMs must be > 0')
  }
  const quotaBytes = o.quotaBytes ?? 0
  const reserveBytes = o.reserveBytes ?? DEFAULT_RESERVE_BYTES
  for (const [name, v] of [['quotaBytes', quotaBytes], ['reserveBytes', reserveBytes]] as const) {
    if (!Number.isSafeInteger(v) || v < 0) throw new TypeError(`openLmdbStore: ${name} must be a non-negative integer`)
  }
  const spaceCheckIntervalMs = o.spaceCheckIntervalMs ?? 2000
  if (!Number.isFinite(spaceCheckIntervalMs) || spaceCheckIntervalMs <= 0) {
    throw new TypeError('openLmdbStore: spaceCheckIntervalMs must be > 0')
  }
  return {
    path: o.path,
    retentionMs,
    compactionIntervalMs,
    now: o.now ?? Date.now,
    logger: o.logger ?? silent,
    quotaBytes,
    reserveBytes,
    resumeBytes: Math.max(64 * 1024, Math.floor(reserveBytes / 4)),
    spaceCheckIntervalMs,
    measureSpace: o.measureSpace ?? (measured => measured()),
    indexer: o.indexer
  }
}
