// The garbage collector's decisions, read from the stored state each time: delete a dependent whose owners
// are gone (Background), finish an owner's Foreground deletion, orphan an owner's dependents (Orphan).

import type { Store } from '../storage/store.js'
import type { RequestContext } from './types.js'
import type { GenericStore } from './generic-store.js'
import { objectKey } from './keys.js'
import { metaOf, parseJson, type Obj } from './object-meta.js'
import { FOREGROUND_FINALIZER, ORPHAN_FINALIZER } from './finalizers-deletion.js'
import { groupOf, ownerRefsOf, refMatches, type OwnerGraph, type OwnerIdentity, type OwnerRef } from './gc-graph.js'
import type { WorkOutcome } from './gc-queue.js'

/** What the policies need from the collector. */
export interface GcContext {
  store: Store
  graph: OwnerGraph
  ctx: RequestContext
  /** The handler of a group/kind at its storage version (stored bytes update through it); undefined when not served. */
  handlerFor(group: string, kind: string): GenericStore | undefined
  enqueueDependent(key: string): void
  enqueueOwner(key: string): void
  /** True once the index has applied every write up to `revision` (false after a time-out). */
  indexReached(revision: number): Promise<boolean>
  /** False while the index is being rebuilt (after a failed watch): decisions must not read it then. */
  graphReady(): boolean
  /** Remembers dependents with references to kinds not served now, to look at them again when that changes. */
  markUnresolved(key: string, unresolved: boolean): void
}

type OwnerClass = 'solid' | 'dangling' | 'waiting' | 'unresolved'

export function identityOf (obj: Obj): OwnerIdentity {
  const meta = metaOf(obj)
  return { uid: meta.uid ?? '', group: groupOf(String(obj.apiVersion ?? '')), kind: String(obj.kind ?? ''), name: meta.name ?? '', namespace: meta.namespace ?? '' }
}

const hasFinalizer = (obj: Obj, f: string): boolean => (metaOf(obj).finalizers ?? []).includes(f)
const statusCode = (err: unknown): number | undefined => (err as { code?: unknown }).code as number | undefined

/**
 * An owner reference is solid (the owner exists and is not waiting for its dependents), dangling (no
 * object of that kind, name and uid), waiting (the owner is being deleted in the foreground), or
 * unresolved (its kind is not served, or a cluster-scoped object names a namespaced owner, which
 * Kubernetes never collects): unresolved counts as solid, so nothing is deleted on a guess.
 */
async function classify (c: GcContext, ref: OwnerRef, dependentNamespace: string): Promise<OwnerClass> {
  const h = c.handlerFor(ref.group, ref.kind)
  if (h === undefined) return 'unresolved'
  const def = h.definition
  if (def.namespaced && dependentNamespace === '') return 'unresolved'
  const kv = await c.store.get(objectKey(def, def.namespaced ? dependentNamespace : '', ref.name))
  if (kv === undefined) return 'dangling'
  const owner = parseJson(kv.value)
  if (metaOf(owner).uid !== ref.uid) return 'dangling'
  if (metaOf(owner).deletionTimestamp && hasFinalizer(owner, FOREGROUND_FINALIZER)) return 'waiting'
  return 'solid'
}

/** Removes from `obj` (when it is still the object with `uid`) the references `drop` matches; true when changed. */
function dropRefs (obj: Obj, uid: string, drop: (r: OwnerRef) => boolean): boolean {
  const meta = metaOf(obj)
  if (meta.uid !== uid) return false
  const before = meta.ownerReferences ?? []
  const after = before.filter(raw => { const [r] = ownerRefsOf({ ownerReferences: [raw] }); return r === undefined || !drop(r) })
  if (after.length === before.length) return false
  if (after.length === 0) delete meta.ownerReferences
  else meta.ownerReferences = after
  return true
}

