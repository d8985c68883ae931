// Applies recently found to change nothing, per object revision and manager: GitOps tools re-apply the same
// configuration every sync, and such a repeat is answered from the store without merging again.
// Bounded (least recently used first out); a revision change makes old entries unreachable.

import * as crypto from 'node:crypto'

export class RecentNoopApplies {
  private readonly entries = new Map<string, string>()

  constructor (private readonly capacity = 4096) {}

  /** A digest of the configuration as sent (before any defaulting or pruning). */
  static digest (config: unknown): string {
    const text = JSON.stringify(config)
    // crypto.hash (one call, no Hash object) exists from Node 20.12.
    return typeof crypto.hash === 'function' ? crypto.hash('sha1', text, 'base64') : crypto.createHash('sha1').update(text).digest('base64')
  }

  /**
   * Whether applying the configuration as `manager` to the object at `revision` was found to change nothing;
   * `digest` is asked for only when something was remembered for that object revision and manager.
   */
  has (objectKey: string, revision: number, manager: string, subresource: string, force: boolean, digest: () => string): boolean {
    const key = this.key(objectKey, revision, manager, subresource, force)
    const hit = this.entries.get(key)
    if (hit === undefined || hit !== digest()) return false
    this.entries.delete(key)
    this.entries.set(key, hit)
    return true
  }

  remember (objectKey: string, revision: number, manager: string, subresource: string, force: boolean, digest: string): void {
    const key = this.key(objectKey, revision, manager, subresource, force)
    this.entries.delete(key)
    this.entries.set(key, digest)
    if (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next().value
      if (oldest !== undefined) this.entries.delete(oldest)
    }
  }

  get size (): number { return this.entries.size }

  private key (objectKey: string, revision: number, manager: string, subresource: string, force: boolean): string {
    return `${objectKey}\u0000${revision}\u0000${manager}\u0000${subresource}\u0000${force ? 1 : 0}`
  }
}
