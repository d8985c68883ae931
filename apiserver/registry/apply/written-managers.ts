// Managed-fields entries a field manager encoded, kept with the sets they were encoded from: the next write to the
// object revision they were stored at starts from those sets instead of decoding the FieldsV1 trees again.

import type { FieldSet } from './field-set.js'
import { managerId, type DecodedManagedFields, type ManagedFieldsEntry } from './managed-fields.js'
import { rebuildEntry, scalarsOf, type EntriesText } from './managed-fields-text.js'

/** One entry as decodeManagedFields reads it, but for its tree: identifier, set (as read back), version, kind, time. */
interface WrittenEntry {
  readonly id: string
  readonly set: FieldSet
  readonly apiVersion: string
  readonly applied: boolean
  readonly time: string | undefined
  /** The entry as written: its fields but for the tree, and its tree (never edited in place). */
  readonly scalars: Readonly<ManagedFieldsEntry>
  readonly tree: unknown
}

/** The decoding of a list of entries, in their order (found for an unchanged list by WrittenManagedFields.find). */
export interface WrittenManagers {
  readonly entries: readonly WrittenEntry[]
  /** The list's JSON as the object holding it was serialized (ManagedFieldsText), when it was. */
  readonly text?: EntriesText
}

/** An encoded entry as it was handed out: the entry object, its scalar fields and its tree, to tell it was not changed. */
interface Recorded {
  readonly entry: ManagedFieldsEntry
  readonly manager: string | undefined
  readonly operation: string | undefined
  readonly apiVersion: string | undefined
  readonly time: string | undefined
  readonly fieldsType: string | undefined
  readonly subresource: string | undefined
  readonly fieldsV1: unknown
  readonly set: FieldSet
}

export class WrittenManagedFields {
  /** By the entries array handed out; gone with it. */
  private readonly written = new WeakMap<object, Recorded[]>()
  /** Sets known to be compact (FieldSet.compact returns them as they are): a manager's set is met again write after write. */
  private readonly compacted = new WeakSet<FieldSet>()

  /** `entries` were just encoded from `sets` (the same order). */
  record (entries: ManagedFieldsEntry[], sets: FieldSet[]): void {
    this.written.set(entries, entries.map((entry, i) => ({
      entry,
      manager: entry.manager,
      operation: entry.operation,
      apiVersion: entry.apiVersion,
      time: entry.time,
      fieldsType: entry.fieldsType,
      subresource: entry.subresource,
      fieldsV1: entry.fieldsV1,
      set: sets[i]
    })))
  }

  /**
   * What decodeManagedFields(value, true) would return, when `value` is a list recorded here whose entries were not
   * replaced or changed since. Contract: FieldsV1 trees are never edited in place (a tree is replaced, not changed).
   */
  find (value: unknown): WrittenManagers | undefined {
    if (!Array.isArray(value)) return undefined
    const recorded = this.written.get(value)
    if (recorded === undefined || recorded.length !== value.length) return undefined
    const entries: WrittenEntry[] = []
    for (let i = 0; i < recorded.length; i++) {
      const r = recorded[i]
      const e = value[i] as ManagedFieldsEntry
      if (e !== r.entry || e.manager !== r.manager || e.operation !== r.operation || e.apiVersion !== r.apiVersion ||
        e.time !== r.time || e.fieldsType !== r.fieldsType || e.subresource !== r.subresource || e.fieldsV1 !== r.fieldsV1) return undefined
      if (e.operation !== 'Apply' && e.operation !== 'Update') return undefined
      if (e.fieldsType !== undefined && e.fieldsType !== '' && e.fieldsType !== 'FieldsV1') return undefined
      entries.push({
        id: managerId(e.manager ?? '', e.operation, e.apiVersion ?? '', e.subresource ?? ''),
        set: this.compact(r.set),
        apiVersion: e.apiVersion ?? '',
        applied: e.operation === 'Apply',
        time: typeof e.time === 'string' ? e.time : undefined,
        scalars: scalarsOf(e),
        tree: e.fieldsV1
      })
    }
    return { entries }
  }

  private compact (set: FieldSet): FieldSet {
    if (this.compacted.has(set)) return set
    const out = set.compact()
    this.compacted.add(out)
    return out
  }
}

/**
 * The decoded managed fields of `value`, an equal copy of the list `written` was found for (same entries, same
 * order): fresh maps, and the sets' trees taken from `value` for re-encoding. Undefined when the lengths differ.
 */
export function decodedFromWritten (written: WrittenManagers, value: unknown): DecodedManagedFields | undefined {
  if (!Array.isArray(value) || value.length !== written.entries.length) return undefined
  const managers: DecodedManagedFields['managers'] = new Map()
  const times = new Map<string, string>()
  written.entries.forEach((w, i) => {
    const tree = (value[i] as ManagedFieldsEntry | null)?.fieldsV1
    managers.set(w.id, { set: w.set, apiVersion: w.apiVersion, applied: w.applied, encoded: tree })
    if (w.time !== undefined) times.set(w.id, w.time)
  })
  return { managers, times }
}

/**
 * The entries `written` was found for, as new objects holding the same trees: what parsing the list they were
 * serialized as gives (entries in the field manager's field order, as ManagedFieldsText checked when it made their text).
 */
export function entriesFromWritten (written: WrittenManagers): ManagedFieldsEntry[] {
  return written.entries.map(w => rebuildEntry(w.scalars, w.tree))
}
