// The garbage collector's work queue: deduplicated keys, a few workers, per-key exponential back-off on failure.

import type { Logger } from './core.js'

/**
 * What a worker reports: done; requeue = run again after a short delay (a race, not an error); wait =
 * waiting on events that re-add the key, checked again after a long delay in case one was missed.
 */
export type WorkOutcome = 'done' | 'requeue' | 'wait'

export interface WorkQueueOptions {
  /** Processes one key; throws to be retried with back-off. */
  work: (key: string) => Promise<WorkOutcome>
  logger: Logger
  /** First retry delay (doubles per failure up to maxRetryMs). */
  retryMs: number
  maxRetryMs?: number
  /** Safety re-check of a waiting key (default 30 s). */
  waitMs?: number
  concurrency?: number
}

/**
 * A key is queued at most once; a key added while it runs is run again afterwards (its state may
 * have changed after the worker read it). Memory is bounded by the number of distinct keys.
 */
export class WorkQueue {
  private readonly o: WorkQueueOptions
  private readonly ready: string[] = []
  private readonly queued = new Set<string>()
  private readonly running = new Set<string>()
  private readonly dirty = new Set<string>()
  private readonly failures = new Map<string, number>()
  private readonly delayed = new Map<string, NodeJS.Timeout>()
  /** Waiting keys' safety re-checks: not counted as pending work. */
  private readonly parked = new Map<string, NodeJS.Timeout>()
  private readonly idleWaiters: Array<() => void> = []
  private stopped = false

  constructor (o: WorkQueueOptions) { this.o = o }

  add (key: string): void {
    if (this.stopped) return
    const timer = this.delayed.get(key)
    if (timer !== undefined) { clearTimeout(timer); this.delayed.delete(key) }
    const parked = this.parked.get(key)
    if (parked !== undefined) { clearTimeout(parked); this.parked.delete(key) }
    if (this.running.has(key)) { this.dirty.add(key); return }
    if (this.queued.has(key)) return
    this.queued.add(key)
    this.ready.push(key)
    this.pump()
  }

  /** Adds the key after `ms` unless it is added sooner. */
  addAfter (key: string, ms: number): void {
    if (this.stopped || this.queued.has(key) || this.delayed.has(key)) return
    const t = setTimeout(() => { this.delayed.delete(key); this.add(key) }, ms)
    this.delayed.set(key, t)
  }

  get size (): number { return this.queued.size + this.running.size + this.delayed.size }

  /** Resolves when nothing is queued, running or waiting to be retried. */
  async idle (): Promise<void> {
    while (this.size > 0 && !this.stopped) await new Promise<void>(resolve => this.idleWaiters.push(resolve))
  }

  stop (): void {
    this.stopped = true
    for (const t of [...this.delayed.values(), ...this.parked.values()]) clearTimeout(t)
    this.delayed.clear()
    this.parked.clear()
    this.ready.length = 0
    this.queued.clear()
    this.wakeIdle()
  }

  private park (key: string): void {
    if (this.parked.has(key)) return
    const t = setTimeout(() => { this.parked.delete(key); this.add(key) }, this.o.waitMs ?? 30_000)
    t.unref()
    this.parked.set(key, t)
  }

  private pump (): void {
    const limit = this.o.concurrency ?? 4
    while (!this.stopped && this.running.size < limit && this.ready.length > 0) {
      const key = this.ready.shift() as string
      this.queued.delete(key)
      this.running.add(key)
      void this.run(key)
    }
  }

  private async run (key: string): Promise<void> {
    let outcome: WorkOutcome | 'failed'
    try {
      outcome = await this.o.work(key)
    } catch (err) {
      outcome = 'failed'
      if (!this.stopped) this.o.logger.warn({ err, item: key }, 'garbage collector: work failed; retrying')
    }
    this.running.delete(key)
    if (outcome === 'failed') {
      const n = (this.failures.get(key) ?? 0) + 1
      this.failures.set(key, n)
      this.dirty.delete(key)
      this.addAfter(key, Math.min(this.o.retryMs * 2 ** (n - 1), this.o.maxRetryMs ?? 30_000))
    } else {
      this.failures.delete(key)
      if (outcome === 'requeue' && !this.dirty.has(key)) this.addAfter(key, this.o.retryMs)
      if (outcome === 'wait' && !this.dirty.has(key)) this.park(key)
    }
    if (this.dirty.delete(key)) this.add(key)
    this.pump()
    if (this.size === 0) this.wakeIdle()
  }

  private wakeIdle (): void {
    const w = this.idleWaiters.splice(0)
    for (const f of w) f()
  }
}
