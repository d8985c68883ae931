// /stats/summary in the kubelet's Summary API shape (stats/v1alpha1): the node from /proc and statfs, pods from the runtimes' container stats.

import type { ContainerRuntime } from '../runtime/runtime.js'
import type { Pod, PodStatus } from '../pods/pod-types.js'
import { rfc3339 } from '../node/node-object.js'
import { bootTimeMs, cpuUsageNanoSeconds, fsUsage, memoryUsage, processLimits } from '../node/machine-stats.js'
import { containerLogsBytes, podEphemeralBytes, podEtcHostsBytes, podLogFilesBytes, podVolumeStats, type StorageSources } from './pod-storage-stats.js'

export interface StatsSummaryDeps {
  nodeName: string
  /** nodefs: the filesystem of the orchlet's root dir. */
  rootDir: string
  now(): number
  /** The pods the node runs, with their latest status (container ids come from it). */
  pods(): Array<{ pod: Pod; status?: PodStatus }>
  runtimeFor(handler: string): ContainerRuntime
  handlerFor?(pod: Pod): string
  /** /proc, replaceable in tests. */
  procRoot?: string
  /** Local storage figures (container logs and writable layers, volumes, the pod total); absent: not reported. */
  storage?: StorageSources
}

interface CpuStats { time: string; usageNanoCores?: number; usageCoreNanoSeconds: number }

export interface StatsSummary {
  node: Record<string, unknown>
  pods: Array<Record<string, unknown>>
}

export interface StatsSummaryProvider { summary(): Promise<StatsSummary> }

/** Splits `runtime://id` into the runtime's container id. */
function containerId (status: { containerID?: string }): string | undefined {
  const id = status.containerID
  if (id === undefined) return undefined
  const at = id.indexOf('://')
  return at < 0 ? id : id.slice(at + 3)
}

