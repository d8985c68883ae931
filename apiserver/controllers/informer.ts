// Shared informers: one list+watch per resource for every controller, a local cache, and change notifications.

import type { ControllerClock } from './clock.js'
import type { ApiClient, Obj, Resource, ResourceClient } from './client/types.js'
import type { Logger } from '../registry/core.js'

export interface EventHandlers {
  add?(obj: Obj): void
  update?(old: Obj, cur: Obj): void
  delete?(obj: Obj): void
}

/** `namespace/name` for namespaced objects, `name` otherwise: the key controllers queue. */
export function keyOf (obj: Obj): string {
  const ns = obj.metadata?.namespace
  return typeof ns === 'string' && ns !== '' ? `${ns}/${String(obj.metadata?.name)}` : String(obj.metadata?.name)
}

export function splitKey (key: string): [string, string] {
  const i = key.indexOf('/')
  return i < 0 ? ['', key] : [key.slice(0, i), key.slice(i + 1)]
}

const LIST_PAGE = 500

/**
 * Mirrors one resource. After a watch ends it re-lists and reports the differences as events, so handlers
 * never miss a change. Cached objects are shared: callers clone before they change one.
 */
export class SharedInformer {
  private readonly cache = new Map<string, Obj>()
  private readonly handlers: EventHandlers[] = []
  private readonly client: ResourceClient
  private watch?: { stop(): void }
  private stopped = false
  private synced = false
  private readonly syncWaiters: Array<() => void> = []
  private retry = 0

  constructor (readonly resource: Resource, client: ApiClient, private readonly clock: ControllerClock, private readonly logger: Logger) {
    this.client = client.resource(resource)
  }

  addEventHandler (h: EventHandlers): void {
    this.handlers.push(h)
    if (this.synced) for (const o of this.cache.values()) h.add?.(o)
  }

  get (key: string): Obj | undefined { return this.cache.get(key) }

  /** Every cached object, or those of one namespace. */
  list (namespace?: string): Obj[] {
    const all = [...this.cache.values()]
    return namespace === undefined ? all : all.filter(o => (o.metadata?.namespace ?? '') === namespace)
  }

  hasSynced (): boolean { return this.synced }

  async waitForSync (): Promise<void> {
    if (this.synced) return
    await new Promise<void>(resolve => this.syncWaiters.push(resolve))
  }

  start (): void {
    void this.run()
  }

  stop (): void {
    this.stopped = true
    this.watch?.stop()
    for (const w of this.syncWaiters.splice(0)) w()
  }

  private async run (): Promise<void> {
    if (this.stopped) return
    try {
      const rv = await this.relist()
      if (this.stopped) return
      this.retry = 0
      let lastRv = rv
      this.watch = await this.client.watch('', { resourceVersion: rv }, {
        event: (type, obj) => {
          if (type === 'ERROR') return
          lastRv = String(obj.metadata?.resourceVersion ?? lastRv)
          if (type === 'BOOKMARK') return
          this.apply(type, obj)
        },
        end: err => {
          if (this.stopped) return
          if (err !== undefined) this.logger.debug({ resource: this.resource.resource, err }, 'informer watch ended')
          this.clock.after(err === undefined ? 0 : 200, () => { void this.run() })
        }
      })
    } catch (err) {
      if (this.stopped) return
      const delay = Math.min(30_000, 200 * 2 ** this.retry++)
      this.logger.warn({ resource: this.resource.resource, err, delay }, 'informer list failed; retrying')
      this.clock.after(delay, () => { void this.run() })
    }
  }

  /** Lists everything and reconciles the cache with it; returns the list's resourceVersion. */
  private async relist (): Promise<string> {
    const seen = new Set<string>()
    let cont = ''
    let rv = ''
    do {
      const page = await this.client.list('', { limit: LIST_PAGE, continue: cont === '' ? undefined : cont })
      rv = page.resourceVersion
      cont = page.continue
      for (const o of page.items) {
        const k = keyOf(o)
        seen.add(k)
        const old = this.cache.get(k)
        if (old === undefined) this.apply('ADDED', o)
        else if (old.metadata?.resourceVersion !== o.metadata?.resourceVersion) this.apply('MODIFIED', o)
      }
    } while (cont !== '')
    for (const [k, o] of this.cache) if (!seen.has(k)) this.apply('DELETED', o)
    if (!this.synced) {
      this.synced = true
      for (const w of this.syncWaiters.splice(0)) w()
    }
    return rv
  }

  private apply (type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: Obj): void {
    const k = keyOf(obj)
    const old = this.cache.get(k)
    if (type === 'DELETED') {
      this.cache.delete(k)
      for (const h of this.handlers) h.delete?.(old ?? obj)
      return
    }
    this.cache.set(k, obj)
    for (const h of this.handlers) {
      if (old === undefined) h.add?.(obj)
      else h.update?.(old, obj)
    }
  }
}

/** One informer per resource, shared by every controller that asks for it. */
export class InformerFactory {
  private readonly informers = new Map<string, SharedInformer>()
  private started = false

  constructor (private readonly client: ApiClient, private readonly clock: ControllerClock, private readonly logger: Logger) {}

  informer (r: Resource): SharedInformer {
    const k = `${r.group}/${r.version}/${r.resource}`
    let inf = this.informers.get(k)
    if (inf === undefined) {
      inf = new SharedInformer(r, this.client, this.clock, this.logger)
      this.informers.set(k, inf)
      if (this.started) inf.start()
    }
    return inf
  }

  start (): void {
    this.started = true
    for (const inf of this.informers.values()) inf.start()
  }

  async waitForSync (): Promise<void> {
    await Promise.all([...this.informers.values()].map(async i => await i.waitForSync()))
  }

  stop (): void {
    for (const inf of this.informers.values()) inf.stop()
  }
}
