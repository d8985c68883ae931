// A hub's watchers whose selector has an equality term (pods by spec.nodeName, objects by a label value), by term
// then value: an event is offered only to those whose value the object has now or had before the change.

import type { FieldGetter } from './selectors.js'
import type { HubEvent } from './watch-events.js'
import type { Watcher } from './watch-cohort.js'

export class WatchSelectorIndex {
  private readonly byTerm = new Map<string, { get: FieldGetter, byValue: Map<string, Set<Watcher>> }>()

  get size (): number { return this.byTerm.size }

  /** Indexes the watcher by its selector's equality term; false when it has none (it must see every event). */
  add (w: Watcher): boolean {
    const term = w.spec.selector?.watchTerm
    if (term === undefined) return false
    let idx = this.byTerm.get(term.term)
    if (idx === undefined) { idx = { get: term.get, byValue: new Map() }; this.byTerm.set(term.term, idx) }
    let set = idx.byValue.get(term.value)
    if (set === undefined) { set = new Set(); idx.byValue.set(term.value, set) }
    set.add(w)
    return true
  }

  remove (w: Watcher): void {
    const term = w.spec.selector?.watchTerm
    if (term === undefined) return
    const idx = this.byTerm.get(term.term)
    const set = idx?.byValue.get(term.value)
    if (idx === undefined || set === undefined) return
    set.delete(w)
    if (set.size === 0) idx.byValue.delete(term.value)
    if (idx.byValue.size === 0) this.byTerm.delete(term.term)
  }

  /** Calls `offer` for each watcher whose value the object has now or had before the change. */
  offer (he: HubEvent, offer: (w: Watcher) => void): void {
    for (const idx of this.byTerm.values()) {
      const cur = idx.get(he.object())
      const now = idx.byValue.get(cur)
      if (now !== undefined) for (const w of now) offer(w)
      const prev = he.prevObject()
      if (prev === undefined) continue
      const before = idx.get(prev)
      const was = before !== cur ? idx.byValue.get(before) : undefined
      if (was !== undefined) for (const w of was) offer(w)
    }
  }
}
