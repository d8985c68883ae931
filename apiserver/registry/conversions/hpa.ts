// HorizontalPodAutoscaler autoscaling/v1 <-> autoscaling/v2 (stored): v1 says one CPU target; the rest of v2 rides in annotations.
//
// As Kubernetes does, what v1 cannot say (other metrics, behavior, conditions, current metrics) is kept in
// `autoscaling.alpha.kubernetes.io/*` annotations of the v1 object, so a v1 read-modify-write loses nothing.
import type { Obj } from '../object-meta.js'

const ANN = {
  metrics: 'autoscaling.alpha.kubernetes.io/metrics',
  behavior: 'autoscaling.alpha.kubernetes.io/behavior',
  conditions: 'autoscaling.alpha.kubernetes.io/conditions',
  currentMetrics: 'autoscaling.alpha.kubernetes.io/current-metrics',
} as const

type Metric = Obj & { type?: string, resource?: { name?: string, target?: Obj, current?: Obj } }

const isCpuUtilization = (m: Metric): boolean => m.type === 'Resource' && m.resource?.name === 'cpu' &&
  (m.resource.target?.type === 'Utilization' || m.resource.current?.averageUtilization !== undefined)

function annotationsOf (obj: Obj): Record<string, string> {
  const meta = (obj.metadata ?? {}) as Obj
  return { ...((meta.annotations ?? {}) as Record<string, string>) }
}

function withAnnotations (obj: Obj, annotations: Record<string, string>): Obj {
  const metadata = { ...((obj.metadata ?? {}) as Obj) }
  if (Object.keys(annotations).length > 0) metadata.annotations = annotations
  else delete metadata.annotations
  return { ...obj, metadata }
}

function parsed (annotations: Record<string, string>, key: string): unknown {
  const raw = annotations[key]
  delete annotations[key]
  if (raw === undefined) return undefined
  try { return JSON.parse(raw) } catch { return undefined }
}

/** v2 -> v1. */
export function hpaToV1 (obj: Obj, apiVersion: string): Obj {
  const spec = { ...((obj.spec ?? {}) as Obj) }
  const status = obj.status === undefined ? undefined : { ...(obj.status as Obj) }
  const annotations = annotationsOf(obj)
  const metrics = (spec.metrics ?? []) as Metric[]
  const cpu = metrics.find(isCpuUtilization)
  const rest = metrics.filter(m => m !== cpu)
  delete spec.metrics
  if (cpu?.resource?.target?.averageUtilization !== undefined) spec.targetCPUUtilizationPercentage = cpu.resource.target.averageUtilization
  if (rest.length > 0) annotations[ANN.metrics] = JSON.stringify(rest)
  if (spec.behavior !== undefined) { annotations[ANN.behavior] = JSON.stringify(spec.behavior); delete spec.behavior }
  if (status !== undefined) {
    const current = (status.currentMetrics ?? []) as Metric[]
    const cpuNow = current.find(isCpuUtilization)
    const others = current.filter(m => m !== cpuNow)
    delete status.currentMetrics
    if (cpuNow?.resource?.current?.averageUtilization !== undefined) status.currentCPUUtilizationPercentage = cpuNow.resource.current.averageUtilization
    if (others.length > 0) annotations[ANN.currentMetrics] = JSON.stringify(others)
    if (status.conditions !== undefined) { annotations[ANN.conditions] = JSON.stringify(status.conditions); delete status.conditions }
  }
  const out = withAnnotations({ ...obj, apiVersion, spec }, annotations)
  if (status !== undefined) out.status = status
  return out
}

/** v1 -> v2. */
export function hpaToV2 (obj: Obj, apiVersion: string): Obj {
  const spec = { ...((obj.spec ?? {}) as Obj) }
  const status = obj.status === undefined ? undefined : { ...(obj.status as Obj) }
  const annotations = annotationsOf(obj)
  const metrics: Metric[] = []
  if (typeof spec.targetCPUUtilizationPercentage === 'number') {
    metrics.push({ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: spec.targetCPUUtilizationPercentage } } })
  }
  delete spec.targetCPUUtilizationPercentage
  const more = parsed(annotations, ANN.metrics)
  if (Array.isArray(more)) metrics.push(...(more as Metric[]))
  if (metrics.length > 0) spec.metrics = metrics
  const behavior = parsed(annotations, ANN.behavior)
  if (behavior !== undefined) spec.behavior = behavior
  const conditions = parsed(annotations, ANN.conditions)
  const currentMore = parsed(annotations, ANN.currentMetrics)
  const out = withAnnotations({ ...obj, apiVersion, spec }, annotations)
  if (status !== undefined) {
    const current: Metric[] = []
    if (typeof status.currentCPUUtilizationPercentage === 'number') {
      current.push({ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: status.currentCPUUtilizationPercentage } } })
    }
    delete status.currentCPUUtilizationPercentage
    if (Array.isArray(currentMore)) current.push(...(currentMore as Metric[]))
    if (current.length > 0) status.currentMetrics = current
    if (conditions !== undefined) status.conditions = conditions
    out.status = status
  }
  return out
}
