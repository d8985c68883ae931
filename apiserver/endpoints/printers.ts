// Computed Table cells of built-in kinds: what Kubernetes' printers derive in code rather than by JSONPath.

type Obj = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any

export type ColumnPrinter = (object: Obj) => unknown

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
  const ips: string[] = [...(svc.spec?.externalIPs ?? [])]
  for (const ing of svc.status?.loadBalancer?.ingress ?? []) ips.push(ing.ip ?? ing.hostname)
  if (ips.length > 0) return ips.join(',')
  return svc.spec?.type === 'LoadBalancer' ? '<pending>' : '<none>'
}

/** Named computed columns, referenced by PrinterColumn.printer in the built-in catalog. */
export const COLUMN_PRINTERS: Readonly<Record<string, ColumnPrinter>> = {
  podReady: pod => {
    const list: Obj[] = pod.status?.containerStatuses ?? []
    const total = (pod.spec?.containers ?? []).length
    return `${list.filter(s => s.ready === true).length}/${total}`
  },
  podStatus,
  podRestarts: pod => ((pod.status?.containerStatuses ?? []) as Obj[]).reduce((n, s) => n + (s.restartCount ?? 0), 0),
  nodeStatus,
  nodeRoles,
  replicasReady: o => `${o.status?.readyReplicas ?? 0}/${o.spec?.replicas ?? 1}`,
  jobCompletions: job => {
    const succeeded = job.status?.succeeded ?? 0
    const completions = job.spec?.completions
    return completions === undefined || completions === null ? `${succeeded}/1 of ${job.spec?.parallelism ?? 1}` : `${succeeded}/${completions}`
  },
  dataCount: o => Object.keys(o.data ?? {}).length + Object.keys(o.binaryData ?? {}).length,
  servicePorts,
  serviceExternalIP,
  /** `kind/name` of what an Event is about, as kubectl's OBJECT column. */
  eventObject: ev => {
    const o = ev.involvedObject ?? ev.regarding ?? {}
    return `${String(o.kind ?? '').toLowerCase()}/${o.name ?? ''}`
  },
  /** The newest of an Event's times (lastTimestamp, eventTime, series, creation), for LAST SEEN. */
  eventLastSeen: ev => ev.series?.lastObservedTime ?? ev.lastTimestamp ?? ev.eventTime ?? ev.metadata?.creationTimestamp ?? null
}
