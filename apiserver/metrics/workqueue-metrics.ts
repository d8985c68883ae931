// client-go's work queue metrics (workqueue_*, label `name`), one set per queue, in a component's registry.

import type { Counter, Gauge, Histogram } from 'prom-client'
import { exponentialBuckets, type ComponentMetrics } from './component-metrics.js'

/** What a work queue reports; times are the queue clock's milliseconds. */
export interface QueueMetrics {
  /** A key became pending (queued, or marked to run again while being processed). */
  add(key: string, nowMs: number): void
  /** A worker took `key`. */
  get(key: string, nowMs: number): void
  /** The worker finished `key`. */
  done(key: string, nowMs: number): void
  /** `key` was re-queued after a failure. */
  retry(): void
}

/** Makes the metrics of each named queue; unfinished-work gauges are read at scrape time. */
export class WorkqueueMetricsProvider {
  private readonly depth: Gauge<'name'>
  private readonly adds: Counter<'name'>
  private readonly latency: Histogram<'name'>
  private readonly workDuration: Histogram<'name'>
  private readonly retries: Counter<'name'>
  private readonly queues = new Map<string, { processing: Map<string, number>, now: () => number }>()

  constructor (m: ComponentMetrics) {
    const name = ['name'] as const
    const buckets = exponentialBuckets(10e-9, 10, 10)
    this.depth = m.gauge({ name: 'workqueue_depth', labelNames: name, help: 'Current depth of workqueue' })
    this.adds = m.counter({ name: 'workqueue_adds_total', labelNames: name, help: 'Total number of adds handled by workqueue' })
    this.latency = m.histogram({ name: 'workqueue_queue_duration_seconds', labelNames: name, buckets, help: 'How long in seconds an item stays in workqueue before being requested.' })
    this.workDuration = m.histogram({ name: 'workqueue_work_duration_seconds', labelNames: name, buckets, help: 'How long in seconds processing an item from workqueue takes.' })
    this.retries = m.counter({ name: 'workqueue_retries_total', labelNames: name, help: 'Total number of retries handled by workqueue' })
    const queues = this.queues
    m.gauge({
      name: 'workqueue_unfinished_work_seconds', labelNames: name,
      help: 'How many seconds of work has done that is in progress and hasn\'t been observed by work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.',
      collect () { for (const [q, s] of queues) this.set({ name: q }, [...s.processing.values()].reduce((sum, at) => sum + (s.now() - at) / 1000, 0)) }
    })
    m.gauge({
      name: 'workqueue_longest_running_processor_seconds', labelNames: name,
      help: 'How many seconds has the longest running processor for workqueue been running.',
      collect () { for (const [q, s] of queues) this.set({ name: q }, Math.max(0, ...[...s.processing.values()].map(at => (s.now() - at) / 1000))) }
    })
  }

  forQueue (name: string, now: () => number): QueueMetrics {
    const labels = { name }
    const addedAt = new Map<string, number>()
    const processing = new Map<string, number>()
    this.queues.set(name, { processing, now })
    this.depth.set(labels, 0)
    this.adds.inc(labels, 0)
    this.retries.inc(labels, 0)
    return {
      add: (key, nowMs) => {
        this.adds.inc(labels)
        this.depth.inc(labels)
        if (!addedAt.has(key)) addedAt.set(key, nowMs)
      },
      get: (key, nowMs) => {
        this.depth.dec(labels)
        const at = addedAt.get(key)
        if (at !== undefined) { this.latency.observe(labels, (nowMs - at) / 1000); addedAt.delete(key) }
        processing.set(key, nowMs)
      },
      done: (key, nowMs) => {
        const at = processing.get(key)
        if (at !== undefined) { this.workDuration.observe(labels, (nowMs - at) / 1000); processing.delete(key) }
      },
      retry: () => this.retries.inc(labels)
    }
  }
}
