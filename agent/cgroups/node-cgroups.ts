// Sets the node's cgroups up from the orchlet config: the driver, the QoS hierarchy, --enforce-node-allocatable.

import type { OrchletConfig } from '../config/types.js'
import { createCgroupDriver, type CgroupDriver, type CgroupResources } from './driver.js'
import { createPodCgroups, milliCpuToShares, type PodCgroups } from './pod-cgroups.js'
import type { Pod } from '../pods/pod-types.js'
import { processLimits } from '../node/machine-stats.js'

export interface NodeCgroupsInput {
  config: OrchletConfig
  capacity: { cpuMillis: number, memoryBytes: number }
  logger: { info(o: object, m?: string): void, warn(o: object, m?: string): void }
  /** Replaces the driver --cgroup-driver names (tests use a tree of their own). */
  driver?: CgroupDriver
  /** The pods --qos-reserved counts (the pod manager's active pods). */
  activePods?(): Pod[]
}

function parts (path: string): string[] {
  return path.split('/').filter(p => p !== '')
}

function reservedLimits (r: Readonly<Record<string, number>>): CgroupResources {
  return {
    ...(r.cpu !== undefined ? { cpuShares: milliCpuToShares(r.cpu) } : {}),
    ...(r.memory !== undefined ? { memoryLimitBytes: r.memory } : {}),
    ...(r.pid !== undefined ? { pidsMax: r.pid } : {})
  }
}

/**
 * The pod cgroups when --cgroups-per-qos is on; undefined when off. A driver that cannot be used (systemd not
 * running) is a startup error; cgroupfs files that cannot be written (no privileges) leave pods without cgroups,
 * with a warning, as the runtime's default cgroups then still hold them.
 */
export function setUpNodeCgroups (i: NodeCgroupsInput): PodCgroups | undefined {
  const c = i.config
  if (!c.cgroupsPerQOS) return undefined
  const driver = i.driver ?? createCgroupDriver(c.cgroupDriver)
  const levels = c.enforceNodeAllocatable
  const maxpid = processLimits().maxpid
  const reserved = (r: string): number => (c.orchReserved[r] ?? 0) + (c.systemReserved[r] ?? 0)
  const enforce = levels.includes('pods')
    ? { cpuMillis: i.capacity.cpuMillis - reserved('cpu'), memoryBytes: i.capacity.memoryBytes - reserved('memory'), ...(reserved('pid') > 0 && maxpid !== undefined ? { pids: maxpid - reserved('pid') } : {}) }
    : undefined
  const pods = createPodCgroups({
    driver,
    root: parts(c.cgroupRoot),
    enforce,
    cpuCfsQuota: c.cpuCFSQuota,
    cpuCfsQuotaPeriodUs: Math.round(c.cpuCFSQuotaPeriod * 1000),
    podPidsLimit: c.podPidsLimit,
    // --qos-reserved (validation accepts it only with the QOSReserved gate and --cgroups-per-qos): against node
    // allocatable as the kubelet's GetNodeAllocatableAbsolute, capacity less the orch and system reservations.
    ...(c.qosReserved.memory !== undefined && c.featureGates.enabled('QOSReserved')
      ? { qosReserved: { memoryPercent: c.qosReserved.memory, allocatableMemoryBytes: i.capacity.memoryBytes - reserved('memory') } }
      : {}),
    ...(i.activePods !== undefined ? { activePods: i.activePods } : {}),
    logger: i.logger
  })
  try {
    pods.setUp()
    // The reserved cgroups get the reservations as their limits (enforceExistingCgroup).
    if (levels.includes('system-reserved')) driver.ensure(parts(c.systemReservedCgroup), reservedLimits(c.systemReserved))
    if (levels.includes('orch-reserved')) driver.ensure(parts(c.orchReservedCgroup), reservedLimits(c.orchReserved))
  } catch (err) {
    i.logger.warn({ driver: driver.kind, err: (err as Error).message }, 'cgroups cannot be managed here; pods run in the runtime\'s default cgroups')
    return undefined
  }
  return pods
}

/** The pod worker's view: CRI pods get their pod cgroup as the sandbox's cgroup parent; WebAssembly pods run in this process. */
export function cgroupsForWorkers (pods: PodCgroups | undefined, inProcessHandler: string, logger?: { warn(o: object, m?: string): void }): { parentFor(pod: Pod, handler: string): string | undefined, release(pod: Pod): void } | undefined {
  if (pods === undefined) return undefined
  return {
    parentFor: (pod, handler) => {
      if (handler !== inProcessHandler) return pods.ensurePod(pod)
      // A pod of this process has no cgroup, but its requests count for --qos-reserved; failing to say so stops no pod.
      try { pods.updateTiers() } catch (err) { logger?.warn({ pod: pod.metadata.name, err: (err as Error).message }, 'updating the QoS cgroups failed') }
      return undefined
    },
    release: pod => pods.removePod(pod)
  }
}
