// The ResourceQuota admission plugin's lister: every ResourceQuota by namespace, in memory, kept current by one
// in-process list+watch (kube-apiserver reads quotas from an informer's lister the same way).
//
// Contract: `quotas(ns)` answers from memory only while the watch runs and no quota write admitted here in `ns` is
// still unseen by it; otherwise it answers undefined and the caller reads the registry. So a quota written through
// this server is enforced from the write on; one written elsewhere (another API server on the same etcd) is missed
// until the watch delivers it, which is the next watch flush after its commit (one event-loop turn) on this server.
// Charges stay exact whatever the cache holds: they are compare-and-swaps on the quota's resourceVersion.

import type { Obj, ResourceClient } from '../../controllers/client/types.js'

/** How long a fence waits for the watch to show its quota before the write is taken as failed (never committed). */
export const FENCE_MS = 10_000

const NONE: readonly Obj[] = Object.freeze([])

const rvOf = (o: Obj): number => Number(o.metadata?.resourceVersion ?? 0)

export class QuotaLister {
  private readonly byNamespace = new Map<string, Map<string, Obj>>()
  /** Quota writes admitted but not yet seen by the watch: namespace → name → deadline (ms). */
  private readonly fences = new Map<string, Map<string, number>>()
  private state: 'idle' | 'starting' | 'synced' = 'idle'
  private watch?: { stop(): void }
  private generation = 0

  /** `client`: the resourcequotas client (a getter: the registry is built after the admission plugins). */
  constructor (private readonly client: () => ResourceClient | undefined, private readonly now: () => number = Date.now) {}

  /**
   * The namespace's quotas in name order, or undefined when memory cannot answer (not synced yet, or a quota write
   * here is still in flight); the first call starts the list+watch. The objects are shared: never mutate them.
   */
  quotas (namespace: string): readonly Obj[] | undefined {
    if (this.state !== 'synced') {
      if (this.state === 'idle') void this.start()
      return undefined
    }
    if (this.fenced(namespace)) return undefined
    const m = this.byNamespace.get(namespace)
    if (m === undefined) return NONE
    return [...m.values()].sort((a, b) => String(a.metadata.name) < String(b.metadata.name) ? -1 : 1)
  }

  /** A write of quota `name` in `namespace` is being admitted: memory does not answer for the namespace until the watch shows it. */
  fence (namespace: string, name: string): void {
    let f = this.fences.get(namespace)
    if (f === undefined) { f = new Map(); this.fences.set(namespace, f) }
    f.set(name, this.now() + FENCE_MS)
  }

  /** A quota this server just wrote (its status charged): kept unless memory holds a newer version already. */
  remember (quota: Obj): void {
    if (this.state !== 'synced') return
    this.put(quota)
  }

  /** A quota that turned out gone (its update answered 404): dropped until the watch says otherwise. */
  forget (namespace: string, name: string): void {
    this.byNamespace.get(namespace)?.delete(name)
  }

  stop (): void {
    this.reset()
  }

  private fenced (namespace: string): boolean {
    const f = this.fences.get(namespace)
    if (f === undefined) return false
    const t = this.now()
    for (const [name, deadline] of f) if (deadline <= t) f.delete(name)
    if (f.size === 0) { this.fences.delete(namespace); return false }
    return true
  }

  private async start (): Promise<void> {
    const client = this.client()
    if (client === undefined) return
    this.state = 'starting'
    const gen = ++this.generation
    try {
      const listed = await client.list('')
      if (gen !== this.generation) return
      for (const q of listed.items) this.put(q)
      const watch = await client.watch('', { resourceVersion: listed.resourceVersion }, {
        event: (type, obj) => {
          if (gen !== this.generation) return
          if (type === 'ADDED' || type === 'MODIFIED') this.put(obj)
          else if (type === 'DELETED') this.remove(obj)
          else return
          this.fences.get(String(obj.metadata?.namespace ?? ''))?.delete(String(obj.metadata?.name ?? ''))
        },
        // Ended (an error, a compaction, shutdown): back to reading the registry; the next admission starts over.
        end: () => { if (gen === this.generation) this.reset() }
      })
      if (gen !== this.generation) { watch.stop(); return }
      this.watch = watch
      this.state = 'synced'
    } catch {
      if (gen === this.generation) this.reset()
    }
  }

  private reset (): void {
    this.generation++
    this.state = 'idle'
    const w = this.watch
    this.watch = undefined
    this.byNamespace.clear()
    w?.stop()
  }

  private put (q: Obj): void {
    const ns = String(q.metadata?.namespace ?? '')
    const name = String(q.metadata?.name ?? '')
    let m = this.byNamespace.get(ns)
    if (m === undefined) { m = new Map(); this.byNamespace.set(ns, m) }
    const cur = m.get(name)
    // A late event must not replace the newer version this server wrote and remembered.
    if (cur !== undefined && rvOf(cur) > rvOf(q)) return
    m.set(name, q)
  }

  private remove (q: Obj): void {
    const ns = String(q.metadata?.namespace ?? '')
    const m = this.byNamespace.get(ns)
    if (m === undefined) return
    m.delete(String(q.metadata?.name ?? ''))
    if (m.size === 0) this.byNamespace.delete(ns)
  }
}
