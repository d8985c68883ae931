// Entry point of the LMDB store: the factory the rest of orch imports.
import { LmdbStore } from './lmdb-store.js'
import { resolveOptions, type LmdbStoreOptions } from './options.js'

export { LmdbStore } from './lmdb-store.js'
export type { LmdbStoreOptions, StoreLogger } from './options.js'

/** Opens (or creates) the store in `opts.path`; its compaction timer runs until `close()`. */
export async function openLmdbStore (opts: LmdbStoreOptions): Promise<LmdbStore> {
  return LmdbStore.open(resolveOptions(opts))
}