export function createStatsSummary (d: StatsSummaryDeps): StatsSummaryProvider {
  const proc = d.procRoot ?? '/proc'
  // usageNanoCores is a rate: each reading is compared with the previous one of the same source.
  const last = new Map<string, { atNs: number; usage: number }>()
  function rate (key: string, atNs: number, usage: number): number | undefined {
    const prev = last.get(key)
    last.set(key, { atNs, usage })
    if (prev === undefined || atNs <= prev.atNs || usage < prev.usage) return undefined
    return Math.round((usage - prev.usage) / (atNs - prev.atNs) * 1e9)
  }
  const first = cpuUsageNanoSeconds(proc)
  if (first !== undefined) rate('node', d.now() * 1e6, first)

  function nodeStats (): Record<string, unknown> {
    const time = rfc3339(d.now())
    const out: Record<string, unknown> = { nodeName: d.nodeName }
    const boot = bootTimeMs(proc)
    if (boot !== undefined) out.startTime = rfc3339(boot)
    const cpu = cpuUsageNanoSeconds(proc)
    if (cpu !== undefined) {
      const nanoCores = rate('node', d.now() * 1e6, cpu)
      out.cpu = { time, ...(nanoCores !== undefined ? { usageNanoCores: nanoCores } : {}), usageCoreNanoSeconds: cpu }
    }
    const mem = memoryUsage(proc)
    if (mem !== undefined) out.memory = { time, ...mem }
    const fs = fsUsage(d.rootDir)
    if (fs !== undefined) out.fs = { time, ...fs }
    out.rlimit = { time, ...processLimits(proc) }
    return out
  }

  async function podStats (pod: Pod, status: PodStatus | undefined): Promise<Record<string, unknown>> {
    const containers: Array<Record<string, unknown>> = []
    let runtime: ContainerRuntime | undefined
    try { runtime = d.runtimeFor(d.handlerFor?.(pod) ?? pod.spec.runtimeClassName ?? '') } catch { runtime = undefined }
    for (const cs of status?.containerStatuses ?? []) {
      const id = containerId(cs)
      if (id === undefined || runtime === undefined) continue
      const c: Record<string, unknown> = { name: cs.name }
      // A stopped container has no CPU or memory, but its logs (and writable layer) still take disk.
      const s = cs.state.running === undefined && d.storage === undefined ? undefined : await runtime.runtime.containerStats(id).catch(() => undefined)
      const running = cs.state.running
      const live = running !== undefined && s !== undefined
      if (running !== undefined && s !== undefined) {
        const time = rfc3339(Math.floor(s.timestamp / 1e6))
        c.startTime = running.startedAt
        if (s.cpuUsageCoreNanoSeconds !== undefined) {
          const nanoCores = rate(`${pod.metadata.uid}/${id}`, s.timestamp, s.cpuUsageCoreNanoSeconds)
          c.cpu = { time, ...(nanoCores !== undefined ? { usageNanoCores: nanoCores } : {}), usageCoreNanoSeconds: s.cpuUsageCoreNanoSeconds } satisfies CpuStats
        }
        if (s.memoryWorkingSetBytes !== undefined) c.memory = { time, workingSetBytes: s.memoryWorkingSetBytes }
      }
      if (d.storage !== undefined) {
        const time = rfc3339(d.now())
        if (s?.writableLayerBytes !== undefined) c.rootfs = { time, usedBytes: s.writableLayerBytes }
        const logs = await containerLogsBytes(d.storage, pod, cs.name)
        if (logs !== undefined) c.logs = { time, usedBytes: logs }
      }
      if (live || c.logs !== undefined || c.rootfs !== undefined) containers.push(c)
    }
    const out: Record<string, unknown> = {
      podRef: { name: pod.metadata.name, namespace: pod.metadata.namespace, uid: pod.metadata.uid },
      ...(status?.startTime !== undefined ? { startTime: status.startTime } : {}),
      containers
    }
    // Pod totals are the sums over its containers (the kubelet reads the pod cgroup; orch has no pod cgroup yet).
    const cpus = containers.map(c => c.cpu as CpuStats | undefined).filter((c): c is CpuStats => c !== undefined)
    if (cpus.length > 0) {
      const nano = cpus.every(c => c.usageNanoCores !== undefined) ? cpus.reduce((a, c) => a + c.usageNanoCores!, 0) : undefined
      out.cpu = { time: cpus[0]!.time, ...(nano !== undefined ? { usageNanoCores: nano } : {}), usageCoreNanoSeconds: cpus.reduce((a, c) => a + c.usageCoreNanoSeconds, 0) }
    }
    const mems = containers.map(c => c.memory as { time: string; workingSetBytes: number } | undefined).filter((m): m is { time: string; workingSetBytes: number } => m !== undefined)
    if (mems.length > 0) out.memory = { time: mems[0]!.time, workingSetBytes: mems.reduce((a, m) => a + m.workingSetBytes, 0) }
    if (d.storage !== undefined) {
      const time = rfc3339(d.now())
      const volumes = await podVolumeStats(d.storage, pod)
      if (volumes.length > 0) out.volume = volumes.map(v => ({ time, name: v.name, usedBytes: v.usedBytes }))
      const used = (c: Record<string, unknown>, key: string): number | undefined => (c[key] as { usedBytes?: number } | undefined)?.usedBytes
      const host = { podLogsBytes: await podLogFilesBytes(d.storage, pod), etcHostsBytes: await podEtcHostsBytes(d.storage, pod) }
      out['ephemeral-storage'] = { time, usedBytes: podEphemeralBytes(pod, containers.map(c => ({ rootfsBytes: used(c, 'rootfs'), logsBytes: used(c, 'logs') })), volumes, host) }
    }
    return out
  }

  return {
    async summary () {
      const pods = d.pods()
      const seen = new Set(pods.map(p => p.pod.metadata.uid))
      // Forget the rate samples of pods that are gone, so the map does not grow without bound.
      for (const key of last.keys()) if (key !== 'node' && !seen.has(key.slice(0, key.indexOf('/')))) last.delete(key)
      return { node: nodeStats(), pods: await Promise.all(pods.map(p => podStats(p.pod, p.status))) }
    }
  }
}
