// Computed Table cells of built-in kinds: what Kubernetes' printers (pkg/printers/internalversion) derive in code.

import { accessModes, formatEndpoints, formatLabels, since } from './print-format.js'
import { POD_PRINTERS } from './printers-pod.js'
import { WORKLOAD_PRINTERS } from './printers-workloads.js'
import { CLUSTER_PRINTERS } from './printers-cluster.js'
import { NETWORKING_PRINTERS } from './printers-networking.js'

type Obj = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any

/** A computed cell; `now` (ms) is for cells that show ages. */
export type ColumnPrinter = (object: Obj, now: number) => unknown

function nodeStatus (node: Obj): string {
  const ready = (node.status?.conditions ?? []).find((c: Obj) => c.type === 'Ready')
  const out = [ready === undefined ? 'Unknown' : ready.status === 'True' ? 'Ready' : 'NotReady']
  if (node.spec?.unschedulable === true) out.push('SchedulingDisabled')
  return out.join(',')
}

function nodeRoles (node: Obj): string {
  const roles = new Set<string>()
  for (const [k, v] of Object.entries((node.metadata?.labels ?? {}) as Record<string, string>)) {
    // Both spellings of the well-known role labels: node-role.orch.io/<role> and node-role.kubernetes.io/<role>.
    const prefix = ['node-role.orch.io/', 'node-role.kubernetes.io/'].find(p => k.startsWith(p) && k.length > p.length)
    if (prefix !== undefined) roles.add(k.slice(prefix.length))
    else if ((k === 'orch.io/role' || k === 'kubernetes.io/role') && v) roles.add(v)
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
      // loadBalancerStatusStringer: a sorted set of ingress IPs (or hostnames), then the external IPs.
      const lb = [...new Set(((svc.status?.loadBalancer?.ingress ?? []) as Obj[]).map(i => i.ip || i.hostname || '').filter(Boolean))].sort()
      const all = [...lb, ...external]
      return all.length > 0 ? all.join(',') : '<pending>'
    }
    case 'ExternalName':
      return svc.spec?.externalName ?? ''
    default:
      return '<unknown>'
  }
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
  ...POD_PRINTERS,
  ...WORKLOAD_PRINTERS,
  ...CLUSTER_PRINTERS,
  ...NETWORKING_PRINTERS,
  nodeStatus,
  nodeRoles,
  nodeInternalIP: nodeAddress('InternalIP'),
  nodeExternalIP: nodeAddress('ExternalIP'),
  nodeOSImage: node => orUnknown(node.status?.nodeInfo?.osImage),
  nodeKernelVersion: node => orUnknown(node.status?.nodeInfo?.kernelVersion),
  nodeContainerRuntime: node => orUnknown(node.status?.nodeInfo?.containerRuntimeVersion),
  webhookCount: o => (o.webhooks ?? []).length,
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
