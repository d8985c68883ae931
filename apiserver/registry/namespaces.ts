// Namespaces: the strategy (Active/Terminating, spec.finalizers), the admission gate for namespaced creates,
// and the lifecycle controller that empties a deleted namespace and then removes it.

import { forbidden, notFound, type QualifiedResource } from '../errors/status-error.js'
import type { Store, WatchHandle } from '../storage/store.js'
import type { Strategy } from './strategy.js'
import { fieldPathValue } from './selectors.js'
import { metaOf, parseJson, type Obj } from './object-meta.js'
import { objectKey, resourcePrefix } from './keys.js'
import { internalContext } from './internal-context.js'
import type { GenericStore } from './generic-store.js'
import type { Logger } from './core.js'
import { isTerminating, type NamespaceLister } from './namespace-lister.js'

export const NAMESPACE_FINALIZER = 'orch'
export const INITIAL_NAMESPACES = ['default', 'orch-system', 'orch-public', 'orch-node-lease']
/** Kubernetes' names of the initial namespaces, made too when the upstream group names are served. */
export const UPSTREAM_NAMESPACES = ['kube-system', 'kube-public', 'kube-node-lease']
/** Namespaces that may not be deleted (Kubernetes: default, kube-system, kube-public). */
export const PROTECTED_NAMESPACES = ['default', 'orch-system', 'orch-public']
const NAMESPACES = { group: '', plural: 'namespaces', namespaced: false }
const NAMESPACES_QR = { group: '', resource: 'namespaces' }
/** The immutable label naming a namespace (Kubernetes: kubernetes.io/metadata.name), set on create and update. */
export const NAMESPACE_NAME_LABEL = 'orch.io/metadata.name'
/** The same label under Kubernetes' prefix, which standard manifests select on (NetworkPolicy namespaceSelectors). */
export const UPSTREAM_NAMESPACE_NAME_LABEL = 'kubernetes.io/metadata.name'

interface NamespaceSpec { finalizers?: string[] }
const specOf = (obj: Obj): NamespaceSpec => (obj.spec ??= {}) as NamespaceSpec

function labelName (obj: Obj): void {
  const meta = metaOf(obj)
  if (meta.name === undefined || meta.name === '') return
  meta.labels = { ...(meta.labels ?? {}), [NAMESPACE_NAME_LABEL]: meta.name, [UPSTREAM_NAMESPACE_NAME_LABEL]: meta.name }
}

export const namespaceStrategy: Strategy = {
  fieldLabels: { 'status.phase': o => fieldPathValue(o, 'status.phase') },
  prepareForCreate (obj) {
    const spec = specOf(obj)
    if (spec.finalizers === undefined) spec.finalizers = [NAMESPACE_FINALIZER]
    obj.status = { phase: 'Active' }
    labelName(obj)
  },
  // After generateName has produced the name (prepareForCreate may not know it yet).
  admitCreate (obj) { labelName(obj) },
  prepareForUpdate (obj, old, sc) {
    labelName(obj)
    // spec.finalizers change only through the lifecycle controller (Kubernetes: the finalize subresource).
    if (!sc.internal) {
      const prev = (old.spec as NamespaceSpec | undefined)?.finalizers
      if (prev === undefined) delete specOf(obj).finalizers
      else specOf(obj).finalizers = prev
    }
  },
  admitDelete (obj) {
    const name = metaOf(obj).name ?? ''
    if (PROTECTED_NAMESPACES.includes(name)) throw forbidden(NAMESPACES_QR, name, 'this namespace may not be deleted')
  },
  holdsDeletion (obj) {
    return ((obj.spec as NamespaceSpec | undefined)?.finalizers ?? []).length > 0
  },
  beginDelete (obj) {
    obj.status = { ...(obj.status as Obj | undefined ?? {}), phase: 'Terminating' }
  }
}

