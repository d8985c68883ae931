// Creations and deletions a controller has asked for but not yet seen in its informer, so it never acts twice on stale state.

/** Pending expectations expire after this long (a lost watch event must not stall a controller for ever). */
const TTL_MS = 5 * 60_000

interface Pending { adds: number, dels: Set<string>, at: number }

export class Expectations {
  private readonly pending = new Map<string, Pending>()

  constructor (private readonly now: () => number) {}

  /** Whether `key` may act: nothing pending, or what was pending is too old to wait for. */
  satisfied (key: string): boolean {
    const p = this.pending.get(key)
    if (p === undefined) return true
    if ((p.adds <= 0 && p.dels.size === 0) || this.now() - p.at > TTL_MS) {
      this.pending.delete(key)
      return true
    }
    return false
  }

  expectCreations (key: string, n: number): void {
    const p = this.entry(key)
    p.adds += n
  }

  expectDeletions (key: string, podKeys: string[]): void {
    const p = this.entry(key)
    for (const k of podKeys) p.dels.add(k)
  }

  creationObserved (key: string): void {
    const p = this.pending.get(key)
    if (p !== undefined) p.adds--
  }

  /** A creation that failed will never be observed. */
  creationFailed (key: string): void { this.creationObserved(key) }

  deletionObserved (key: string, podKey: string): void {
    this.pending.get(key)?.dels.delete(podKey)
  }

  forget (key: string): void { this.pending.delete(key) }

  private entry (key: string): Pending {
    let p = this.pending.get(key)
    if (p === undefined || this.now() - p.at > TTL_MS) {
      p = { adds: 0, dels: new Set(), at: this.now() }
      this.pending.set(key, p)
    }
    p.at = this.now()
    return p
  }
}
