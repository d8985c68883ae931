// Options of the LMDB store, with their defaults, and the logger shape it needs (pino's fits).

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
}

export interface ResolvedOptions {
  path: string
  retentionMs: number
  compactionIntervalMs: number
  now: () => number
  logger: StoreLogger
}

export const DEFAULT_RETENTION_MS = 5 * 60 * 1000

const silent: StoreLogger = { info () {}, warn () {}, error () {} }

export function resolveOptions (o: LmdbStoreOptions): ResolvedOptions {
  if (typeof o.path !== 'string' || o.path === '') throw new TypeError('openLmdbStore: path is required')
  const retentionMs = o.retentionMs ?? DEFAULT_RETENTION_MS
  if (!Number.isFinite(retentionMs) || retentionMs < 0) throw new TypeError('openLmdbStore: retentionMs must be >= 0')
  const compactionIntervalMs = o.compactionIntervalMs ?? Math.min(30_000, Math.max(1000, retentionMs / 10))
  if (!Number.isFinite(compactionIntervalMs) || compactionIntervalMs <= 0) {
    throw new TypeError('openLmdbStore: compactionIntervalMs must be > 0')
  }
  return { path: o.path, retentionMs, compactionIntervalMs, now: o.now ?? Date.now, logger: o.logger ?? silent }
}
