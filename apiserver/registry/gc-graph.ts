// The garbage collector's owner->dependents index: only objects that carry ownerReferences are kept.

import type { Meta } from './object-meta.js'

export interface OwnerRef {
  apiVersion: string
  /** API group of apiVersion ('' = core); owners are matched by group and kind, never by version. */
  group: string
  kind: string
  name: string
  uid: string
  blockOwnerDeletion: boolean
}

/** A live object with at least one ownerReference, as last seen by the watch. */
export interface DependentNode {
  key: string
  uid: string
  name: string
  namespace: string
  group: string
  kind: string
  refs: OwnerRef[]
  /** Has a deletionTimestamp. */
  deleting: boolean
  /** Has a deletionTimestamp and the foregroundDeletion finalizer (it waits for its own dependents). */
  foreground: boolean
}

/** What identifies an owner: a reference matches it only by uid, group, kind, name and (for namespaced owners) namespace. */
export interface OwnerIdentity {
  uid: string
  group: string
  kind: string
  name: string
  /** '' for a cluster-scoped owner. */
  namespace: string
}

export const groupOf = (apiVersion: string): string => {
  const slash = apiVersion.indexOf('/')
  return slash < 0 ? '' : apiVersion.slice(0, slash)
}

/** The well-formed ownerReferences of an object (malformed entries are ignored, never acted upon). */
export function ownerRefsOf (meta: Meta): OwnerRef[] {
  const out: OwnerRef[] = []
  for (const r of meta.ownerReferences ?? []) {
    if (r === null || typeof r !== 'object') continue
    const { apiVersion, kind, name, uid, blockOwnerDeletion } = r as Record<string, unknown>
    if (typeof apiVersion !== 'string' || typeof kind !== 'string' || typeof name !== 'string' || typeof uid !== 'string' || uid === '') continue
    out.push({ apiVersion, group: groupOf(apiVersion), kind, name, uid, blockOwnerDeletion: blockOwnerDeletion === true })
  }
  return out
}

export function refMatches (ref: OwnerRef, dependentNamespace: string, owner: OwnerIdentity): boolean {
  return ref.uid === owner.uid && ref.group === owner.group && ref.kind === owner.kind && ref.name === owner.name &&
    (owner.namespace === '' || owner.namespace === dependentNamespace)
}

export function sameRefs (a: OwnerRef[], b: OwnerRef[]): boolean {
  return a.length === b.length && a.every((r, i) => r.uid === b[i].uid && r.group === b[i].group && r.kind === b[i].kind &&
    r.name === b[i].name && r.blockOwnerDeletion === b[i].blockOwnerDeletion)
}

export class OwnerGraph {
  private readonly nodes = new Map<string, DependentNode>()
  /** Owner uid -> keys of the objects referencing that uid. */
  private readonly byOwner = new Map<string, Set<string>>()

  get size (): number { return this.nodes.size }
  get (key: string): DependentNode | undefined { return this.nodes.get(key) }
  keys (): IterableIterator<string> { return this.nodes.keys() }

  /** Adds or replaces the node at its key; returns the previous one. */
  set (node: DependentNode): DependentNode | undefined {
    const prev = this.remove(node.key)
    this.nodes.set(node.key, node)
    for (const r of node.refs) {
      let s = this.byOwner.get(r.uid)
      if (s === undefined) { s = new Set(); this.byOwner.set(r.uid, s) }
      s.add(node.key)
    }
    return prev
  }

  remove (key: string): DependentNode | undefined {
    const node = this.nodes.get(key)
    if (node === undefined) return undefined
    this.nodes.delete(key)
    for (const r of node.refs) {
      const s = this.byOwner.get(r.uid)
      if (s === undefined) continue
      s.delete(key)
      if (s.size === 0) this.byOwner.delete(r.uid)
    }
    return node
  }

  /** True when some object references this uid (of any kind: a cheap first filter). */
  isReferenced (uid: string): boolean { return this.byOwner.has(uid) }

  /** The dependents whose references match the owner exactly (another kind with the same uid does not count). */
  dependentsOf (owner: OwnerIdentity): DependentNode[] {
    const out: DependentNode[] = []
    for (const key of this.byOwner.get(owner.uid) ?? []) {
      const node = this.nodes.get(key)
      if (node !== undefined && node.refs.some(r => refMatches(r, node.namespace, owner))) out.push(node)
    }
    return out
  }

  /** Dependents that block the owner's foreground deletion (blockOwnerDeletion: true). */
  blockingDependentsOf (owner: OwnerIdentity): DependentNode[] {
    return this.dependentsOf(owner).filter(n => n.refs.some(r => r.blockOwnerDeletion && refMatches(r, n.namespace, owner)))
  }

  clear (): void {
    this.nodes.clear()
    this.byOwner.clear()
  }
}
