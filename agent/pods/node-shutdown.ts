// Graceful node shutdown, as the kubelet's shutdown manager: pods stopped band by band from the lowest priority up,
// each with min(its terminationGracePeriodSeconds, its band's grace period), each band waited for at most that period.

import type { ControllerClock } from '../../apiserver/controllers/clock.js'
import type { PriorityGracePeriod } from '../config/kinds.js'
import { gracePeriodOf, type Pod, type PodCondition, type PodStatus } from './pod-types.js'

/** scheduling.SystemCriticalPriority: pods at or above it are critical and go last. */
export const SYSTEM_CRITICAL_PRIORITY = 2_000_000_000

/** The built-in classes' values, for pods that name one but carry no priority (static pods skip admission). */
const SYSTEM_CLASS_PRIORITY: Readonly<Record<string, number>> = { 'system-node-critical': 2_000_001_000, 'system-cluster-critical': 2_000_000_000 }

/** The kubelet's status message and reason for pods stopped by a graceful node shutdown. */
export const NODE_SHUTDOWN_MESSAGE = 'Pod was terminated in response to imminent node shutdown.'
export const NODE_SHUTDOWN_REASON = 'Terminated'
/** The Node's Ready message while it shuts down (the kubelet's shutdown manager status). */
export const NODE_SHUTTING_DOWN = 'node is shutting down'

/** The three OrchletConfiguration fields; durations in milliseconds. */
export interface ShutdownSettings {
  shutdownGracePeriod: number
  shutdownGracePeriodCriticalPods: number
  shutdownGracePeriodByPodPriority: readonly PriorityGracePeriod[]
}

/**
 * The priority bands, lowest first; none when graceful node shutdown is off. The two periods become two bands
 * (priority 0: the total less the critical part; SYSTEM_CRITICAL_PRIORITY: the critical part) in whole seconds,
 * as the kubelet's migrateConfig makes them.
 */
export function shutdownBands (s: ShutdownSettings): PriorityGracePeriod[] {
  if (s.shutdownGracePeriodByPodPriority.length > 0) return [...s.shutdownGracePeriodByPodPriority].sort((a, b) => a.priority - b.priority)
  if (s.shutdownGracePeriod <= 0) return []
  const regular = s.shutdownGracePeriod - s.shutdownGracePeriodCriticalPods
  return [
    { priority: 0, shutdownGracePeriodSeconds: Math.floor(regular / 1000) },
    { priority: SYSTEM_CRITICAL_PRIORITY, shutdownGracePeriodSeconds: Math.floor((s.shutdownGracePeriod - regular) / 1000) }
  ]
}

export function podPriority (pod: Pod): number {
  return pod.spec.priority ?? SYSTEM_CLASS_PRIORITY[pod.spec.priorityClassName ?? ''] ?? 0
}

export interface ShutdownKill { pod: Pod; gracePeriodSeconds: number }

/** One step of the shutdown: its pods are stopped together; the next step starts when all are stopped or `waitMs` passed. */
export interface ShutdownStep { priority?: number; waitMs?: number; kills: ShutdownKill[] }

/**
 * Each pod goes to the highest band whose priority it reaches (below the lowest: the lowest). A pod's grace period is
 * its terminationGracePeriodSeconds when that is shorter than the band's. Bands without pods are left out.
 */
export function planShutdown (bands: readonly PriorityGracePeriod[], pods: readonly Pod[]): ShutdownStep[] {
  const steps = bands.map((b): ShutdownStep => ({ priority: b.priority, waitMs: b.shutdownGracePeriodSeconds * 1000, kills: [] }))
  for (const pod of pods) {
    const priority = podPriority(pod)
    let at = 0
    for (let i = 0; i < bands.length; i++) if (bands[i]!.priority <= priority) at = i
    const band = bands[at]!
    const own = pod.spec.terminationGracePeriodSeconds
    steps[at]!.kills.push({ pod, gracePeriodSeconds: own !== undefined && own <= band.shutdownGracePeriodSeconds ? own : band.shutdownGracePeriodSeconds })
  }
  return steps.filter(s => s.kills.length > 0)
}

export interface ShutdownLogger { info(o: object, m?: string): void; warn(o: object, m?: string): void }

export interface RunShutdownDeps {
  clock: ControllerClock
  /** Stops one pod within the grace period; resolves once it is stopped. */
  kill(pod: Pod, gracePeriodSeconds: number): Promise<void>
  logger: ShutdownLogger
}

