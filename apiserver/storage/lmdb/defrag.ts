// Offline defragmentation of the LMDB store: a compacted copy (LMDB's compacting copy: live pages only, renumbered)
// made beside the store, made durable, then swapped in with one rename.
//
// LMDB's data file never shrinks: pages freed by deletes and compaction are reused, not returned to the file system.
// The copy returns them. A crash at any point leaves either the old file or the new one, never a mix; a copy left
// over by a crash is removed by the next run. Offline only: a process holding the store open (a running orch) would
// keep writing to the old file, so the store must not be in use (see `holders`).
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { open, type RootDatabase } from 'lmdb'

export interface DefragResult {
  path: string
  /** Size of the data file before and after. */
  beforeBytes: number
  afterBytes: number
}

/**
 * Process ids holding POSIX locks on the store's lock file (every process with the environment open holds one),
 * from /proc/locks; undefined when that cannot be read (not Linux).
 */
export function holders (path: string, locks = '/proc/locks'): number[] | undefined {
  const lockFile = join(path, 'lock.mdb')
  if (!existsSync(lockFile)) return []
  let text: string
  try {
    text = readFileSync(locks, 'utf8')
  } catch {
    return undefined
  }
  const st = statSync(lockFile)
  const dev = Number(st.dev)
  const major = (dev >> 8) & 0xfff
  const minor = (dev & 0xff) | ((dev >> 12) & 0xfff00)
  const id = `${major.toString(16).padStart(2, '0')}:${minor.toString(16).padStart(2, '0')}:${st.ino}`
  const pids = new Set<number>()
  for (const line of text.split('\n')) {
    // "1: POSIX  ADVISORY  READ 313 fe:00:2278616 0 0" (a blocked waiter's line starts with "1: ->")
    const f = line.replace('->', '').trim().split(/\s+/)
    if (f.length >= 6 && f[5] === id) pids.add(Number(f[4]))
  }
  pids.delete(process.pid)
  return [...pids]
}

function fsyncPath (p: string): void {
  const fd = openSync(p, 'r')
  try {
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

/** Rewrites the store at `path` compacted. The caller has made sure no process holds it open. */
export async function defragStore (path: string): Promise<DefragResult> {
  const data = join(path, 'data.mdb')
  if (!existsSync(data)) throw new Error(`no store at ${path} (no data.mdb)`)
  const beforeBytes = statSync(data).size
  const copy = `${path}-defrag`
  rmSync(copy, { recursive: true, force: true }) // a copy left by an interrupted run
  mkdirSync(copy)
  try {
    const root = open({ path, encoding: 'binary', eventTurnBatching: false }) as RootDatabase
    try {
      await root.backup(copy, true)
    } finally {
      await root.close()
    }
    const fresh = join(copy, 'data.mdb')
    fsyncPath(fresh)
    renameSync(fresh, data)
    fsyncPath(path)
    // the reader table of the old file means nothing for the new one; LMDB makes a new lock file on open
    rmSync(join(path, 'lock.mdb'), { force: true })
  } finally {
    rmSync(copy, { recursive: true, force: true })
  }
  return { path, beforeBytes, afterBytes: statSync(data).size }
}