/**
 * The gate for creates in a namespace: 404 when missing, 403 while it terminates. From `lister` when it knows the
 * namespace (a map lookup), else from the store.
 */
export function namespaceAdmission (store: Store, qr: QualifiedResource, lister?: NamespaceLister): (namespace: string, name: string) => Promise<void> {
  // Whether a namespace terminates, by its stored bytes: every create in a namespace reads the same bytes, and
  // comparing them is far cheaper than parsing them again. Bounded: cleared when it holds too many namespaces.
  const seen = new Map<string, { bytes: Buffer, terminating: boolean }>()
  const terminating = (key: string, bytes: Buffer): boolean => {
    const known = seen.get(key)
    if (known !== undefined && known.bytes.equals(bytes)) return known.terminating
    const verdict = isTerminating(parseJson(bytes))
    if (seen.size >= 1024) seen.clear()
    seen.set(key, { bytes: Buffer.from(bytes), terminating: verdict })
    return verdict
  }
  const refuse = (namespace: string, name: string): never => {
    const err = forbidden(qr, name, `unable to create new content in namespace ${namespace} because it is being terminated`)
    // As Kubernetes' NamespaceLifecycle admission: a cause clients (and kubectl) recognise.
    err.details!.causes = [{ reason: 'NamespaceTerminating', message: `namespace ${namespace} is being terminated`, field: 'metadata.namespace' }]
    throw err
  }
  return async (namespace, name) => {
    const known = lister?.terminating(namespace)
    if (known === false) return
    if (known === true) refuse(namespace, name)
    // As kube-apiserver's NamespaceLifecycle: the namespace from the watch cache (its informer), and only when the
    // cache does not hold it a read of the store (a namespace created a moment ago, maybe through another server).
    const key = objectKey(NAMESPACES, '', namespace)
    const kv = await store.get(key, { notOlderThan: 0 }) ?? await store.get(key)
    if (kv === undefined) throw notFound(NAMESPACES_QR, namespace)
    if (terminating(key, kv.value)) refuse(namespace, name)
  }
}


export interface NamespaceControllerOptions {
  store: Store
  namespaces: GenericStore
  /** Handlers of every namespaced resource, one per storage prefix. */
  namespacedHandlers: () => GenericStore[]
  logger: Logger
  /** Delay between rounds while objects (finalizers, graceful pods) remain. */
  retryMs?: number
  /** Namespaces made at start (default INITIAL_NAMESPACES). */
  initialNamespaces?: string[]
  /** Kept current by this controller's watch, for the namespace gate. */
  lister?: NamespaceLister
  /** First delay before the list and watch start again after the watch failed (doubles up to 30 s; default 1 s). */
  rewatchMs?: number
}

const MAX_REWATCH_MS = 30_000

/** Finalizes deleted namespaces: deletes their content (waiting on finalizers), then drops the `orch` finalizer. */
export class NamespaceController {
  private readonly o: NamespaceControllerOptions
  private readonly ctx = internalContext('system:orch:namespace-controller')
  private watch?: WatchHandle
  private rewatchDelay = 0
  private readonly running = new Map<string, Promise<void>>()
  private readonly timers = new Set<NodeJS.Timeout>()
  private stopped = false

  constructor (o: NamespaceControllerOptions) { this.o = o }

  async start (): Promise<void> {
    for (const name of this.o.initialNamespaces ?? INITIAL_NAMESPACES) {
      try {
        await this.o.namespaces.create(this.ctx, '', { object: { metadata: { name } }, duplicateFields: [] })
      } catch (err) {
        if ((err as { code?: number }).code !== 409) throw err
      }
    }
    await this.listAndWatch()
  }