/** Runs the steps in order; resolves once the last step's pods are stopped or its wait passed (later kills run on). */
export async function runShutdown (steps: readonly ShutdownStep[], d: RunShutdownDeps): Promise<void> {
  for (const step of steps) {
    const kills = step.kills.map(async ({ pod, gracePeriodSeconds }) => {
      const name = `${pod.metadata.namespace ?? ''}/${pod.metadata.name}`
      d.logger.info({ pod: name, gracePeriodSeconds, priority: step.priority }, 'shutdown manager killing pod with gracePeriod')
      try {
        await d.kill(pod, gracePeriodSeconds)
        d.logger.info({ pod: name }, 'shutdown manager finished killing pod')
      } catch (err) {
        d.logger.warn({ pod: name, err: (err as Error).message }, 'shutdown manager failed killing pod')
      }
    })
    let timer: { cancel(): void } | undefined
    const timedOut = step.waitMs === undefined
      ? new Promise<never>(() => {})
      : new Promise<void>(resolve => { timer = d.clock.after(step.waitMs!, resolve) })
    const outcome = await Promise.race([Promise.all(kills).then(() => 'done' as const), timedOut.then(() => 'timeout' as const)])
    timer?.cancel()
    if (outcome === 'timeout') d.logger.info({ priority: step.priority, gracePeriodSeconds: step.waitMs! / 1000 }, 'shutdown manager pod killing time out')
  }
}

/**
 * The status of a pod stopped by the shutdown, from its last one: Failed (unless it had Succeeded) with the kubelet's
 * reason and message, and a DisruptionTarget condition saying the orchlet terminated it.
 */
export function nodeShutdownStatus (last: PodStatus | undefined, nowRfc3339: string): PodStatus {
  return evictedStatus(last, NODE_SHUTDOWN_REASON, NODE_SHUTDOWN_MESSAGE, nowRfc3339)
}

/**
 * A pod the orchlet stopped itself (node shutdown, eviction): Failed unless it had succeeded, with a DisruptionTarget
 * condition unless `disruption` is false (the kubelet sets none for local storage limit evictions).
 */
export function evictedStatus (last: PodStatus | undefined, reason: string, message: string, nowRfc3339: string, disruption = true): PodStatus {
  const phase = last?.phase === 'Succeeded' ? 'Succeeded' : 'Failed'
  const unready = phase === 'Succeeded' ? 'PodCompleted' : 'PodFailed'
  const kept = (last?.conditions ?? []).filter(c => c.type !== 'DisruptionTarget' && c.type !== 'Ready' && c.type !== 'ContainersReady')
  const conditions: PodCondition[] = [...kept,
    ...(disruption ? [{ type: 'DisruptionTarget', status: 'True', reason: 'TerminationByKubelet', message, lastProbeTime: null, lastTransitionTime: nowRfc3339 } satisfies PodCondition] : []),
    { type: 'Ready', status: 'False', reason: unready, lastProbeTime: null, lastTransitionTime: nowRfc3339 },
    { type: 'ContainersReady', status: 'False', reason: unready, lastProbeTime: null, lastTransitionTime: nowRfc3339 }]
  return { ...last, phase, reason, message, conditions }
}

/** What the shutdown needs of the pod manager. */
export interface ShutdownTarget {
  /** Stops admitting and syncing pods from the sources; pods keep running until shut down or detached. */
  close(): void
  /** Pods admitted and not finished, not already being stopped. */
  active(): Pod[]
  /** Stops one pod within the grace period and reports it as stopped by a node shutdown (nodeShutdownStatus). */
  shutdownPod(uid: string, gracePeriodSeconds: number): Promise<void>
  /** Leaves a pod running in its runtime for the next orchlet to adopt. */
  detach(uid: string): void
  /** Resolves once no pod is being stopped. */
  idle(): Promise<void>
}

export interface ShutdownPodsOptions {
  bands: readonly PriorityGracePeriod[]
  /** Pods that cannot outlive this process (WebAssembly pods run in it). */
  diesWithProcess(pod: Pod): boolean
  clock: ControllerClock
  logger: ShutdownLogger
}

/**
 * The pods' part of a node shutdown. With bands (graceful node shutdown on), every active pod is stopped band by band.
 * Without, as a kubelet without the feature, pods are left running, except those that die with this process anyway:
 * they get their own grace period and the node-shutdown status, which is what happened to them.
 */
export async function shutdownPods (target: ShutdownTarget, o: ShutdownPodsOptions): Promise<void> {
  target.close()
  const active = target.active()
  let steps: ShutdownStep[]
  if (o.bands.length > 0) steps = planShutdown(o.bands, active)
  else {
    const dying = active.filter(p => o.diesWithProcess(p))
    for (const p of active) if (!dying.includes(p)) target.detach(p.metadata.uid)
    steps = dying.length === 0 ? [] : [{ kills: dying.map(pod => ({ pod, gracePeriodSeconds: gracePeriodOf(pod) })) }]
  }
  await runShutdown(steps, { clock: o.clock, logger: o.logger, kill: async (pod, grace) => await target.shutdownPod(pod.metadata.uid, grace) })
  await target.idle()
}
