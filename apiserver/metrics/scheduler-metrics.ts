// kube-scheduler's metrics: scheduling attempts by result and profile, their latency, pending pods by queue.

import type { Counter, Histogram } from 'prom-client'
import { exponentialBuckets, type ComponentMetrics } from './component-metrics.js'

export type AttemptResult = 'scheduled' | 'unschedulable' | 'error'

export interface PendingPods { active: number, backoff: number, unschedulable: number, gated: number }

export class SchedulerMetrics {
  private readonly attempts: Counter<'result' | 'profile'>
  private readonly attemptDuration: Histogram<'result' | 'profile'>
  private readonly podAttempts: Histogram
  private pending: () => PendingPods = () => ({ active: 0, backoff: 0, unschedulable: 0, gated: 0 })

  constructor (m: ComponentMetrics) {
    const labels = ['result', 'profile'] as const
    this.attempts = m.counter({
      name: 'scheduler_schedule_attempts_total', stabilityLevel: 'STABLE', labelNames: labels,
      help: 'Number of attempts to schedule pods, by the result. \'unschedulable\' means a pod could not be scheduled, while \'error\' means an internal scheduler problem.'
    })
    this.attemptDuration = m.histogram({
      name: 'scheduler_scheduling_attempt_duration_seconds', stabilityLevel: 'STABLE', labelNames: labels, buckets: exponentialBuckets(0.001, 2, 15),
      help: 'Scheduling attempt latency in seconds (scheduling algorithm + binding)'
    })
    this.podAttempts = m.histogram({
      name: 'scheduler_pod_scheduling_attempts', stabilityLevel: 'STABLE', buckets: exponentialBuckets(1, 2, 5),
      help: 'Number of attempts to successfully schedule a pod.'
    })
    const self = this
    m.gauge({
      name: 'scheduler_pending_pods', stabilityLevel: 'STABLE', labelNames: ['queue'],
      help: 'Number of pending pods, by the queue type. \'active\' means number of pods in activeQ; \'backoff\' means number of pods in backoffQ; \'unschedulable\' means number of pods in unschedulablePods that the scheduler attempted to schedule and failed; \'gated\' is the number of unschedulable pods that the scheduler never attempted to schedule because they are gated.',
      collect () { for (const [queue, n] of Object.entries(self.pending())) this.set({ queue }, n) }
    })
  }

  /** Where the scheduler's queues are read at scrape time. */
  readPending (fn: () => PendingPods): void { this.pending = fn }

  /** One attempt ended with `result` after `seconds`. */
  attempt (profile: string, result: AttemptResult, seconds: number): void {
    this.attempts.inc({ result, profile })
    this.attemptDuration.observe({ result, profile }, seconds)
  }

  /** A pod was bound after `attempts` tries. */
  scheduled (attempts: number): void { this.podAttempts.observe(attempts) }
}
