// The garbage collector: keeps the owner->dependents index from one store watch over every API object and
// queues the work of cascading deletion (Background, Foreground, Orphan), as Kubernetes' garbage collector does.
//
// Simplified against Kubernetes: the index holds only objects that carry ownerReferences; every decision
// re-reads the owners from the store (LMDB reads are cheap) instead of keeping virtual nodes; owners are
// matched by group and kind, not version; unresolvable references (kind not served, cluster-scoped object
// naming a namespaced owner) never cause a deletion and no warning Event is written.

import type { Store, WatchEvent, WatchHandle } from '../storage/store.js'
import type { GenericStore } from './generic-store.js'
import type { Logger } from './core.js'
import { internalContext } from './internal-context.js'
import { metaOf, parseJson } from './object-meta.js'
import { FOREGROUND_FINALIZER, ORPHAN_FINALIZER } from './finalizers-deletion.js'
import { objectKey } from './keys.js'
import { OwnerGraph, groupOf, ownerRefsOf, sameRefs, type DependentNode, type OwnerRef } from './gc-graph.js'
import { WorkQueue, type WorkOutcome } from './gc-queue.js'
import { attemptToDelete, processOwner, type GcContext } from './gc-policies.js'

export interface GarbageCollectorOptions {
  store: Store
  /** Every served handler (built-in and custom); the storage-version one of each kind is used. */
  handlers: () => GenericStore[]
  /** Subscribes to changes of the served set; returns an unsubscribe. */
  onDefinitionsChanged: (listener: () => void) => () => void
  logger: Logger
  /** First retry delay after a failure or a conflict (default 500 ms; doubles up to 30 s). */
  retryMs?: number
  /** Full re-list of every object at this interval (default 0: only at start and after a failed watch). */
  resyncMs?: number
  /** Longest wait for the index to catch up with the store before a decision (default 5 s). */
  indexWaitMs?: number
}

/** Storage keys of API objects all start here. */
const PREFIX = '/'
const LIST_PAGE = 1000
/**
 * An object that holds neither text has no owner references and no finalizers (so neither of the deletion ones this
 * collector acts on): it need not be parsed. Two searches of every stored object written (the finalizers' key, not
 * their names: a longer needle is searched faster, and one search instead of two).
 */
const MARKERS = ['"ownerReferences"', '"finalizers"'].map(s => Buffer.from(s))

export class GarbageCollector {
  private readonly o: GarbageCollectorOptions
  private readonly graph = new OwnerGraph()
  private readonly queue: WorkQueue
  private readonly unresolved = new Set<string>()
  private readonly c: GcContext
  private watch?: WatchHandle
  private kinds?: Map<string, GenericStore>
  private indexRevision = 0
  private synced = false
  private syncing = false
  private stopped = false
  private unsubscribe?: () => void
  private resyncTimer?: NodeJS.Timeout
  private indexWaiters: Array<() => void> = []

  constructor (o: GarbageCollectorOptions) {
    this.o = o
    const retryMs = o.retryMs ?? 500
    this.queue = new WorkQueue({ work: async k => await this.work(k), logger: o.logger, retryMs, waitMs: Math.max(30_000, retryMs) })
    this.c = {
      store: o.store,
      graph: this.graph,
      ctx: internalContext('system:orch:garbage-collector'),
      handlerFor: (group, kind) => this.handlerFor(group, kind),
      enqueueDependent: key => this.queue.add(`d${key}`),
      enqueueOwner: key => this.queue.add(`o${key}`),
      indexReached: async rev => await this.indexReached(rev),
      graphReady: () => this.synced,
      markUnresolved: (key, yes) => { if (yes) this.unresolved.add(key); else this.unresolved.delete(key) }
    }
  }

  /** Builds the index from a list, then follows the watch; resolves once the index is complete. */
  async start (): Promise<void> {
    this.unsubscribe = this.o.onDefinitionsChanged(() => {
      this.kinds = undefined
      for (const key of this.unresolved) this.queue.add(`d${key}`)
    })
    await this.sync()
    if ((this.o.resyncMs ?? 0) > 0) {
      this.resyncTimer = setInterval(() => { void this.resync() }, this.o.resyncMs)
      this.resyncTimer.unref()
    }
  }

  stop (): void {
    this.stopped = true
    this.unsubscribe?.()
    if (this.resyncTimer !== undefined) clearInterval(this.resyncTimer)
    this.watch?.stop()
    this.queue.stop()
    this.wakeIndexWaiters()
  }

  /** Resolves when no work is queued or retrying (owners waiting on dependents do not count). */
  async idle (): Promise<void> { await this.queue.idle() }

  /** Number of objects with ownerReferences in the index (metrics, tests). */
  get indexedDependents (): number { return this.graph.size }

  private async sync (): Promise<void> {
    this.synced = false
    this.watch?.stop()
    this.graph.clear()
    this.unresolved.clear()
    // noCount: the walk needs only whether more follow (counting the rest on every page makes it quadratic)
    let page = await this.o.store.list(PREFIX, { limit: LIST_PAGE, noCount: true })
    const revision = page.revision
    for (;;) {
      for (const kv of page.items) this.observePut(kv.key, kv.value)
      if (page.remaining === 0 || page.items.length === 0) break
      page = await this.o.store.list(PREFIX, { revision, startKey: `${page.items[page.items.length - 1].key}\x00`, limit: LIST_PAGE, noCount: true })
    }
    if (this.stopped) return
    this.indexRevision = revision
    this.watch = this.o.store.watch(PREFIX, revision, {
      onEvents: evs => this.onEvents(evs),
      onError: err => {
        if (this.stopped) return
        this.o.logger.warn({ err }, 'garbage collector watch ended; rebuilding the index')
        this.synced = false
        setTimeout(() => { void this.resync() }, this.o.retryMs ?? 500).unref()
      }
    })
    this.synced = true
    // Every dependent is checked once (owners may have gone while the server was down).
    for (const key of this.graph.keys()) this.queue.add(`d${key}`)
  }

