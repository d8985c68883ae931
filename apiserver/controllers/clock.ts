// Time for controllers: the system clock, and a fake one tests advance by hand.

export interface Timer { cancel(): void }

export interface ControllerClock {
  now(): number
  /** Runs `fn` after `ms`; never keeps the process alive. */
  after(ms: number, fn: () => void): Timer
}

/** The longest delay setTimeout takes (2^31 - 1 ms, about 24.8 days); a longer one would fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1

export const systemControllerClock: ControllerClock = {
  now: () => Date.now(),
  after (ms, fn) {
    // A yearly CronJob's next run is further away than one timer waits: reached in steps.
    const at = Date.now() + Math.max(0, ms)
    let t: NodeJS.Timeout
    const arm = (): void => {
      const left = at - Date.now()
      t = setTimeout(() => { if (Date.now() < at) arm(); else fn() }, Math.min(Math.max(0, left), MAX_TIMER_MS))
      t.unref()
    }
    arm()
    return { cancel: () => clearTimeout(t) }
  }
}

/** A clock that moves only when `advance` is called; due timers fire in time order. */
export class FakeClock implements ControllerClock {
  private time: number
  private seq = 0
  private readonly timers = new Map<number, { at: number, fn: () => void }>()

  constructor (start = Date.parse('2026-01-01T00:00:00Z')) { this.time = start }

  now (): number { return this.time }

  after (ms: number, fn: () => void): Timer {
    const id = ++this.seq
    this.timers.set(id, { at: this.time + Math.max(0, ms), fn })
    return { cancel: () => { this.timers.delete(id) } }
  }

  /** Moves time forward, firing each timer due on the way at its own time. */
  advance (ms: number): void {
    const end = this.time + ms
    for (;;) {
      let next: [number, { at: number, fn: () => void }] | undefined
      for (const e of this.timers) if (e[1].at <= end && (next === undefined || e[1].at < next[1].at)) next = e
      if (next === undefined) break
      this.timers.delete(next[0])
      this.time = next[1].at
      next[1].fn()
    }
    this.time = end
  }

  pending (): number { return this.timers.size }
}
