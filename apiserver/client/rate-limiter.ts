// A token bucket (qps, burst) that spaces requests out instead of failing them, as client-go's limiter does.

export interface Clock { now(): number; sleep(ms: number): Promise<void> }

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: async (ms) => { await new Promise(resolve => setTimeout(resolve, ms)) }
}

export interface RateLimiter { acquire(): Promise<void> }

/** qps <= 0 means unlimited. Tokens refill continuously; waiting callers are served in order. */
export function createTokenBucket (qps: number, burst: number, clock: Clock = systemClock): RateLimiter {
  if (!(qps > 0)) return { acquire: async () => {} }
  const capacity = Math.max(1, burst)
  let tokens = capacity
  let last = clock.now()
  let tail: Promise<void> = Promise.resolve()

  function refill (): void {
    const now = clock.now()
    tokens = Math.min(capacity, tokens + (now - last) * qps / 1000)
    last = now
  }

  async function take (): Promise<void> {
    refill()
    while (tokens < 1) {
      await clock.sleep(Math.ceil((1 - tokens) * 1000 / qps))
      refill()
    }
    tokens -= 1
  }

  return {
    acquire () {
      const turn = tail.then(take)
      tail = turn.catch(() => {})
      return turn
    }
  }
}
