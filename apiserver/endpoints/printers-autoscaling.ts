// Computed Table cells of HorizontalPodAutoscaler (kube-apiserver 1.29's printHorizontalPodAutoscaler).

type Obj = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any
type Printer = (object: Obj, now: number) => unknown

/** One metric's `current/target`, as formatHPAMetrics prints it; `<unknown>` before the controller measured it. */
function metricCell (spec: Obj, status: Obj | undefined): string {
  const name = spec.type === 'ContainerResource' ? 'containerResource' : spec.type === 'Resource' ? 'resource' : undefined
  if (name === undefined) {
    const key = spec.type === 'Pods' ? 'pods' : spec.type === 'Object' ? 'object' : 'external'
    const target = spec[key]?.target ?? {}
    const current = status?.[key]?.current
    const want = target.averageValue ?? target.value ?? '<unknown>'
    const got = current?.averageValue ?? current?.value ?? '<unknown>'
    return `${String(got)}/${String(want)}`
  }
  const target = spec[name]?.target ?? {}
  const current = status?.[name]?.current
  if (target.averageValue !== undefined) return `${String(current?.averageValue ?? '<unknown>')}/${String(target.averageValue)}`
  const got = typeof current?.averageUtilization === 'number' ? `${current.averageUtilization}%` : '<unknown>'
  const want = typeof target.averageUtilization === 'number' ? `${target.averageUtilization}%` : '<auto>'
  return `${got}/${want}`
}

function hpaTargets (hpa: Obj): string {
  const specs: Obj[] = hpa.spec?.metrics ?? []
  if (specs.length === 0) return '<none>'
  const statuses: Obj[] = hpa.status?.currentMetrics ?? []
  const cells = specs.map((m, i) => metricCell(m, statuses[i]))
  return cells.length > 4 ? `${cells.slice(0, 4).join(', ')} + ${cells.length - 4} more...` : cells.join(', ')
}

export const AUTOSCALING_PRINTERS: Readonly<Record<string, Printer>> = {
  hpaReference: hpa => `${String(hpa.spec?.scaleTargetRef?.kind ?? '')}/${String(hpa.spec?.scaleTargetRef?.name ?? '')}`,
  hpaTargets,
  hpaMinPods: hpa => (typeof hpa.spec?.minReplicas === 'number' ? hpa.spec.minReplicas : '<unset>')
}
