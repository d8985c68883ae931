// A rate-limited work queue of object keys, as client-go's: a key is queued once, processed by one worker at a time, retried with back-off.

import type { ControllerClock, Timer } from './clock.js'
import type { QueueMetrics } from '../metrics/workqueue-metrics.js'

export interface WorkQueueOptions {
  clock: ControllerClock
  /** First retry delay (client-go: 5 ms), doubled per failure of the same key up to `maxDelayMs` (1000 s). */
  baseDelayMs?: number
  maxDelayMs?: number
  /** workqueue_* metrics of this queue (WorkqueueMetricsProvider.forQueue); none without. */
  metrics?: QueueMetrics
}

/**
 * Keys wait in `queue` (FIFO, no duplicates). A key being processed is `active`; adding it again marks it
 * `dirty` so it is queued once more when its worker is done, never processed twice at once.
 */
export class WorkQueue {
  private readonly queue: string[] = []
  private readonly queued = new Set<string>()
  private readonly active = new Set<string>()
  private readonly dirty = new Set<string>()
  private readonly failures = new Map<string, number>()
  private readonly delayed = new Map<string, { at: number, timer: Timer }>()
  private readonly waiters: Array<(key: string | undefined) => void> = []
  private shut = false
  private readonly base: number
  private readonly max: number

  constructor (private readonly o: WorkQueueOptions) {
    this.base = o.baseDelayMs ?? 5
    this.max = o.maxDelayMs ?? 1_000_000
  }

  add (key: string): void {
    if (this.shut) return
    if (this.active.has(key)) {
      if (!this.dirty.has(key)) this.o.metrics?.add(key, this.o.clock.now())
      this.dirty.add(key)
      return
    }
    if (this.queued.has(key)) return
    this.o.metrics?.add(key, this.o.clock.now())
    this.enqueue(key)
  }

  /** Hands `key` to a waiting worker or queues it (already counted as added). */
  private enqueue (key: string): void {
    const waiter = this.waiters.shift()
    if (waiter !== undefined) { this.active.add(key); this.o.metrics?.get(key, this.o.clock.now()); waiter(key); return }
    this.queued.add(key)
    this.queue.push(key)
  }

  /** Adds `key` after `ms`; an earlier pending delay for the same key wins. */
  addAfter (key: string, ms: number): void {
    if (this.shut) return
    if (ms <= 0) { this.add(key); return }
    const at = this.o.clock.now() + ms
    const pending = this.delayed.get(key)
    if (pending !== undefined) {
      if (pending.at <= at) return
      pending.timer.cancel()
    }
    const timer = this.o.clock.after(ms, () => { this.delayed.delete(key); this.add(key) })
    this.delayed.set(key, { at, timer })
  }

  /** Re-queues after a failure with exponential back-off per key. */
  addRateLimited (key: string): void {
    const n = this.failures.get(key) ?? 0
    this.failures.set(key, n + 1)
    this.o.metrics?.retry()
    this.addAfter(key, Math.min(this.max, this.base * 2 ** n))
  }

  /** Clears the back-off of a key that succeeded. */
  forget (key: string): void { this.failures.delete(key) }

  retries (key: string): number { return this.failures.get(key) ?? 0 }

  /** The next key to work on; undefined once the queue is shut down. */
  async get (): Promise<string | undefined> {
    if (this.shut) return undefined
    const key = this.queue.shift()
    if (key !== undefined) {
      this.queued.delete(key)
      this.active.add(key)
      this.o.metrics?.get(key, this.o.clock.now())
      return key
    }
    return await new Promise(resolve => this.waiters.push(resolve))
  }

  /** A worker finished `key`; if it was added meanwhile, it is queued again. */
  done (key: string): void {
    this.active.delete(key)
    this.o.metrics?.done(key, this.o.clock.now())
    if (this.dirty.delete(key) && !this.shut) this.enqueue(key)
  }

  get length (): number { return this.queue.length }

  shutDown (): void {
    this.shut = true
    for (const d of this.delayed.values()) d.timer.cancel()
    this.delayed.clear()
    for (const w of this.waiters.splice(0)) w(undefined)
  }
}
