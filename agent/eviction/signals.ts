// The eviction signals' observations from the node's real figures: root memory cgroup, statfs of nodefs and imagefs, pids.

import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fsUsage, memoryUsage, processLimits, type FsUsage } from '../node/machine-stats.js'
import type { Observations } from './thresholds.js'

function read (path: string): string | undefined {
  try { return readFileSync(path, 'utf8') } catch { return undefined }
}

function statField (text: string, key: string): number | undefined {
  const m = new RegExp(`^${key} (\\d+)$`, 'm').exec(text)
  return m ? Number(m[1]) : undefined
}

/** A cgroup v1 memory cgroup's usage and working set (usage less total_inactive_file); undefined when unreadable. */
export function memcgUsage (dir: string): { usage: number, workingSet: number } | undefined {
  const usage = read(join(dir, 'memory.usage_in_bytes'))
  const stat = read(join(dir, 'memory.stat'))
  if (usage === undefined || stat === undefined) return undefined
  const bytes = Number(usage.trim())
  return { usage: bytes, workingSet: Math.max(0, bytes - (statField(stat, 'total_inactive_file') ?? 0)) }
}

/**
 * The node's memory working set as the kubelet computes it: the root memory cgroup's usage less its inactive
 * file pages (cgroup v1: memory.usage_in_bytes and total_inactive_file; v2: memory.current and inactive_file),
 * falling back to /proc/meminfo where the root cgroup shows no memory figures (cgroup v2's root). `usage` is the
 * cgroup's usage itself (the memcg threshold notification is set on it).
 */
export function nodeMemory (cgroupRoot = '/sys/fs/cgroup', procRoot = '/proc'): { capacity: number, workingSet: number, usage: number } | undefined {
  const info = memoryUsage(procRoot)
  if (info === undefined) return undefined
  const capacity = info.availableBytes + info.workingSetBytes
  const v1 = memcgUsage(join(cgroupRoot, 'memory'))
  if (v1 !== undefined) return { capacity, ...v1 }
  const v2Usage = read(join(cgroupRoot, 'memory.current'))
  const v2Stat = read(join(cgroupRoot, 'memory.stat'))
  if (v2Usage !== undefined && v2Stat !== undefined) {
    const usage = Number(v2Usage.trim())
    return { capacity, usage, workingSet: Math.max(0, usage - (statField(v2Stat, 'inactive_file') ?? 0)) }
  }
  return { capacity, workingSet: info.workingSetBytes, usage: info.workingSetBytes }
}

export interface SignalSources {
  /** nodefs: the orchlet's root dir. */
  rootDir: string
  /** imagefs: where the runtime keeps images (absent: same as nodefs). */
  imageDir?: string
  cgroupRoot?: string
  procRoot?: string
  /** Node allocatable memory in bytes (capacity less reservations), for allocatableMemory.available. */
  allocatableMemoryBytes: number
  /** The pods' summed memory working set (their stats). */
  podsWorkingSetBytes(): Promise<number>
}

function fsSignals (fs: FsUsage | undefined, bytes: 'nodefs.available' | 'imagefs.available', inodes: 'nodefs.inodesFree' | 'imagefs.inodesFree'): Observations {
  if (fs === undefined) return {}
  return {
    [bytes]: { available: fs.availableBytes, capacity: fs.capacityBytes },
    ...(fs.inodes > 0 ? { [inodes]: { available: fs.inodesFree, capacity: fs.inodes } } : {})
  }
}

/** Reads every signal now; a signal whose source cannot be read is left out (never met). */
export async function observeSignals (s: SignalSources): Promise<Observations> {
  const out: Observations = {}
  const mem = nodeMemory(s.cgroupRoot, s.procRoot)
  if (mem !== undefined) out['memory.available'] = { available: mem.capacity - mem.workingSet, capacity: mem.capacity }
  const podsWs = await s.podsWorkingSetBytes()
  out['allocatableMemory.available'] = { available: s.allocatableMemoryBytes - podsWs, capacity: s.allocatableMemoryBytes }
  Object.assign(out, fsSignals(fsUsage(s.rootDir), 'nodefs.available', 'nodefs.inodesFree'))
  Object.assign(out, fsSignals(fsUsage(s.imageDir ?? s.rootDir), 'imagefs.available', 'imagefs.inodesFree'))
  const pids = processLimits(s.procRoot)
  if (pids.maxpid !== undefined && pids.curproc !== undefined) out['pid.available'] = { available: pids.maxpid - pids.curproc, capacity: pids.maxpid }
  return out
}
