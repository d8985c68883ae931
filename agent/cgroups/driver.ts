// Cgroup drivers: cgroupfs on cgroup v1 (one tree per controller) and v2 (the unified tree), and systemd's slice naming.

import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

/** What the orchlet sets on a cgroup; absent fields are left as they are. */
export interface CgroupResources {
  cpuShares?: number
  /** CFS quota in µs per period; -1 for none. */
  cpuQuotaUs?: number
  cpuPeriodUs?: number
  /** Bytes; -1 for no limit. */
  memoryLimitBytes?: number
  /** -1 for no limit. */
  pidsMax?: number
}

export class CgroupError extends Error {
  constructor (message: string) { super(message); this.name = 'CgroupError' }
}

export interface CgroupDriver {
  readonly kind: 'cgroupfs-v1' | 'cgroupfs-v2' | 'systemd'
  /** The name a runtime is given as the cgroup parent (CRI linux.cgroup_parent). */
  runtimeName(name: readonly string[]): string
  exists(name: readonly string[]): boolean
  /** Creates the cgroup (and its parents) and applies `res`. */
  ensure(name: readonly string[], res: CgroupResources): void
  update(name: readonly string[], res: CgroupResources): void
  /** Removes the cgroup; an absent one is no error. */
  remove(name: readonly string[]): void
  /** What is set now (for tests and stats). */
  read(name: readonly string[]): CgroupResources
  /** The memory the cgroup uses now (v1 memory.usage_in_bytes, v2 memory.current); undefined when unreadable. */
  memoryUsage(name: readonly string[]): number | undefined
  /** The cgroup's directory in the cgroup v1 memory controller (memcg threshold notifications); absent on v2. */
  memoryCgroupDir?(name: readonly string[]): string
}

const V1_CONTROLLERS = ['memory', 'cpu', 'pids'] as const

function readNumber (path: string): number | undefined {
  try {
    const text = readFileSync(path, 'utf8').trim()
    if (text === 'max') return -1
    return Number(text.split(/\s+/)[0])
  } catch { return undefined }
}

function write (path: string, value: string): void {
  try { writeFileSync(path, value) } catch (err) { throw new CgroupError(`writing ${value} to ${path}: ${(err as Error).message}`) }
}

function rmdirQuiet (path: string): void {
  try { rmdirSync(path) } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    if (code !== 'ENOENT') throw new CgroupError(`removing ${path}: ${(err as Error).message}`)
  }
}

/** cgroup v1: memory, cpu and pids each have their own tree under `root` (/sys/fs/cgroup). */
export function createCgroupfsV1 (root = '/sys/fs/cgroup'): CgroupDriver {
  const dir = (controller: string, name: readonly string[]): string => join(root, controller, ...name)
  const apply = (name: readonly string[], r: CgroupResources): void => {
    const cpu = dir('cpu', name)
    if (r.cpuShares !== undefined) write(join(cpu, 'cpu.shares'), String(r.cpuShares))
    if (r.cpuPeriodUs !== undefined) write(join(cpu, 'cpu.cfs_period_us'), String(r.cpuPeriodUs))
    if (r.cpuQuotaUs !== undefined) write(join(cpu, 'cpu.cfs_quota_us'), String(r.cpuQuotaUs))
    if (r.memoryLimitBytes !== undefined) write(join(dir('memory', name), 'memory.limit_in_bytes'), String(r.memoryLimitBytes))
    if (r.pidsMax !== undefined) write(join(dir('pids', name), 'pids.max'), r.pidsMax < 0 ? 'max' : String(r.pidsMax))
  }
  return {
    kind: 'cgroupfs-v1',
    runtimeName: name => '/' + name.join('/'),
    exists: name => V1_CONTROLLERS.every(c => existsSync(dir(c, name))),
    ensure (name, r) {
      for (const c of V1_CONTROLLERS) mkdirSync(dir(c, name), { recursive: true })
      apply(name, r)
    },
    update: apply,
    remove (name) { for (const c of V1_CONTROLLERS) rmdirQuiet(dir(c, name)) },
    memoryUsage: name => readNumber(join(dir('memory', name), 'memory.usage_in_bytes')),
    memoryCgroupDir: name => dir('memory', name),
    read: name => ({
      cpuShares: readNumber(join(dir('cpu', name), 'cpu.shares')),
      cpuQuotaUs: readNumber(join(dir('cpu', name), 'cpu.cfs_quota_us')),
      cpuPeriodUs: readNumber(join(dir('cpu', name), 'cpu.cfs_period_us')),
      memoryLimitBytes: readNumber(join(dir('memory', name), 'memory.limit_in_bytes')),
      pidsMax: readNumber(join(dir('pids', name), 'pids.max'))
    })
  }
}

/** runc's cpu.shares to cpu.weight mapping (2..262144 onto 1..10000). */
export function sharesToWeight (shares: number): number {
  return Math.floor(1 + ((Math.min(262144, Math.max(2, shares)) - 2) * 9999) / 262142)
}

export function weightToShares (weight: number): number {
  return Math.round(2 + ((weight - 1) * 262142) / 9999)
}

