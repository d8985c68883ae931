// Ownership bookkeeping of server-side apply (structured-merge-diff's Updater): an apply merges a configuration,
// prunes what its manager dropped, and fails on conflicts unless forced; any other write moves ownership of what it
// changed to its manager. Versions are recorded per manager; conversion between them is the identity.

import { jsonEqual, type Json } from '../patch/json-pointer.js'
import type { PathElement } from './field-path.js'
import { FieldSet } from './field-set.js'
import type { MergeType } from './merge-type.js'
import { ensureNamedFieldsAreMembers, merge, reconcileWithSchema, removeItems } from './typed-merge.js'
import { compare, toFieldSet, type Comparison } from './typed-sets.js'
import { setsExactly, type DroppedFields } from './config-set-match.js'

export interface ManagerSet {
  set: FieldSet
  apiVersion: string
  /** Whether the set came from an apply (an Apply entry) rather than an update. */
  applied: boolean
  /** The FieldsV1 tree `set` was decoded from, reused when encoding an unchanged set. */
  encoded?: unknown
}

/** Managers by identifier (the Kubernetes layer encodes manager, operation, version and subresource into it). */
export type Managers = Map<string, ManagerSet>

export interface Conflict { manager: string; path: PathElement[] }

/** An apply that would change fields other managers own. */
export class ApplyConflicts extends Error {
  readonly code = 'APPLY_ERR_CONFLICT'
  constructor (readonly conflicts: Conflict[]) {
    super(`${conflicts.length} conflict(s)`)
  }
}

export class Updater {
  /**
   * Sets found to need no change for this updater's schema. Sets are never changed once they are a manager's (every
   * operation makes a new one), and a kept revision's managers meet the same sets apply after apply.
   */
  private readonly reconciled = new WeakSet<FieldSet>()

  /**
   * `filter` removes the fields the write may not own (system metadata, those the kind's strategy resets); it may
   * change the set it is given (always one made for the call) and returns the result.
   */
  constructor (private readonly type: MergeType, private readonly filter: (s: FieldSet) => FieldSet = s => s,
    /** What `filter` drops, when it is FieldSet.dropShallow of these: an applier's unchanged set is then found in one walk. */
    private readonly dropped?: DroppedFields) {}

  /** A non-apply write by `manager`: it gains what it added or changed; others lose that and what was removed. */
  update (live: Json, next: Json, version: string, given: Managers, manager: string): Managers {
    const managers = this.reconcile(given)
    const { managers: out, comparison } = this.takeOwnership(live, next, version, managers, manager, true)
    const previous = out.get(manager)?.set
    // A manager new to the object (every create) owns just what it changed: the comparison's sets are this call's own.
    const set = this.filter(previous === undefined || previous.empty()
      ? unionOf(comparison.added, comparison.modified)
      : previous.difference(comparison.removed).union(comparison.modified).union(comparison.added))
    if (set.empty()) out.delete(manager)
    else out.set(manager, { set, apiVersion: version, applied: false })
    return out
  }

  /**
   * Applies `config` as `manager`. Returns the new object, or undefined when it equals `live` (a no-op), and the
   * new managers. Throws ApplyConflicts when not forced and other managers own changed fields.
   */
  apply (live: Json, config: Json, version: string, managers: Managers, manager: string, force: boolean):
  { object: Json | undefined, managers: Managers, unchanged: boolean } {
    managers = this.reconcile(managers)
    const merged = merge(live, config, this.type) ?? {}
    const last = managers.get(manager)
    const again = last !== undefined && last.applied && last.apiVersion === version
    // The same fields as last time (what an applier changing only values sends): its set is kept, none is made.
    const kept = again && this.dropped !== undefined && setsExactly(config, this.type, last.set, this.dropped)
    const set = kept ? last.set : this.filter(toFieldSet(config, this.type))
    const same = again && (kept || last.set.equals(set))
    // The same configuration again (what GitOps tools send every sync): nothing to prune, change or take.
    if (same && jsonEqual(live, merged)) return { object: undefined, managers, unchanged: true }
    const next = new Map(managers)
    next.set(manager, same ? last : { set, apiVersion: version, applied: true })
    // Pruning removes only what the last configuration had and this one dropped (nothing, when the sets are equal).
    const dropped = last !== undefined && !same && !last.set.difference(set).empty()
    const pruned = dropped ? this.prune(merged, next, last) : merged
    const { managers: out } = this.takeOwnership(live, pruned, version, next, manager, force)
    return { object: jsonEqual(live, pruned) ? undefined : pruned, managers: out, unchanged: false }
  }

