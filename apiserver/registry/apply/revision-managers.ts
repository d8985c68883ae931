// The managers of the object revision each server-side apply last stored, per object key, kept decoded: the next
// apply to that object, when it finds that revision still stored, starts from them instead of decoding its
// managedFields again. An entry also tells that the revision is one this handler validated with its schema and stored.
// Bounded (least recently used first out); an entry serves only its own revision.

import type { WrittenManagers } from './written-managers.js'

interface Kept { revision: number; managers: WrittenManagers }

export class RevisionManagers {
  private readonly entries = new Map<string, Kept>()

  /** `capacity` objects at most (0: none kept); an entry holds an object's managers' sets (shared with later revisions). */
  constructor (private readonly capacity = 1024) {}

  /** The managers kept for `key` at `revision`; an entry for another revision is dropped (it can serve no one now). */
  get (key: string, revision: number): WrittenManagers | undefined {
    const hit = this.entries.get(key)
    if (hit === undefined) return undefined
    this.entries.delete(key)
    if (hit.revision !== revision) return undefined
    this.entries.set(key, hit)
    return hit.managers
  }

  /**
   * `managers` are the decoding of the managedFields stored at `revision` of `key` (FieldManager.writtenManagers), a
   * revision this handler's apply validated and stored.
   */
  put (key: string, revision: number, managers: WrittenManagers): void {
    if (this.capacity <= 0) return
    this.entries.delete(key)
    this.entries.set(key, { revision, managers })
    if (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next().value
      if (oldest !== undefined) this.entries.delete(oldest)
    }
  }

  get size (): number { return this.entries.size }
}
