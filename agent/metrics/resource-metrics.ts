// The orchlet's /metrics/resource (the kubelet's resource metrics) and /metrics/cadvisor (cAdvisor's container
// series): both read the node and container statistics the runtimes report, WebAssembly containers included.

import { ComponentMetrics, type CollectedSample } from '../../apiserver/metrics/component-metrics.js'
import { KUBELET_VERSION } from './orchlet-metrics.js'

/** The parts of /stats/summary these endpoints read. */
interface Summary {
  node: { cpu?: { usageCoreNanoSeconds?: number }, memory?: { workingSetBytes?: number } }
  pods: Array<{
    podRef: { name: string, namespace: string, uid: string }
    cpu?: { usageCoreNanoSeconds?: number }
    memory?: { workingSetBytes?: number }
    containers: Array<{ name: string, startTime?: string, cpu?: { usageCoreNanoSeconds?: number }, memory?: { workingSetBytes?: number } }>
  }>
}

export interface ResourceMetricsSources {
  /** The node's summary (/stats/summary). */
  summary(): Promise<Record<string, unknown>>
  /** The pods the node runs with their status (container ids and images for cAdvisor's labels). */
  pods(): Array<Record<string, unknown>>
  now(): number
}

interface ContainerStatusLike { name: string, containerID?: string, image?: string }

export interface ResourceEndpoints { resource: ComponentMetrics, cadvisor: ComponentMetrics }

export function createResourceMetrics (src: ResourceMetricsSources): ResourceEndpoints {
  const resource = new ComponentMetrics({ version: KUBELET_VERSION, processMetrics: false })
  const cadvisor = new ComponentMetrics({ version: KUBELET_VERSION, processMetrics: false })
  let snap: Summary = { node: {}, pods: [] }
  let failed = false
  const refresh = async (): Promise<void> => {
    try { snap = await src.summary() as unknown as Summary; failed = false } catch { snap = { node: {}, pods: [] }; failed = true }
  }
  resource.onScrape(refresh)
  cadvisor.onScrape(refresh)

  const cpuSeconds = (c?: { usageCoreNanoSeconds?: number }): number | undefined => c?.usageCoreNanoSeconds === undefined ? undefined : c.usageCoreNanoSeconds / 1e9
  const each = <T>(pick: (p: Summary['pods'][number], c: Summary['pods'][number]['containers'][number]) => T | undefined, labels: (p: Summary['pods'][number], c: Summary['pods'][number]['containers'][number]) => Record<string, string>): CollectedSample[] =>
    snap.pods.flatMap(p => p.containers.flatMap(c => { const v = pick(p, c); return typeof v === 'number' ? [{ labels: labels(p, c), value: v }] : [] }))
  const kubeletLabels = (p: Summary['pods'][number], c: { name: string }): Record<string, string> => ({ container: c.name, pod: p.podRef.name, namespace: p.podRef.namespace })
  const one = (v: number | undefined): CollectedSample[] => v === undefined ? [] : [{ value: v }]

  resource.collected({ name: 'node_cpu_usage_seconds_total', type: 'counter', stabilityLevel: 'STABLE', help: 'Cumulative cpu time consumed by the node in core-seconds', read: () => one(cpuSeconds(snap.node.cpu)) })
  resource.collected({ name: 'node_memory_working_set_bytes', type: 'gauge', stabilityLevel: 'STABLE', help: 'Current working set of the node in bytes', read: () => one(snap.node.memory?.workingSetBytes) })
  resource.collected({ name: 'container_cpu_usage_seconds_total', type: 'counter', stabilityLevel: 'STABLE', help: 'Cumulative cpu time consumed by the container in core-seconds', read: () => each((_p, c) => cpuSeconds(c.cpu), kubeletLabels) })
  resource.collected({ name: 'container_memory_working_set_bytes', type: 'gauge', stabilityLevel: 'STABLE', help: 'Current working set of the container in bytes', read: () => each((_p, c) => c.memory?.workingSetBytes, kubeletLabels) })
  resource.collected({
    name: 'container_start_time_seconds', type: 'gauge', stabilityLevel: 'STABLE', help: 'Start time of the container since unix epoch in seconds',
    read: () => each((_p, c) => c.startTime === undefined ? undefined : Date.parse(c.startTime) / 1000, kubeletLabels)
  })
  resource.collected({
    name: 'pod_cpu_usage_seconds_total', type: 'counter', stabilityLevel: 'STABLE', help: 'Cumulative cpu time consumed by the pod in core-seconds',
    read: () => snap.pods.flatMap(p => { const v = cpuSeconds(p.cpu); return v === undefined ? [] : [{ labels: { pod: p.podRef.name, namespace: p.podRef.namespace }, value: v }] })
  })
  resource.collected({
    name: 'pod_memory_working_set_bytes', type: 'gauge', stabilityLevel: 'STABLE', help: 'Current working set of the pod in bytes',
    read: () => snap.pods.flatMap(p => p.memory?.workingSetBytes === undefined ? [] : [{ labels: { pod: p.podRef.name, namespace: p.podRef.namespace }, value: p.memory.workingSetBytes }])
  })
  resource.collected({ name: 'scrape_error', type: 'gauge', deprecatedVersion: '1.29', help: '1 if there was an error while getting container metrics, 0 otherwise', read: () => [{ value: failed ? 1 : 0 }] })
  resource.collected({ name: 'resource_scrape_error', type: 'gauge', help: '1 if there was an error while getting container metrics, 0 otherwise', read: () => [{ value: failed ? 1 : 0 }] })

  // cAdvisor's series name the container by its runtime id and image; they come from the pods' statuses.
  const statusOf = (uid: string, container: string): ContainerStatusLike | undefined => {
    const pod = src.pods().find(p => (p.metadata as { uid?: string } | undefined)?.uid === uid)
    const statuses = ((pod?.status as { containerStatuses?: ContainerStatusLike[] } | undefined)?.containerStatuses) ?? []
    return statuses.find(s => s.name === container)
  }
  const cadvisorLabels = (p: Summary['pods'][number], c: { name: string }): Record<string, string> => {
    const s = statusOf(p.podRef.uid, c.name)
    const id = s?.containerID ?? ''
    return { container: c.name, id: id.slice(id.indexOf('://') + 3), image: s?.image ?? '', name: id.slice(id.indexOf('://') + 3), namespace: p.podRef.namespace, pod: p.podRef.name }
  }
  cadvisor.collected({ name: 'container_cpu_usage_seconds_total', type: 'counter', plainHelp: true, help: 'Cumulative cpu time consumed in seconds.', read: () => each((_p, c) => cpuSeconds(c.cpu), cadvisorLabels) })
  cadvisor.collected({ name: 'container_memory_working_set_bytes', type: 'gauge', plainHelp: true, help: 'Current working set in bytes.', read: () => each((_p, c) => c.memory?.workingSetBytes, cadvisorLabels) })
  cadvisor.collected({
    name: 'container_start_time_seconds', type: 'gauge', plainHelp: true, help: 'Start time of the container since unix epoch in seconds.',
    read: () => each((_p, c) => c.startTime === undefined ? undefined : Date.parse(c.startTime) / 1000, cadvisorLabels)
  })
  cadvisor.collected({ name: 'container_last_seen', type: 'gauge', plainHelp: true, help: 'Last time a container was seen by the exporter', read: () => each(() => src.now() / 1000, cadvisorLabels) })
  return { resource, cadvisor }
}
