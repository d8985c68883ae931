// The QoS and pod cgroup hierarchy (--cgroups-per-qos under --cgroup-root), pod limits, tier values, node allocatable enforcement.

import { qosClass } from '../pods/pod-status.js'
import type { Pod } from '../pods/pod-types.js'
import { podTotal } from './pod-totals.js'
import { qosMemoryRequests, qosReservedMemoryLimits } from './qos-reserved.js'
import type { CgroupDriver, CgroupResources } from './driver.js'

/** The kubelet's constants (pkg/kubelet/cm/helpers_linux.go). */
const MIN_SHARES = 2
const SHARES_PER_CPU = 1024
const MIN_QUOTA_PERIOD_US = 1000

export function milliCpuToShares (milli: number): number {
  if (milli === 0) return MIN_SHARES
  return Math.max(MIN_SHARES, Math.floor(milli * SHARES_PER_CPU / 1000))
}

export function milliCpuToQuota (milli: number, periodUs: number): number {
  if (milli === 0) return 0
  return Math.max(MIN_QUOTA_PERIOD_US, Math.floor(milli * periodUs / 1000))
}

export interface PodCgroupOptions {
  cpuCfsQuota: boolean
  cpuCfsQuotaPeriodUs: number
  /** --pod-max-pids; negative or 0: none. */
  podPidsLimit: number
}

/** ResourceConfigForPod: shares from requests, quota and memory limit only when every container has the limit. */
export function podResources (pod: Pod, o: PodCgroupOptions): CgroupResources {
  const qos = qosClass(pod)
  const cpuReq = podTotal(pod, 'requests', 'cpu').value
  const cpuLim = podTotal(pod, 'limits', 'cpu')
  const memLim = podTotal(pod, 'limits', 'memory')
  const out: CgroupResources = { cpuShares: qos === 'BestEffort' ? MIN_SHARES : milliCpuToShares(Math.round(cpuReq * 1000)) }
  if (qos !== 'BestEffort') {
    out.cpuPeriodUs = o.cpuCfsQuotaPeriodUs
    out.cpuQuotaUs = o.cpuCfsQuota && cpuLim.all ? milliCpuToQuota(Math.round(cpuLim.value * 1000), o.cpuCfsQuotaPeriodUs) : -1
    if (memLim.all) out.memoryLimitBytes = Math.ceil(memLim.value)
  }
  if (o.podPidsLimit > 0) out.pidsMax = o.podPidsLimit
  return out
}

export interface PodCgroupsDeps extends PodCgroupOptions {
  driver: CgroupDriver
  /** --cgroup-root, as path parts ([] for the root). */
  root: string[]
  /** Node allocatable for the pods cgroup when --enforce-node-allocatable has pods (cpu millicores, memory bytes, pids). */
  enforce?: { cpuMillis?: number, memoryBytes?: number, pids?: number }
  /**
   * --qos-reserved memory (QOSReserved gate): the percent of higher QoS pods' memory requests kept from the lower
   * tiers, against node allocatable memory (capacity less reservations). Absent: the tiers have no memory limit.
   */
  qosReserved?: { memoryPercent: number, allocatableMemoryBytes: number }
  /** The pods whose requests the reservation counts (the kubelet's active pods); absent: the pods with a cgroup here. */
  activePods?(): Pod[]
  logger: { info(o: object, m?: string): void, warn(o: object, m?: string): void }
}

export interface PodCgroups {
  /** Creates the pods cgroup and the QoS tiers (node allocatable on the pods cgroup when enforced). */
  setUp(): void
  /** The pod's cgroup name (the sandbox's cgroup parent is driver.runtimeName of it). */
  podName(pod: Pod): string[]
  /** Creates or updates the pod's cgroup and the tiers' values; returns the cgroup parent for the runtime. */
  ensurePod(pod: Pod): string
  /** Removes the pod's cgroup and updates the tiers. */
  removePod(pod: Pod): void
  /** Sets the tiers' values from the pods now (the kubelet's UpdateQOSCgroups; also run periodically). */
  updateTiers(): void
  /** The pods cgroup's cgroup v1 memory directory (allocatable memory notifications); undefined on cgroup v2. */
  podsMemoryDir(): string | undefined
}

