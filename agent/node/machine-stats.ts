// Node-level usage read from /proc and statfs: CPU time, memory, the root filesystem and the process limit.

import { readFileSync, statfsSync } from 'node:fs'

/** USER_HZ on Linux: /proc/stat counts CPU time in 1/100 s. */
const NS_PER_TICK = 1e9 / 100

function read (path: string): string {
  try { return readFileSync(path, 'utf8') } catch { return '' }
}

/** Busy CPU time of the whole machine in nanoseconds (user, nice, system, irq, softirq, steal). */
export function cpuUsageNanoSeconds (procRoot = '/proc'): number | undefined {
  const line = read(`${procRoot}/stat`).split('\n').find(l => l.startsWith('cpu '))
  if (line === undefined) return undefined
  const f = line.trim().split(/\s+/).slice(1).map(Number)
  const busy = (f[0] ?? 0) + (f[1] ?? 0) + (f[2] ?? 0) + (f[5] ?? 0) + (f[6] ?? 0) + (f[7] ?? 0)
  return Math.round(busy * NS_PER_TICK)
}

/** Boot time (ms since the epoch) from /proc/stat's btime: the root cgroup's start, which the kubelet reports as the node's. */
export function bootTimeMs (procRoot = '/proc'): number | undefined {
  const m = /^btime (\d+)$/m.exec(read(`${procRoot}/stat`))
  return m ? Number(m[1]) * 1000 : undefined
}

export interface MemoryUsage { usageBytes: number; workingSetBytes: number; availableBytes: number; rssBytes: number; pageFaults: number; majorPageFaults: number }

/**
 * The machine's memory as cAdvisor reports the root cgroup: usage counts the page cache, the working
 * set leaves out inactive file pages, and available is capacity minus the working set.
 */
export function memoryUsage (procRoot = '/proc'): MemoryUsage | undefined {
  const info = new Map<string, number>()
  for (const l of read(`${procRoot}/meminfo`).split('\n')) {
    const m = /^([^:]+):\s+(\d+)(?: kB)?$/.exec(l)
    if (m) info.set(m[1]!, Number(m[2]) * 1024)
  }
  const total = info.get('MemTotal')
  if (total === undefined) return undefined
  const usage = total - (info.get('MemFree') ?? 0)
  const workingSet = Math.max(0, usage - (info.get('Inactive(file)') ?? 0))
  const vm = new Map(read(`${procRoot}/vmstat`).split('\n').map(l => l.split(' ') as [string, string]).map(([key, v]) => [key, Number(v)]))
  return { usageBytes: usage, workingSetBytes: workingSet, availableBytes: total - workingSet, rssBytes: info.get('AnonPages') ?? 0, pageFaults: vm.get('pgfault') ?? 0, majorPageFaults: vm.get('pgmajfault') ?? 0 }
}

export interface FsUsage { availableBytes: number; capacityBytes: number; usedBytes: number; inodesFree: number; inodes: number; inodesUsed: number }

/** The filesystem holding `path` (the orchlet's root dir: nodefs). */
export function fsUsage (path: string): FsUsage | undefined {
  try {
    const s = statfsSync(path)
    return {
      availableBytes: s.bavail * s.bsize,
      capacityBytes: s.blocks * s.bsize,
      usedBytes: (s.blocks - s.bfree) * s.bsize,
      inodesFree: s.ffree,
      inodes: s.files,
      inodesUsed: s.files - s.ffree
    }
  } catch { return undefined }
}

/**
 * The kubelet's pidlimit.Stats: the lower of kernel.pid_max and kernel.threads-max, and the tasks now
 * running (the total after the slash in /proc/loadavg).
 */
export function processLimits (procRoot = '/proc'): { maxpid?: number; curproc?: number } {
  const limits = [read(`${procRoot}/sys/kernel/pid_max`), read(`${procRoot}/sys/kernel/threads-max`)].map(s => Number.parseInt(s.trim(), 10)).filter(n => Number.isFinite(n))
  const m = /^\S+ \S+ \S+ \d+\/(\d+)/.exec(read(`${procRoot}/loadavg`))
  return { ...(limits.length > 0 ? { maxpid: Math.min(...limits) } : {}), ...(m ? { curproc: Number(m[1]) } : {}) }
}
