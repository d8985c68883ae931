// Computed Table cells of the networking and autoscaling kinds (kube-apiserver 1.29's Ingress and HPA printers).

type Obj = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any

const MAX_METRICS = 3

/** `<current>/<target>` of one metric spec, given the status metric at the same index. */
function metricCell (spec: Obj, current: Obj | undefined): string {
  const src = spec.resource ?? spec.containerResource ?? spec.pods ?? spec.object ?? spec.external ?? {}
  const cur = (current?.resource ?? current?.containerResource ?? current?.pods ?? current?.object ?? current?.external)?.current
  const target = src.target ?? {}
  let text: string
  if (target.averageUtilization !== undefined || (target.type === 'Utilization' && target.averageValue === undefined)) {
    const now = cur?.averageUtilization !== undefined ? `${String(cur.averageUtilization)}%` : '<unknown>'
    text = `${now}/${target.averageUtilization !== undefined ? `${String(target.averageUtilization)}%` : '<auto>'}`
  } else if (target.averageValue !== undefined) {
    text = `${cur?.averageValue !== undefined ? String(cur.averageValue) : '<unknown>'}/${String(target.averageValue)} (avg)`
  } else {
    text = `${cur?.value !== undefined ? String(cur.value) : '<unknown>'}/${String(target.value ?? '<unknown>')}`
  }
  if (spec.type === 'Resource' || spec.type === 'ContainerResource') return `${String(src.name ?? '')}: ${text}`
  return text
}

function hpaTargets (hpa: Obj): string {
  const v1Cpu = hpa.spec?.targetCPUUtilizationPercentage
  const metrics: Obj[] = hpa.spec?.metrics ?? (v1Cpu === undefined ? [] : [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: v1Cpu } } }])
  if (hpa.spec?.metrics === undefined && hpa.status?.currentCPUUtilizationPercentage !== undefined) {
    return metricCell(metrics[0], { type: 'Resource', resource: { current: { averageUtilization: hpa.status.currentCPUUtilizationPercentage } } })
  }
  if (metrics.length === 0) return '<none>'
  const current: Obj[] = hpa.status?.currentMetrics ?? []
  const cells = metrics.slice(0, MAX_METRICS).map((m, i) => metricCell(m, current[i]?.type === m.type ? current[i] : undefined))
  const more = metrics.length > MAX_METRICS ? ` + ${metrics.length - MAX_METRICS} more...` : ''
  return cells.join(', ') + more
}

function ingressAddress (ing: Obj): string {
  const ingress: Obj[] = ing.status?.loadBalancer?.ingress ?? []
  return ingress.map(i => i.ip ?? i.hostname ?? '').filter(s => s !== '').join(',')
}

export const NETWORKING_PRINTERS: Readonly<Record<string, (o: Obj) => unknown>> = {
  hpaReference: h => `${String(h.spec?.scaleTargetRef?.kind ?? '')}/${String(h.spec?.scaleTargetRef?.name ?? '')}`,
  hpaTargets,
  hpaMinPods: h => h.spec?.minReplicas === undefined ? '<unset>' : h.spec.minReplicas,
  ingressClass: i => i.spec?.ingressClassName ?? '<none>',
  ingressHosts: i => {
    const hosts = ((i.spec?.rules ?? []) as Obj[]).map(r => r.host ?? '').filter((h: string) => h !== '')
    return hosts.length === 0 ? '*' : hosts.join(',')
  },
  ingressAddress,
  ingressPorts: i => ((i.spec?.tls ?? []) as Obj[]).length > 0 ? '80, 443' : '80',
  networkPolicySelector: n => {
    const labels = (n.spec?.podSelector?.matchLabels ?? {}) as Record<string, string>
    const text = Object.entries(labels).map(([k, v]) => `${k}=${v}`).join(',')
    return text === '' && ((n.spec?.podSelector?.matchExpressions ?? []) as Obj[]).length === 0 ? '<none>' : text
  },
}
