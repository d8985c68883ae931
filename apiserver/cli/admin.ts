// `orch admin ...`: offline maintenance of a data directory (for now `defrag`).

import { join } from 'node:path'
import { defragStore, holders } from '../storage/lmdb/defrag.js'

export interface AdminIo {
  out(text: string): void
  err(text: string): void
}

/** `orch admin defrag`: the store in DIR/store rewritten compacted, offline. Returns the exit code. */
export async function defrag (dataDir: string, io: AdminIo): Promise<number> {
  const path = join(dataDir, 'store')
  const users = holders(path)
  if (users === undefined) {
    io.err(`orch: cannot tell whether a process uses ${path} (no /proc/locks): make sure no orch serves it\n`)
  } else if (users.length > 0) {
    io.err(`orch: ${path} is in use by process ${users.join(', ')}: stop the orch serving it first (defrag is offline)\n`)
    return 1
  }
  const r = await defragStore(path)
  io.out(`defragmented ${r.path}: ${r.beforeBytes} -> ${r.afterBytes} bytes\n`)
  return 0
}