/** cgroup v2: one tree under `root`; a parent enables cpu, memory and pids for its children in cgroup.subtree_control. */
export function createCgroupfsV2 (root = '/sys/fs/cgroup'): CgroupDriver {
  const dir = (name: readonly string[]): string => join(root, ...name)
  const apply = (name: readonly string[], r: CgroupResources): void => {
    const d = dir(name)
    if (r.cpuShares !== undefined) write(join(d, 'cpu.weight'), String(sharesToWeight(r.cpuShares)))
    if (r.cpuQuotaUs !== undefined || r.cpuPeriodUs !== undefined) {
      let current = 'max 100000'
      try { current = readFileSync(join(d, 'cpu.max'), 'utf8').trim() || current } catch { /* a new cgroup: the kernel's default */ }
      const [quota, period] = current.split(/\s+/)
      const q = r.cpuQuotaUs === undefined ? quota : r.cpuQuotaUs < 0 ? 'max' : String(r.cpuQuotaUs)
      write(join(d, 'cpu.max'), `${q} ${r.cpuPeriodUs ?? period}`)
    }
    if (r.memoryLimitBytes !== undefined) write(join(d, 'memory.max'), r.memoryLimitBytes < 0 ? 'max' : String(r.memoryLimitBytes))
    if (r.pidsMax !== undefined) write(join(d, 'pids.max'), r.pidsMax < 0 ? 'max' : String(r.pidsMax))
  }
  return {
    kind: 'cgroupfs-v2',
    runtimeName: name => '/' + name.join('/'),
    exists: name => existsSync(join(dir(name), 'cgroup.procs')) || existsSync(dir(name)),
    ensure (name, r) {
      for (let i = 0; i <= name.length; i++) {
        const d = dir(name.slice(0, i))
        if (i > 0) mkdirSync(d, { recursive: true })
        if (i < name.length) {
          const control = join(d, 'cgroup.subtree_control')
          const enabled = existsSync(control) ? readFileSync(control, 'utf8').split(/\s+/) : []
          const missing = ['cpu', 'memory', 'pids'].filter(c => !enabled.includes(c))
          if (missing.length > 0) write(control, missing.map(c => `+${c}`).join(' '))
        }
      }
      apply(name, r)
    },
    update: apply,
    remove (name) { rmdirQuiet(dir(name)) },
    memoryUsage: name => readNumber(join(dir(name), 'memory.current')),
    read (name) {
      const d = dir(name)
      const cpuMax = (() => { try { return readFileSync(join(d, 'cpu.max'), 'utf8').trim().split(/\s+/) } catch { return [] } })()
      const weight = readNumber(join(d, 'cpu.weight'))
      return {
        cpuShares: weight === undefined ? undefined : weightToShares(weight),
        cpuQuotaUs: cpuMax[0] === undefined ? undefined : cpuMax[0] === 'max' ? -1 : Number(cpuMax[0]),
        cpuPeriodUs: cpuMax[1] === undefined ? undefined : Number(cpuMax[1]),
        memoryLimitBytes: readNumber(join(d, 'memory.max')),
        pidsMax: readNumber(join(d, 'pids.max'))
      }
    }
  }
}

/** cgroup v2 when the mount holds the unified tree's cgroup.controllers file at its top. */
export function isCgroupV2 (root = '/sys/fs/cgroup'): boolean {
  return existsSync(join(root, 'cgroup.controllers'))
}

/** systemd's name for a cgroup path: [kubepods, burstable, podX] is kubepods.slice/kubepods-burstable.slice/kubepods-burstable-podX.slice. */
export function systemdSlices (name: readonly string[]): string[] {
  const out: string[] = []
  for (let i = 0; i < name.length; i++) out.push(`${name.slice(0, i + 1).map(p => p.replace(/-/g, '_')).join('-')}.slice`)
  return out
}

/**
 * The systemd driver: slices are units systemd creates and owns (over D-Bus). Where systemd is not the init system,
 * there is nothing to ask, which is a clear startup error rather than cgroups written behind anyone's back.
 */
export function createSystemdDriver (runDir = '/run/systemd/system', root = '/sys/fs/cgroup'): CgroupDriver {
  if (!existsSync(runDir)) throw new CgroupError(`--cgroup-driver=systemd: systemd is not running on this machine (no ${runDir}); use --cgroup-driver=cgroupfs`)
  // systemd delegates the slices' files to the cgroup tree at the slice path: the cgroupfs writer does the writing there.
  const fs = isCgroupV2(root) ? createCgroupfsV2(root) : createCgroupfsV1(root)
  const path = (name: readonly string[]): string[] => systemdSlices(name)
  return {
    kind: 'systemd',
    runtimeName: name => name.length === 0 ? '/' : systemdSlices(name).at(-1)!,
    exists: name => fs.exists(path(name)),
    ensure: (name, r) => fs.ensure(path(name), r),
    update: (name, r) => fs.update(path(name), r),
    remove: name => fs.remove(path(name)),
    read: name => fs.read(path(name)),
    memoryUsage: name => fs.memoryUsage(path(name)),
    ...(fs.memoryCgroupDir !== undefined ? { memoryCgroupDir: (name: readonly string[]) => fs.memoryCgroupDir!(path(name)) } : {})
  }
}

/** The driver --cgroup-driver names, for the cgroup version mounted at `root`. */
export function createCgroupDriver (kind: 'cgroupfs' | 'systemd', root = '/sys/fs/cgroup'): CgroupDriver {
  if (kind === 'systemd') return createSystemdDriver(undefined, root)
  return isCgroupV2(root) ? createCgroupfsV2(root) : createCgroupfsV1(root)
}