  /**
   * Lists the namespaces, then watches from the list's revision. A failed watch (the store dropped a slow watcher,
   * or compacted past it) starts over after a delay that doubles while lists fail, as an informer relists; until
   * then the gate reads the store and deletions wait for the next list.
   */
  private async listAndWatch (): Promise<void> {
    const prefix = resourcePrefix(NAMESPACES)
    const listed = await this.o.store.list(prefix)
    if (this.stopped) return
    const items = listed.items.map(kv => parseJson(kv.value))
    this.o.lister?.reset(items)
    this.rewatchDelay = this.o.rewatchMs ?? 1000
    this.watch = this.o.store.watch(prefix, listed.revision, {
      onEvents: evs => {
        for (const ev of evs) {
          if (ev.type === 'delete') { this.o.lister?.remove(ev.key.slice(prefix.length)); continue }
          const ns = parseJson(ev.value)
          this.o.lister?.put(ns)
          this.consider(ns)
        }
      },
      onError: err => {
        this.o.lister?.stop()
        if (this.stopped) return
        this.o.logger.warn({ err, retryMs: this.rewatchDelay }, 'namespace controller watch ended; listing again')
        this.rewatchLater()
      }
    })
    for (const ns of items) this.consider(ns)
  }

  private rewatchLater (): void {
    const delay = this.rewatchDelay
    this.rewatchDelay = Math.min(MAX_REWATCH_MS, delay * 2)
    this.later(() => {
      this.listAndWatch().catch(err => {
        if (this.stopped) return
        this.o.logger.warn({ err, retryMs: this.rewatchDelay }, 'namespace controller list failed; retrying')
        this.rewatchLater()
      })
    }, delay)
  }

  stop (): void {
    this.stopped = true
    this.watch?.stop()
    this.o.lister?.stop()
    for (const t of this.timers) clearTimeout(t)
    this.timers.clear()
  }

  /** Resolves when no finalization is in flight (tests). */
  async idle (): Promise<void> {
    while (this.running.size > 0) await Promise.all([...this.running.values()])
  }

  private consider (ns: Obj): void {
    const meta = metaOf(ns)
    if (!meta.deletionTimestamp || meta.name === undefined) return
    const name = meta.name
    if (this.running.has(name) || this.stopped) return
    const run = this.finalize(name)
      .catch(err => { this.o.logger.warn({ err, namespace: name }, 'namespace finalization failed; retrying'); return false })
      .then(done => {
        this.running.delete(name)
        if (!done && !this.stopped) {
          this.later(() => { this.retry(name).catch(err => this.o.logger.warn({ err, namespace: name }, 'namespace read failed; retrying')) })
        }
      })
    this.running.set(name, run)
  }

  private later (fn: () => void, ms = this.o.retryMs ?? 500): void {
    const t = setTimeout(() => { this.timers.delete(t); fn() }, ms)
    this.timers.add(t)
  }

  private async retry (name: string): Promise<void> {
    const kv = await this.o.store.get(objectKey(NAMESPACES, '', name))
    if (kv !== undefined) this.consider(parseJson(kv.value))
  }

  /** One round: delete what is left; true once the namespace itself was released. */
  private async finalize (namespace: string): Promise<boolean> {
    let remaining = 0
    for (const h of this.o.namespacedHandlers()) {
      const listed = await h.list(this.ctx, namespace, {})
      for (const bytes of listed.items) {
        remaining++
        const meta = metaOf(parseJson(bytes))
        if (meta.deletionTimestamp) continue
        try {
          const res = await h.delete(this.ctx, namespace, meta.name ?? '', { propagationPolicy: 'Background' })
          if (res.deleted) remaining--
        } catch (err) {
          if ((err as { code?: number }).code === 404) remaining--
          else throw err
        }
      }
    }
    if (remaining > 0) return false
    await this.o.namespaces.updateInternal(this.ctx, '', namespace, obj => {
      const spec = specOf(obj)
      const before = spec.finalizers ?? []
      spec.finalizers = before.filter(f => f !== NAMESPACE_FINALIZER)
      return spec.finalizers.length !== before.length
    })
    return true
  }
}
