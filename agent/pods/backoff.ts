// Restart back-off per container: 10s doubling to 5m, forgotten after a quiet spell, as the kubelet does.

export interface BackoffOptions {
  initialMs: number
  maxMs: number
  now: () => number
}

export interface Backoff {
  /** Records a failure (container exit or pull error) at `at`; returns when the next try may start. */
  failed(key: string, at?: number): number
  /** The time before which `key` must not be retried (0 when free). */
  until(key: string): number
  /** The current delay of `key` (0 when free): what the kubelet's CrashLoopBackOff message quotes. */
  delay(key: string): number
  forget(key: string): void
}

export function createBackoff (o: BackoffOptions): Backoff {
  const entries = new Map<string, { delay: number; last: number; until: number }>()
  return {
    failed (key, at = o.now()) {
      const prev = entries.get(key)
      // A container that stayed up for twice the maximum delay starts over from the initial delay.
      const delay = prev === undefined || at - prev.last > 2 * o.maxMs ? o.initialMs : Math.min(prev.delay * 2, o.maxMs)
      const entry = { delay, last: at, until: at + delay }
      entries.set(key, entry)
      return entry.until
    },
    until (key) { return entries.get(key)?.until ?? 0 },
    delay (key) { return entries.get(key)?.delay ?? 0 },
    forget (key) { entries.delete(key) }
  }
}
