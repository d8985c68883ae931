// The HorizontalPodAutoscaler controller (autoscaling/v2, resource metrics): every sync period it reads the target's scale,
// the pods' usage from the resource metrics API, computes the replicas each metric asks for, applies the behaviour,
// writes the scale subresource and the HPA's status and conditions (AbleToScale, ScalingActive, ScalingLimited).

import { QueueController, type ControllerContext, type ReconcileResult } from '../controller.js'
import { RESOURCES, type Obj, type Resource } from '../client/types.js'
import { keyOf, splitKey, type SharedInformer } from '../informer.js'
import { labelsOf } from '../labels.js'
import { compileSelector, METADATA_FIELDS } from '../../registry/selectors.js'
import { amountOf, MetricError, resourceReplicas, type CalculatorSettings, type PodSample, type ResourceTarget } from './replica-calculator.js'
import { behaviorOf, decide, recordScale, type History } from './behavior.js'
import { setCondition, type Condition } from './conditions.js'
import { pluralOf, scaleTargetResource, formatAmount } from './targets.js'

/** The HPAController settings (spec document 2 §2.2), with kube-controller-manager's defaults. */
export interface HpaSettings {
  syncPeriodMs: number
  downscaleStabilizationMs: number
  tolerance: number
  cpuInitializationPeriodMs: number
  initialReadinessDelayMs: number
}

export const HPA_DEFAULTS: HpaSettings = {
  syncPeriodMs: 15_000, downscaleStabilizationMs: 300_000, tolerance: 0.1, cpuInitializationPeriodMs: 300_000, initialReadinessDelayMs: 30_000
}

export const POD_METRICS: Resource = { group: 'metrics.orch.io', version: 'v1beta1', resource: 'pods', namespaced: true }

interface Measured { replicas: number; status: Obj; description: string }

export class HorizontalPodAutoscalerController extends QueueController {
  private readonly hpas: SharedInformer
  private readonly pods: SharedInformer
  private readonly history = new Map<string, History>()
  private readonly s: HpaSettings

  constructor (c: ControllerContext, settings: Partial<HpaSettings> = {}) {
    super('horizontalpodautoscaling', c)
    this.s = { ...HPA_DEFAULTS, ...Object.fromEntries(Object.entries(settings).filter(([, v]) => v !== undefined)) }
    this.hpas = c.informers.informer(RESOURCES.horizontalPodAutoscalers)
    this.pods = c.informers.informer(RESOURCES.pods)
  }

  protected watch (): void {
    this.hpas.addEventHandler({
      add: h => this.queue.add(keyOf(h)),
      update: (o, h) => { if (o.metadata?.generation !== h.metadata?.generation) this.queue.add(keyOf(h)) },
      delete: h => this.history.delete(keyOf(h))
    })
  }

