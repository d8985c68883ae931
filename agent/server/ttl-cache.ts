// A small map whose entries expire after a per-entry time-to-live; used by the webhook authn/authz caches.

export interface TtlCache<V> {
  get(key: string): V | undefined
  set(key: string, value: V, ttlMs: number): void
}

export function createTtlCache<V> (now: () => number, maxEntries = 4096): TtlCache<V> {
  const entries = new Map<string, { value: V; expires: number }>()
  return {
    get (key) {
      const e = entries.get(key)
      if (e === undefined) return undefined
      if (e.expires <= now()) { entries.delete(key); return undefined }
      return e.value
    },
    set (key, value, ttlMs) {
      if (ttlMs <= 0) return
      if (entries.size >= maxEntries) {
        const oldest = entries.keys().next().value
        if (oldest !== undefined) entries.delete(oldest)
      }
      entries.set(key, { value, expires: now() + ttlMs })
    }
  }
}