export function createPodCgroups (d: PodCgroupsDeps): PodCgroups {
  const pods = [...d.root, 'kubepods']
  const tier = (qos: string): string[] => qos === 'Guaranteed' ? pods : [...pods, qos.toLowerCase()]
  const known = new Map<string, Pod>()

  /** The burstable tier's shares follow its pods' requests; besteffort keeps the minimum (setCPUCgroupConfig). */
  function updateTiers (): void {
    let burstableMilli = 0
    for (const p of known.values()) if (qosClass(p) === 'Burstable') burstableMilli += Math.round(podTotal(p, 'requests', 'cpu').value * 1000)
    d.driver.update(tier('Burstable'), { cpuShares: milliCpuToShares(burstableMilli) })
    d.driver.update(tier('BestEffort'), { cpuShares: MIN_SHARES })
    if (d.qosReserved !== undefined) reserveMemory(d.qosReserved.memoryPercent, d.qosReserved.allocatableMemoryBytes)
  }

  /**
   * The burstable and besteffort tiers' memory limits (setMemoryReserve). Where the kernel refuses a limit below what
   * the tier already uses (cgroup v1), the tier is held at its usage so it cannot grow (retrySetMemoryReserve).
   */
  function reserveMemory (percent: number, allocatable: number): void {
    if (allocatable <= 0) return
    const pods = d.activePods?.() ?? [...known.values()]
    const limits = qosReservedMemoryLimits(qosMemoryRequests(pods), allocatable, percent)
    for (const [qos, limit] of [['Burstable', limits.burstable], ['BestEffort', limits.bestEffort]] as const) {
      try {
        d.driver.update(tier(qos), { memoryLimitBytes: limit })
      } catch (err) {
        const usage = d.driver.memoryUsage(tier(qos))
        if (usage === undefined || usage <= limit) throw err
        d.logger.warn({ qos, limit, usage }, 'QoS tier already uses more memory than --qos-reserved leaves it; holding it at its usage')
        d.driver.update(tier(qos), { memoryLimitBytes: usage })
      }
    }
  }

  return {
    setUp () {
      const e = d.enforce
      d.driver.ensure(pods, e === undefined ? {} : {
        ...(e.cpuMillis !== undefined ? { cpuShares: milliCpuToShares(e.cpuMillis) } : {}),
        ...(e.memoryBytes !== undefined ? { memoryLimitBytes: e.memoryBytes } : {}),
        ...(e.pids !== undefined ? { pidsMax: e.pids } : {})
      })
      d.driver.ensure(tier('Burstable'), {})
      d.driver.ensure(tier('BestEffort'), { cpuShares: MIN_SHARES })
      updateTiers()
      d.logger.info({ driver: d.driver.kind, cgroup: d.driver.runtimeName(pods), enforce: e }, 'QoS cgroup hierarchy set up')
    },
    podName: pod => [...tier(qosClass(pod) ?? 'BestEffort'), `pod${pod.metadata.uid}`],
    ensurePod (pod) {
      const name = [...tier(qosClass(pod) ?? 'BestEffort'), `pod${pod.metadata.uid}`]
      known.set(pod.metadata.uid, pod)
      d.driver.ensure(name, podResources(pod, d))
      updateTiers()
      return d.driver.runtimeName(name)
    },
    removePod (pod) {
      known.delete(pod.metadata.uid)
      try { d.driver.remove([...tier(qosClass(pod) ?? 'BestEffort'), `pod${pod.metadata.uid}`]) } catch (err) {
        d.logger.warn({ pod: pod.metadata.name, err: (err as Error).message }, 'removing the pod cgroup failed')
      }
      updateTiers()
    },
    updateTiers,
    podsMemoryDir: () => d.driver.memoryCgroupDir?.(pods)
  }
}
