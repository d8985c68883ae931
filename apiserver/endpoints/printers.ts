// Computed Table cells of built-in kinds: what Kubernetes' printers (pkg/printers/internalversion) derive in code.

import { accessModes, formatEndpoints, formatLabels, humanDuration, since, timeOf } from './print-format.js'
import { WORKLOAD_PRINTERS } from './printers-workloads.js'

type Obj = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any

/** A computed cell; `now` (ms) is for cells that show ages. */
export type ColumnPrinter = (object: Obj, now: number) => unknown

function podStatus (pod: Obj): string {
  const status = pod.status ?? {}
  let reason: string = status.reason ?? status.phase ?? 'Pending'
  const init: Obj[] = status.initContainerStatuses ?? []
  const initSpecs: Obj[] = pod.spec?.initContainers ?? []
  let initializing = false
  for (let i = 0; i < init.length; i++) {
    const s = init[i]!
    const term = s.state?.terminated
    if (term && term.exitCode === 0) continue
    initializing = true
    if (term) reason = term.reason ? `Init:${term.reason}` : term.signal ? `Init:Signal:${term.signal}` : `Init:ExitCode:${term.exitCode}`
    else if (s.state?.waiting?.reason && s.state.waiting.reason !== 'PodInitializing') reason = `Init:${s.state.waiting.reason}`
    else reason = `Init:${i}/${initSpecs.length}`
    break
  }
  if (!initializing) {
    let running = false
    const list: Obj[] = status.containerStatuses ?? []
    for (let i = list.length - 1; i >= 0; i--) {
      const s = list[i]!
      if (s.state?.waiting?.reason) reason = s.state.waiting.reason
      else if (s.state?.terminated) {
        const t = s.state.terminated
        reason = t.reason ? t.reason : t.signal ? `Signal:${t.signal}` : `ExitCode:${t.exitCode}`
      } else if (s.state?.running && s.ready) running = true
    }
    if (reason === 'Completed' && running) {
      const ready = (status.conditions ?? []).some((c: Obj) => c.type === 'Ready' && c.status === 'True')
      reason = ready ? 'Running' : 'NotReady'
    }
  }
  if (pod.metadata?.deletionTimestamp) reason = status.reason === 'NodeLost' ? 'Unknown' : 'Terminating'
  return reason
}

function nodeStatus (node: Obj): string {
  const ready = (node.status?.conditions ?? []).find((c: Obj) => c.type === 'Ready')
  const out = [ready === undefined ? 'Unknown' : ready.status === 'True' ? 'Ready' : 'NotReady']
  if (node.spec?.unschedulable === true) out.push('SchedulingDisabled')
  return out.join(',')
}

function nodeRoles (node: Obj): string {
  const roles = new Set<string>()
  for (const [k, v] of Object.entries((node.metadata?.labels ?? {}) as Record<string, string>)) {
    if (k.startsWith('node-role.orch.io/') && k.length > 'node-role.orch.io/'.length) roles.add(k.slice('node-role.orch.io/'.length))
    else if (k === 'orch.io/role' && v) roles.add(v)
  }
  return roles.size === 0 ? '<none>' : [...roles].sort().join(',')
}

function servicePorts (svc: Obj): string {
  const ports: Obj[] = svc.spec?.ports ?? []
  if (ports.length === 0) return '<none>'
  return ports.map(p => `${p.port}${p.nodePort ? `:${p.nodePort}` : ''}/${p.protocol ?? 'TCP'}`).join(',')
}

function serviceExternalIP (svc: Obj): string {
  const external: string[] = svc.spec?.externalIPs ?? []
  switch (svc.spec?.type ?? 'ClusterIP') {
    case 'ClusterIP':
    case 'NodePort':
      return external.length > 0 ? external.join(',') : '<none>'
    case 'LoadBalancer': {
      const lb = ((svc.status?.loadBalancer?.ingress ?? []) as Obj[]).map(i => i.ip ?? i.hostname ?? '').filter(Boolean)
      const all = [...lb, ...external]
      return all.length > 0 ? all.join(',') : '<pending>'
    }
    case 'ExternalName':
      return svc.spec?.externalName ?? ''
    default:
      return '<unknown>'
  }
}

/** A pod's restarts and, when it restarted, how long ago the last one ended: `3 (5m ago)`. */
function podRestarts (pod: Obj, now: number): string {
  const initializing = podInitializing(pod)
  const initSpecs = new Map(((pod.spec?.initContainers ?? []) as Obj[]).map(c => [c.name, c]))
  let restarts = 0
  let last: number | undefined
  const count = (s: Obj): void => {
    restarts += s.restartCount ?? 0
    const t = timeOf(s.lastState?.terminated?.finishedAt)
    if (t !== undefined && (last === undefined || t > last)) last = t
  }
  for (const s of (pod.status?.initContainerStatuses ?? []) as Obj[]) {
    if (initializing || initSpecs.get(s.name)?.restartPolicy === 'Always') count(s)
  }
  if (!initializing) for (const s of (pod.status?.containerStatuses ?? []) as Obj[]) count(s)
  return restarts !== 0 && last !== undefined ? `${restarts} (${humanDuration(now - last)} ago)` : String(restarts)
}

function podInitializing (pod: Obj): boolean {
  const specs = new Map(((pod.spec?.initContainers ?? []) as Obj[]).map(c => [c.name, c]))
  for (const s of (pod.status?.initContainerStatuses ?? []) as Obj[]) {
    if (specs.get(s.name)?.restartPolicy === 'Always' && s.started === true) continue
    if (s.state?.terminated?.exitCode === 0) continue
    return true
  }
  return false
}