  private async resync (): Promise<void> {
    if (this.stopped || this.syncing) return
    this.syncing = true
    try {
      await this.sync()
    } catch (err) {
      this.o.logger.warn({ err }, 'garbage collector resync failed; retrying')
      if (!this.stopped) setTimeout(() => { void this.resync() }, this.o.retryMs ?? 500).unref()
    } finally {
      this.syncing = false
    }
  }

  private onEvents (evs: WatchEvent[]): void {
    for (const ev of evs) {
      try {
        if (ev.type === 'put') this.observePut(ev.key, ev.value)
        else this.observeDelete(ev.key, ev.value)
      } catch (err) {
        this.o.logger.warn({ err, key: ev.key }, 'garbage collector: unreadable object ignored')
      }
    }
    if (evs.length > 0) this.indexRevision = evs[evs.length - 1].revision
    this.wakeIndexWaiters()
  }

  /** Updates the index from a stored object; queues what its change may unblock. */
  private observePut (key: string, value: Buffer): void {
    const prev = this.graph.get(key)
    if (prev === undefined && !MARKERS.some(m => value.includes(m))) return
    const obj = parseJson(value)
    const meta = metaOf(obj)
    if (typeof meta.uid !== 'string') return
    const finalizers = meta.finalizers ?? []
    const deleting = Boolean(meta.deletionTimestamp)
    if (deleting && (finalizers.includes(FOREGROUND_FINALIZER) || finalizers.includes(ORPHAN_FINALIZER))) this.queue.add(`o${key}`)
    const refs = ownerRefsOf(meta)
    if (refs.length === 0) {
      if (prev !== undefined) { this.graph.remove(key); this.unresolved.delete(key); this.release(prev, prev.refs) }
      return
    }
    const node: DependentNode = {
      key, uid: meta.uid, name: meta.name ?? '', namespace: meta.namespace ?? '',
      group: groupOf(String(obj.apiVersion ?? '')), kind: String(obj.kind ?? ''),
      refs, deleting, foreground: deleting && finalizers.includes(FOREGROUND_FINALIZER)
    }
    this.graph.set(node)
    if (prev === undefined || prev.uid !== node.uid || !sameRefs(prev.refs, refs)) {
      this.queue.add(`d${key}`)
      if (prev !== undefined) this.release(prev, prev.refs.filter(r => !refs.some(n => n.uid === r.uid && n.blockOwnerDeletion)))
    }
  }

  private observeDelete (key: string, value: Buffer): void {
    const prev = this.graph.remove(key)
    if (prev !== undefined) { this.unresolved.delete(key); this.release(prev, prev.refs) }
    if (this.graph.size === 0) return
    const obj = parseJson(value)
    const uid = metaOf(obj).uid
    if (typeof uid !== 'string' || !this.graph.isReferenced(uid)) return
    // An owner went away: its dependents are looked at (each decides from the stored state).
    const meta = metaOf(obj)
    const owner = { uid, group: groupOf(String(obj.apiVersion ?? '')), kind: String(obj.kind ?? ''), name: meta.name ?? '', namespace: meta.namespace ?? '' }
    for (const d of this.graph.dependentsOf(owner)) this.queue.add(`d${d.key}`)
  }

  /** A dependent stopped blocking these owners (deleted, or the references changed): they may finish. */
  private release (dependent: DependentNode, refs: OwnerRef[]): void {
    for (const r of refs) {
      if (!r.blockOwnerDeletion) continue
      const h = this.handlerFor(r.group, r.kind)
      if (h === undefined || (h.definition.namespaced && dependent.namespace === '')) continue
      this.queue.add(`o${objectKey(h.definition, h.definition.namespaced ? dependent.namespace : '', r.name)}`)
    }
  }

  private async work (item: string): Promise<WorkOutcome> {
    if (!this.synced) return 'requeue'
    const key = item.slice(1)
    return item[0] === 'd' ? await attemptToDelete(this.c, key) : await processOwner(this.c, key)
  }

  private handlerFor (group: string, kind: string): GenericStore | undefined {
    if (this.kinds === undefined) {
      this.kinds = new Map()
      for (const h of this.o.handlers()) {
        const d = h.definition
        if (d.version === d.storageVersion) this.kinds.set(`${d.group}/${d.kind}`, h)
      }
    }
    return this.kinds.get(`${group}/${kind}`)
  }

  private async indexReached (revision: number): Promise<boolean> {
    const deadline = Date.now() + (this.o.indexWaitMs ?? 5000)
    while (this.indexRevision < revision && this.synced && !this.stopped) {
      const left = deadline - Date.now()
      if (left <= 0) return false
      await new Promise<void>(resolve => {
        const t = setTimeout(resolve, Math.min(left, 100))
        this.indexWaiters.push(() => { clearTimeout(t); resolve() })
      })
    }
    return this.indexRevision >= revision && this.synced
  }

  private wakeIndexWaiters (): void {
    const w = this.indexWaiters
    this.indexWaiters = []
    for (const f of w) f()
  }
}
