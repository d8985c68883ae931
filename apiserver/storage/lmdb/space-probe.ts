// Measuring the LMDB store's space (its files, the pages in use, its file system's free bytes), and reading why an
// LMDB commit failed.
import { statSync, statfsSync } from 'node:fs'
import { join } from 'node:path'
import type { Layout } from './layout.js'
import type { SpaceUsage } from './space-guard.js'

interface DbStat { pageSize: number, treeBranchPageCount: number, treeLeafPageCount: number, overflowPages: number }
interface EnvStat extends DbStat { free: DbStat }

const pages = (s: DbStat): number => s.treeBranchPageCount + s.treeLeafPageCount + s.overflowPages

/**
 * Pages in use are counted from LMDB's statistics (the two meta pages, the main and free-list trees, and every
 * sub-database); the rest of the data file is free pages that new writes reuse. About 20 µs.
 */
export function measureLmdb (layout: Layout, path: string): SpaceUsage {
  const env = layout.root.getStats() as EnvStat
  let inUse = 2 + pages(env) + pages(env.free)
  for (const db of [layout.live, layout.log, layout.hist, layout.meta]) inUse += pages(db.getStats() as DbStat)
  const data = statSync(join(path, 'data.mdb'))
  const lock = statSync(join(path, 'lock.mdb'), { throwIfNoEntry: false })
  const fs = statfsSync(path)
  return {
    storeBytes: data.size + (lock?.size ?? 0),
    inUseBytes: inUse * env.pageSize,
    freeBytes: fs.bavail * fs.bsize
  }
}

/** errno values (and LMDB's MDB_MAP_FULL) that mean "no space" outright. */
const SPACE_CODES = new Set<number | string>([28, 'ENOSPC', 122, 'EDQUOT', 27, 'EFBIG', -30792, 'MDB_MAP_FULL'])
const EIO = new Set<number | string>([5, 'EIO'])

/**
 * What a failed commit's cause says: `space` for ENOSPC, EDQUOT, EFBIG or MDB_MAP_FULL; `io` for EIO, which LMDB
 * also reports when a page write came up short (what a full file system does to it).
 */
export function classifyCommitError (cause: unknown): { space: boolean, io: boolean } {
  const code = (cause as { code?: unknown } | undefined)?.code
  const text = cause instanceof Error ? cause.message : String(cause)
  const known = typeof code === 'number' || typeof code === 'string' ? code : undefined
  return {
    space: (known !== undefined && SPACE_CODES.has(known)) || /MDB_MAP_FULL|ENOSPC|No space left/i.test(text),
    io: (known !== undefined && EIO.has(known)) || /Input\/output error/i.test(text)
  }
}

/** Longest wait for lmdb's `commitError` to settle (it settles in the same turn as the failure). */
const CAUSE_WAIT_MS = 1000

/**
 * The underlying error of a failed lmdb commit. lmdb rejects the transaction with a generic "Commit failed" error
 * whose `commitError` is a promise rejected with the real one (e.g. EIO, code 5); a handler is attached to it here,
 * as nothing else would handle it and an unhandled rejection ends the process.
 */
export async function commitCause (err: unknown): Promise<unknown> {
  const pending = (err as { commitError?: unknown } | undefined)?.commitError
  if (pending === null || typeof pending !== 'object' || typeof (pending as { then?: unknown }).then !== 'function') return err
  const settled = Promise.resolve(pending as Promise<unknown>).then(() => err, (cause: unknown) => cause)
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<unknown>(resolve => { timer = setTimeout(() => resolve(err), CAUSE_WAIT_MS) })
  try {
    return await Promise.race([settled, late])
  } finally {
    clearTimeout(timer)
  }
}