function nodeAddress (type: string): ColumnPrinter {
  return node => ((node.status?.addresses ?? []) as Obj[]).find(a => a.type === type)?.address ?? '<none>'
}

const orUnknown = (v: unknown): string => (typeof v === 'string' && v !== '' ? v : '<unknown>')
const orNone = (v: unknown): string => (typeof v === 'string' && v !== '' ? v : '<none>')
const orUnset = (v: unknown): string => (typeof v === 'string' ? v : '<unset>')
const terminatingOr = (o: Obj, phase: unknown): string => (o.metadata?.deletionTimestamp ? 'Terminating' : String(phase ?? ''))

/** Event times as kubectl shows them: the series or last time, falling back to the first (or event) time. */
function eventFirstSeen (ev: Obj, now: number): string {
  return ev.firstTimestamp ? since(ev.firstTimestamp, now) : since(ev.eventTime, now)
}
function eventLastSeen (ev: Obj, now: number): string {
  if (ev.series) return since(ev.series.lastObservedTime, now)
  return ev.lastTimestamp ? since(ev.lastTimestamp, now) : eventFirstSeen(ev, now)
}

function eventSource (ev: Obj): string {
  const component = ev.source?.component || ev.reportingComponent || ''
  const host = ev.source?.host || ev.reportingInstance || ''
  if (!component) return '<unknown>'
  return host ? `${component}, ${host}` : component
}

/** Named computed columns, referenced by PrinterColumn.printer in the built-in catalog. */
export const COLUMN_PRINTERS: Readonly<Record<string, ColumnPrinter>> = {
  ...WORKLOAD_PRINTERS,
  podReady: pod => {
    const list: Obj[] = pod.status?.containerStatuses ?? []
    const total = (pod.spec?.containers ?? []).length
    return `${list.filter(s => s.ready === true).length}/${total}`
  },
  podStatus,
  podRestarts,
  podIP: pod => orNone(pod.status?.podIPs?.[0]?.ip ?? pod.status?.podIP),
  podNode: pod => orNone(pod.spec?.nodeName),
  podNominatedNode: pod => orNone(pod.status?.nominatedNodeName),
  podReadinessGates: pod => {
    const gates: Obj[] = pod.spec?.readinessGates ?? []
    if (gates.length === 0) return '<none>'
    const conds: Obj[] = pod.status?.conditions ?? []
    const ready = gates.filter(g => conds.some(c => c.type === g.conditionType && c.status === 'True')).length
    return `${ready}/${gates.length}`
  },
  nodeStatus,
  nodeRoles,
  nodeInternalIP: nodeAddress('InternalIP'),
  nodeExternalIP: nodeAddress('ExternalIP'),
  nodeOSImage: node => orUnknown(node.status?.nodeInfo?.osImage),
  nodeKernelVersion: node => orUnknown(node.status?.nodeInfo?.kernelVersion),
  nodeContainerRuntime: node => orUnknown(node.status?.nodeInfo?.containerRuntimeVersion),
  dataCount: o => Object.keys(o.data ?? {}).length + Object.keys(o.binaryData ?? {}).length,
  serviceClusterIP: svc => orNone(svc.spec?.clusterIPs?.[0] ?? svc.spec?.clusterIP),
  servicePorts,
  serviceExternalIP,
  serviceSelector: svc => formatLabels(svc.spec?.selector),
  serviceAccountSecrets: sa => (sa.secrets ?? []).length,
  endpoints: formatEndpoints,
  pvCapacity: pv => String(pv.spec?.capacity?.storage ?? '0'),
  pvAccessModes: pv => accessModes(pv.spec?.accessModes),
  pvStatus: pv => terminatingOr(pv, pv.status?.phase),
  pvClaim: pv => (pv.spec?.claimRef ? `${pv.spec.claimRef.namespace ?? ''}/${pv.spec.claimRef.name ?? ''}` : ''),
  pvStorageClass: pv => pv.spec?.storageClassName ?? pv.metadata?.annotations?.['volume.beta.kubernetes.io/storage-class'] ?? '',
  pvVolumeAttributesClass: pv => orUnset(pv.spec?.volumeAttributesClassName),
  volumeMode: o => orUnset(o.spec?.volumeMode),
  pvcStatus: pvc => terminatingOr(pvc, pvc.status?.phase),
  pvcCapacity: pvc => (pvc.spec?.volumeName ? String(pvc.status?.capacity?.storage ?? '0') : ''),
  pvcAccessModes: pvc => (pvc.spec?.volumeName ? accessModes(pvc.status?.accessModes) : ''),
  pvcStorageClass: pvc => pvc.spec?.storageClassName ?? pvc.metadata?.annotations?.['volume.beta.kubernetes.io/storage-class'] ?? '',
  pvcVolumeAttributesClass: pvc => orUnset(pvc.status?.currentVolumeAttributesClassName),
  /** `kind/name` of what an Event is about, as kubectl's OBJECT column. */
  eventObject: ev => {
    const o = ev.involvedObject ?? ev.regarding ?? {}
    const kind = String(o.kind ?? '').toLowerCase()
    return o.name ? `${kind}/${o.name}` : kind
  },
  eventSubobject: ev => ev.involvedObject?.fieldPath ?? '',
  eventSource,
  eventMessage: ev => String(ev.message ?? '').trim(),
  eventLastSeen,
  eventFirstSeen,
  eventCount: ev => (ev.series ? ev.series.count ?? 0 : ev.count || 1)
}