  async reconcile (key: string): Promise<ReconcileResult | void> {
    const hpa = this.hpas.get(key)
    if (hpa === undefined) { this.history.delete(key); return }
    const [namespace] = splitKey(key)
    const next = structuredClone(hpa) as Obj
    next.status ??= {}
    const conditions: Condition[] = [...(hpa.status?.conditions ?? [])]
    const now = this.c.clock.now()
    const cond = (type: string, status: 'True' | 'False', reason: string, message: string): void => setCondition(conditions, { type, status, reason, message }, now)
    const ref = hpa.spec?.scaleTargetRef ?? {}
    const target = scaleTargetResource(ref)
    const scale = target === undefined ? undefined : await this.c.client.resource(target).get(namespace, String(ref.name ?? ''), 'scale').catch(() => undefined)
    if (target === undefined || scale === undefined) {
      cond('AbleToScale', 'False', 'FailedGetScale', `the HPA controller was unable to get the target's current scale: ${target === undefined ? `no scale subresource for ${String(ref.kind)}` : `${pluralOf(ref)} "${String(ref.name)}" not found`}`)
      this.c.events.event(hpa, 'Warning', 'FailedGetScale', `${pluralOf(ref)} "${String(ref.name)}" not found`)
      await this.writeStatus(next, conditions, hpa)
      return { requeueAfterMs: this.s.syncPeriodMs }
    }
    cond('AbleToScale', 'True', 'SucceededGetScale', "the HPA controller was able to get the target's current scale")
    const current: number = scale.status?.replicas ?? 0
    const specReplicas: number = scale.spec?.replicas ?? 0
    const min: number = hpa.spec?.minReplicas ?? 1
    const max: number = hpa.spec?.maxReplicas ?? 1
    let desired = current
    let reason = ''
    if (specReplicas === 0 && min !== 0) {
      desired = 0
      cond('ScalingActive', 'False', 'ScalingDisabled', 'scaling is disabled since the replica count of the target is zero')
    } else if (current > max) {
      desired = max; reason = 'Current number of replicas above Spec.MaxReplicas'
      cond('ScalingLimited', 'True', 'TooManyReplicas', 'the desired replica count is more than the maximum replica count')
    } else if (current < min) {
      desired = min; reason = 'Current number of replicas below Spec.MinReplicas'
      cond('ScalingLimited', 'True', 'TooFewReplicas', 'the desired replica count is less than the minimum replica count')
    } else {
      let measured: Measured[]
      try {
        measured = await this.measure(hpa, namespace, String(scale.status?.selector ?? ''), current, now)
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err)
        cond('ScalingActive', 'False', 'FailedGetResourceMetric', `the HPA was unable to compute the replica count: ${message}`)
        this.c.events.event(hpa, 'Warning', 'FailedGetResourceMetric', message)
        next.status.currentReplicas = current
        await this.writeStatus(next, conditions, hpa)
        return { requeueAfterMs: this.s.syncPeriodMs }
      }
      const best = measured.reduce((a, m) => (m.replicas > a.replicas ? m : a), measured[0]!)
      next.status.currentMetrics = measured.map(m => m.status)
      cond('ScalingActive', 'True', 'ValidMetricFound', `the HPA was able to successfully calculate a replica count from ${best.description}`)
      const h = this.historyOf(key)
      const d = decide(behaviorOf(hpa.spec?.behavior, this.s.downscaleStabilizationMs), h, current, best.replicas, min, max, now)
      cond('AbleToScale', 'True', d.stabilized.reason, d.stabilized.message)
      cond('ScalingLimited', d.limited.status, d.limited.reason, d.limited.message)
      desired = d.replicas
      reason = best.replicas > current ? `${best.description} above target` : 'All metrics below target'
    }
    if (desired !== current) {
      try {
        await this.c.client.resource(target).update(namespace, { ...scale, spec: { ...scale.spec, replicas: desired } }, 'scale')
      } catch (err) {
        cond('AbleToScale', 'False', 'FailedUpdateScale', `the HPA controller was unable to update the target scale: ${(err as Error).message}`)
        this.c.events.event(hpa, 'Warning', 'FailedRescale', `New size: ${desired}; reason: ${reason}; error: ${(err as Error).message}`)
        await this.writeStatus(next, conditions, hpa)
        return { requeueAfterMs: this.s.syncPeriodMs }
      }
      recordScale(behaviorOf(hpa.spec?.behavior, this.s.downscaleStabilizationMs), this.historyOf(key), current, desired, now)
      cond('AbleToScale', 'True', 'SucceededRescale', `the HPA controller was able to update the target scale to ${desired}`)
      this.c.events.event(hpa, 'Normal', 'SuccessfulRescale', `New size: ${desired}; reason: ${reason}`)
      next.status.lastScaleTime = new Date(now).toISOString().replace(/\.\d+Z$/, 'Z')
    }
    next.status.currentReplicas = current
    next.status.desiredReplicas = desired
    await this.writeStatus(next, conditions, hpa)
    return { requeueAfterMs: this.s.syncPeriodMs }
  }

  private historyOf (key: string): History {
    let h = this.history.get(key)
    if (h === undefined) { h = { recommendations: [], up: [], down: [] }; this.history.set(key, h) }
    return h
  }

  private async writeStatus (next: Obj, conditions: Condition[], before: Obj): Promise<void> {
    next.status.conditions = conditions
    next.status.observedGeneration = before.metadata?.generation
    if (next.status.desiredReplicas === undefined) next.status.desiredReplicas = before.status?.desiredReplicas ?? 0
    if (next.status.currentReplicas === undefined) next.status.currentReplicas = before.status?.currentReplicas ?? 0
    if (JSON.stringify(next.status) === JSON.stringify(before.status)) return
    await this.c.client.resource(RESOURCES.horizontalPodAutoscalers).update(String(before.metadata.namespace), next, 'status')
  }

  /** One recommendation per metric (cpu at 80% of requests when the spec names none); throws when any fails. */
  private async measure (hpa: Obj, namespace: string, selector: string, current: number, now: number): Promise<Measured[]> {
    if (selector === '') throw new MetricError('selector is required')
    const match = compileSelector(selector, undefined, METADATA_FIELDS)
    const pods = this.pods.list(namespace).filter(p => match.matches({ metadata: { labels: labelsOf(p) } }))
    const specs: Obj[] = Array.isArray(hpa.spec?.metrics) && hpa.spec.metrics.length > 0
      ? hpa.spec.metrics
      : [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } }]
    const metrics = await this.c.client.resource(POD_METRICS).list(namespace, { labelSelector: selector })
    const settings: CalculatorSettings = { tolerance: this.s.tolerance, cpuInitializationPeriodMs: this.s.cpuInitializationPeriodMs, initialReadinessDelayMs: this.s.initialReadinessDelayMs }
    return specs.map(spec => {
      const source = spec.type === 'Resource' ? spec.resource : spec.type === 'ContainerResource' ? spec.containerResource : undefined
      if (source === undefined) throw new MetricError(`metric type ${String(spec.type)} is not supported (only Resource and ContainerResource)`)
      const resource = String(source.name)
      const t: ResourceTarget = { resource, container: spec.type === 'ContainerResource' ? String(source.container) : undefined }
      if (source.target?.type === 'Utilization') t.averageUtilization = source.target.averageUtilization ?? 80
      else if (source.target?.type === 'AverageValue') t.averageValue = amountOf(resource, source.target.averageValue)
      else throw new MetricError(`invalid target type ${String(source.target?.type)} for resource metric ${resource}`)
      const samples = samplesOf(metrics.items, resource, t.container)
      const r = resourceReplicas(current, t, pods, samples, settings, now)
      const key = spec.type === 'Resource' ? 'resource' : 'containerResource'
      const currentStatus: Obj = { averageValue: formatAmount(resource, r.averageValue) }
      if (r.averageUtilization !== undefined) currentStatus.averageUtilization = r.averageUtilization
      return {
        replicas: r.replicas,
        status: { type: spec.type, [key]: { name: resource, ...(t.container !== undefined ? { container: t.container } : {}), current: currentStatus } },
        description: `${resource} ${spec.type === 'ContainerResource' ? 'container ' : ''}resource${t.averageUtilization !== undefined ? ' utilization (percentage of request)' : ''}`
      }
    })
  }
}

/** PodMetrics to one sample per pod: the sum over its containers (or the one container). */
function samplesOf (items: Obj[], resource: string, container: string | undefined): Map<string, PodSample> {
  const out = new Map<string, PodSample>()
  for (const m of items) {
    const containers: Obj[] = (m.containers ?? []).filter((c: Obj) => container === undefined || c.name === container)
    if (containers.length === 0) continue
    const value = containers.reduce((n, c) => n + amountOf(resource, c.usage?.[resource] ?? 0), 0)
    out.set(String(m.metadata?.name), { value, timestampMs: Date.parse(String(m.timestamp)), windowMs: parseFloat(String(m.window ?? '0')) * 1000 })
  }
  return out
}