  /** Managers' sets adjusted to the current schema (structures that became atomic are owned whole). */
  private reconcile (managers: Managers): Managers {
    let out: Managers | undefined
    for (const [id, m] of managers) {
      if (this.reconciled.has(m.set)) continue
      const set = reconcileWithSchema(m.set, this.type)
      if (set === undefined) {
        this.reconciled.add(m.set)
        continue
      }
      out ??= new Map(managers)
      out.set(id, { set, apiVersion: m.apiVersion, applied: m.applied })
    }
    return out ?? managers
  }

  /** Conflicts and removals against every other manager; with `force`, their changed fields are taken away. */
  private takeOwnership (old: Json, next: Json, version: string, managers: Managers, workflow: string, force: boolean):
  { managers: Managers, comparison: Comparison } {
    const raw = compare(old, next, this.type)
    // Changes to fields the write may not own (reset by the strategy) neither conflict nor move ownership.
    const comparison = { added: this.filter(raw.added), modified: this.filter(raw.modified), removed: this.filter(raw.removed) }
    const changed = unionOf(comparison.modified, comparison.added)
    const conflicts: Array<[string, FieldSet]> = []
    const out = new Map(managers)
    for (const [id, m] of managers) {
      if (id === workflow) continue
      const conflict = m.set.intersection(changed)
      if (!conflict.empty()) conflicts.push([id, conflict])
    }
    if (!force && conflicts.length > 0) {
      conflicts.sort((a, b) => a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)
      throw new ApplyConflicts(conflicts.flatMap(([manager, set]) => set.paths().map(path => ({ manager, path }))))
    }
    for (const [id, m] of managers) {
      const set = id === workflow ? m.set : m.set.difference(changed).difference(comparison.removed)
      if (set.empty()) out.delete(id)
      else if (set !== m.set && !set.equals(m.set)) out.set(id, { set, apiVersion: m.apiVersion, applied: m.applied })
    }
    return { managers: out, comparison }
  }

  /** Removes what the applier owned last time and dropped, unless another manager still owns it. */
  private prune (merged: Json, managers: Managers, last: ManagerSet | undefined): Json {
    if (last === undefined || last.set.empty()) return merged
    const ensure = (s: FieldSet): FieldSet => ensureNamedFieldsAreMembers(s, this.type)
    const lastSet = ensure(last.set)
    const withoutLast = removeItems(merged, lastSet, this.type) ?? {}
    let owned = new FieldSet()
    for (const m of managers.values()) owned = owned.union(m.set)
    const mergedSet = ensure(toFieldSet(merged, this.type))
    const keep = ensure(toFieldSet(withoutLast, this.type)).union(ensure(owned))
    const ownedBack = removeItems(merged, mergedSet.difference(keep), this.type) ?? {}
    const dangling = mergedSet.difference(ensure(toFieldSet(ownedBack, this.type))).intersection(lastSet)
    return removeItems(merged, dangling, this.type) ?? {}
  }
}

/** `a` ∪ `b`, sharing one of them when the other is empty (callers only read the result, or own both). */
function unionOf (a: FieldSet, b: FieldSet): FieldSet {
  if (b.empty()) return a
  if (a.empty()) return b
  return a.union(b)
}
