// What the namespace gate and admission know without reading the store: each namespace, and whether it terminates, as
// the namespace controller's store watch last delivered it (kube-apiserver's NamespaceLifecycle reads an informer's lister).
//
// Contract: `terminating(name)` answers only from a watch that is running (gap-free from the list it started at);
// undefined means "not known here, read the store". On LMDB the store hands each commit to its live watchers as it
// settles the write, before the write returns, so a namespace's deletion is refused at once; on etcd it lags by the
// watch's latency, as the watch cache the gate read before did. A namespace missing here (created a moment ago, or
// through another server) is read from the store.

import { metaOf, type Obj } from './object-meta.js'

/** A namespace refuses new content once it is being deleted. */
export function isTerminating (ns: Obj): boolean {
  const phase = (ns.status as { phase?: string } | undefined)?.phase
  return Boolean(metaOf(ns).deletionTimestamp) || phase === 'Terminating'
}

export class NamespaceLister {
  private readonly verdicts = new Map<string, boolean>()
  private readonly objects = new Map<string, Obj>()
  private live = false

  /** The watch starts from a list: its namespaces replace whatever was known. */
  reset (listed: Obj[]): void {
    this.verdicts.clear()
    this.objects.clear()
    for (const ns of listed) this.put(ns)
    this.live = true
  }

  put (ns: Obj): void {
    const name = metaOf(ns).name
    if (name === undefined || name === '') return
    this.verdicts.set(name, isTerminating(ns))
    this.objects.set(name, ns)
  }

  remove (name: string): void {
    this.verdicts.delete(name)
    this.objects.delete(name)
  }

  /** The watch ended: nothing is known until a new one starts. */
  stop (): void {
    this.live = false
    this.verdicts.clear()
    this.objects.clear()
  }

  /** Whether the namespace terminates; undefined when not known here. */
  terminating (name: string): boolean | undefined {
    return this.live ? this.verdicts.get(name) : undefined
  }

  /** The namespace as the watch delivered it (shared: never changed); undefined when not known here. */
  object (name: string): Readonly<Obj> | undefined {
    return this.live ? this.objects.get(name) : undefined
  }
}
