// du for a directory tree: the bytes its files and directories take on disk, hard links counted once, as the kubelet's fs.DiskUsage.

import { lstat, opendir } from 'node:fs/promises'
import { join } from 'node:path'

/**
 * The disk space (allocated 512-byte blocks) under `path`, the path itself included; symlinks are not followed and
 * another inode reached twice (a hard link) counts once. Undefined when `path` does not exist; entries that vanish
 * during the walk are skipped.
 */
export async function diskUsage (path: string): Promise<number | undefined> {
  const seen = new Set<string>()
  let total = 0
  async function walk (p: string, top: boolean): Promise<boolean> {
    let st
    try { st = await lstat(p, { bigint: false }) } catch (err) {
      if (top) return false
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return true
      throw err
    }
    const key = `${st.dev}:${st.ino}`
    if (seen.has(key)) return true
    seen.add(key)
    total += st.blocks * 512
    if (!st.isDirectory()) return true
    let dir
    try { dir = await opendir(p) } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return true
      throw err
    }
    for await (const e of dir) await walk(join(p, e.name), false)
    return true
  }
  return await walk(path, true) ? total : undefined
}

/** Measures paths at most once per `ttlMs` each (the eviction manager and the Summary API ask often; a walk is not free). */
export function cachedDiskUsage (ttlMs: number, now: () => number = Date.now): (path: string) => Promise<number | undefined> {
  const cache = new Map<string, { at: number, value: Promise<number | undefined> }>()
  return async path => {
    const t = now()
    for (const [k, v] of cache) if (t - v.at >= ttlMs) cache.delete(k)
    let hit = cache.get(path)
    if (hit === undefined) {
      hit = { at: t, value: diskUsage(path).catch(() => undefined) }
      cache.set(path, hit)
    }
    return await hit.value
  }
}