/** Background collection of one dependent (Kubernetes' attemptToDeleteItem). */
export async function attemptToDelete (c: GcContext, key: string): Promise<WorkOutcome> {
  const revision = c.store.currentRevision()
  const kv = await c.store.get(key)
  if (kv === undefined) return 'done'
  const obj = parseJson(kv.value)
  const meta = metaOf(obj)
  if (meta.deletionTimestamp) {
    if (hasFinalizer(obj, FOREGROUND_FINALIZER)) c.enqueueOwner(key)
    return 'done'
  }
  const refs = ownerRefsOf(meta)
  const self = identityOf(obj)
  const h = c.handlerFor(self.group, self.kind)
  if (refs.length === 0) return 'done'
  if (h === undefined) { c.markUnresolved(key, true); return 'done' }
  const byClass: Record<OwnerClass, OwnerRef[]> = { solid: [], dangling: [], waiting: [], unresolved: [] }
  for (const r of refs) byClass[await classify(c, r, self.namespace)].push(r)
  c.markUnresolved(key, byClass.unresolved.length > 0)
  if (byClass.solid.length + byClass.unresolved.length > 0) {
    // Still owned: drop the references to gone owners and to owners waiting on it, so none of them is kept.
    const drop = [...byClass.dangling, ...byClass.waiting]
    if (drop.length === 0) return 'done'
    await h.updateInternal(c.ctx, self.namespace, self.name, o => dropRefs(o, self.uid, r => drop.some(d => sameRef(d, r))))
    return 'done'
  }
  let rv = String(kv.modRevision)
  let policy: 'Orphan' | 'Foreground' | 'Background'
  if (byClass.waiting.length > 0 && !await c.indexReached(revision)) return 'requeue'
  if (!c.graphReady()) return 'requeue'
  const dependents = c.graph.dependentsOf(self)
  if (byClass.waiting.length > 0 && dependents.length > 0) {
    // An owner waits on it and it has dependents of its own: delete it in the foreground too. When one of
    // them already waits in the foreground (a possible cycle), first stop it blocking its owners, as Kubernetes does.
    if (dependents.some(d => d.foreground)) {
      const res = await h.updateInternal(c.ctx, self.namespace, self.name, o => unblock(o, self.uid))
      if (res === undefined) return 'done'
      rv = String(metaOf(res.object).resourceVersion ?? '')
    }
    policy = 'Foreground'
  } else {
    policy = hasFinalizer(obj, ORPHAN_FINALIZER) ? 'Orphan' : hasFinalizer(obj, FOREGROUND_FINALIZER) ? 'Foreground' : 'Background'
  }
  try {
    // Preconditions: a changed object (a new owner, a new incarnation) is looked at again, never deleted blindly.
    await h.delete(c.ctx, self.namespace, self.name, { propagationPolicy: policy, preconditions: { uid: self.uid, resourceVersion: rv } })
  } catch (err) {
    if (statusCode(err) === 404) return 'done'
    if (statusCode(err) === 409) return 'requeue'
    throw err
  }
  return 'done'
}

const sameRef = (a: OwnerRef, b: OwnerRef): boolean =>
  a.uid === b.uid && a.group === b.group && a.kind === b.kind && a.name === b.name

function unblock (obj: Obj, uid: string): boolean {
  const meta = metaOf(obj)
  if (meta.uid !== uid) return false
  let changed = false
  for (const raw of meta.ownerReferences ?? []) {
    const r = raw as Record<string, unknown>
    if (r !== null && typeof r === 'object' && r.blockOwnerDeletion === true) { r.blockOwnerDeletion = false; changed = true }
  }
  return changed
}

/**
 * An owner being deleted with the `orphan` or `foregroundDeletion` finalizer. Returns 'wait' while
 * blocking dependents remain (their disappearance enqueues the owner again).
 */
export async function processOwner (c: GcContext, key: string): Promise<WorkOutcome> {
  const revision = c.store.currentRevision()
  const kv = await c.store.get(key)
  if (kv === undefined) return 'done'
  const owner = parseJson(kv.value)
  if (!metaOf(owner).deletionTimestamp) return 'done'
  const orphan = hasFinalizer(owner, ORPHAN_FINALIZER)
  if (!orphan && !hasFinalizer(owner, FOREGROUND_FINALIZER)) return 'done'
  const self = identityOf(owner)
  const h = c.handlerFor(self.group, self.kind)
  if (h === undefined) return 'done'
  // The decision reads the index: it must include every dependent created before the owner was read.
  if (!await c.indexReached(revision)) return 'requeue'
  if (orphan) return await orphanDependents(c, h, self)
  const dependents = c.graph.dependentsOf(self)
  for (const d of dependents) if (!d.deleting) c.enqueueDependent(d.key)
  if (c.graph.blockingDependentsOf(self).length > 0) return 'wait'
  await removeFinalizer(c, h, self, FOREGROUND_FINALIZER)
  return 'done'
}

async function orphanDependents (c: GcContext, h: GenericStore, owner: OwnerIdentity): Promise<WorkOutcome> {
  for (const d of [...c.graph.dependentsOf(owner)]) {
    const dh = c.handlerFor(d.group, d.kind)
    if (dh === undefined) throw new Error(`cannot orphan ${d.kind} ${d.name}: ${d.group === '' ? 'core' : d.group} ${d.kind} is not served`)
    await dh.updateInternal(c.ctx, d.namespace, d.name, o => dropRefs(o, d.uid, r => refMatches(r, d.namespace, owner)))
  }
  // An index rebuilt meanwhile may hold dependents this pass did not see: look again before letting go.
  if (!c.graphReady()) return 'requeue'
  await removeFinalizer(c, h, owner, ORPHAN_FINALIZER)
  return 'done'
}

async function removeFinalizer (c: GcContext, h: GenericStore, owner: OwnerIdentity, finalizer: string): Promise<void> {
  await h.updateInternal(c.ctx, owner.namespace, owner.name, o => {
    const meta = metaOf(o)
    if (meta.uid !== owner.uid || !(meta.finalizers ?? []).includes(finalizer)) return false
    const rest = (meta.finalizers ?? []).filter(f => f !== finalizer)
    if (rest.length === 0) delete meta.finalizers
    else meta.finalizers = rest
    return true
  })
}
