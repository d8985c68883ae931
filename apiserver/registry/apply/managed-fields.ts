// `metadata.managedFields` <-> managers: entry identifiers, decoding and encoding (Kubernetes' order and spelling),
// the cap on Update entries, and the printed manager names of conflict messages.

import { FieldSet, FieldsV1Error } from './field-set.js'
import type { Managers } from './updater.js'

export interface ManagedFieldsEntry {
  manager?: string
  operation?: string
  apiVersion?: string
  time?: string
  fieldsType?: string
  fieldsV1?: unknown
  subresource?: string
}

/** Managers plus the time each last changed the object (RFC 3339, seconds). */
export interface DecodedManagedFields { managers: Managers; times: Map<string, string> }

/** Kubernetes' cap on Update entries; older ones are merged into `ancient-changes` per version. */
export const MAX_UPDATE_MANAGERS = 10
const ANCIENT_CHANGES = 'ancient-changes'

/**
 * The identifier of an entry: the entry without fields, type and time, as JSON in the entry's field order.
 * An Apply entry leaves out its apiVersion, so one applier keeps one entry whatever version it applies at.
 */
export function managerId (manager: string, operation: 'Apply' | 'Update', apiVersion: string, subresource = ''): string {
  const id: ManagedFieldsEntry = {}
  if (manager !== '') id.manager = manager
  id.operation = operation
  if (operation === 'Update' && apiVersion !== '') id.apiVersion = apiVersion
  if (subresource !== '') id.subresource = subresource
  return JSON.stringify(id)
}

export function parseManagerId (id: string): ManagedFieldsEntry {
  try {
    return JSON.parse(id) as ManagedFieldsEntry
  } catch {
    return { manager: id }
  }
}

/** As in conflict messages: `"kubectl"`, `"kube-controller-manager" using apps/v1`, `"x" with subresource "status"`. */
export function printManager (id: string): string {
  const e = parseManagerId(id)
  let out = JSON.stringify(e.manager ?? '')
  if (e.subresource !== undefined && e.subresource !== '') out += ` with subresource ${JSON.stringify(e.subresource)}`
  if (e.operation === 'Update') out += ` using ${e.apiVersion ?? ''}`
  return out
}

/** A list holding exactly one empty entry: the request to strip managed fields (spec §4.11.9). */
export function isResetRequest (value: unknown): boolean {
  if (!Array.isArray(value) || value.length !== 1) return false
  const e = value[0] as unknown
  return e !== null && typeof e === 'object' && !Array.isArray(e) &&
    Object.values(e as object).every(v => v === undefined || v === null || v === '' || (typeof v === 'object' && Object.keys(v as object).length === 0))
}

/** Reads managed fields (`trusted`: as stored by this server); throws ManagedFieldsError on an entry that is not well formed. */
export function decodeManagedFields (value: unknown, trusted = false): DecodedManagedFields {
  const managers: Managers = new Map()
  const times = new Map<string, string>()
  if (value === undefined || value === null) return { managers, times }
  if (!Array.isArray(value)) throw new ManagedFieldsError('metadata.managedFields: expected a list')
  value.forEach((raw, i) => {
    const where = `metadata.managedFields[${i}]`
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new ManagedFieldsError(`${where}: expected an object`)
    const e = raw as ManagedFieldsEntry
    if (e.operation !== 'Apply' && e.operation !== 'Update') {
      throw new ManagedFieldsError(`${where}.operation: Invalid value: ${JSON.stringify(e.operation ?? '')}: must be \`Apply\` or \`Update\``)
    }
    if (e.fieldsType !== undefined && e.fieldsType !== '' && e.fieldsType !== 'FieldsV1') {
      throw new ManagedFieldsError(`${where}.fieldsType: Invalid value: ${JSON.stringify(e.fieldsType)}: must be \`FieldsV1\``)
    }
    let set: FieldSet
    try {
      set = FieldSet.fromFieldsV1(e.fieldsV1 ?? {}, `${where}.fieldsV1`, trusted)
    } catch (err) {
      if (err instanceof FieldsV1Error) throw new ManagedFieldsError(err.message)
      throw err
    }
    const id = managerId(e.manager ?? '', e.operation, e.apiVersion ?? '', e.subresource ?? '')
    managers.set(id, { set, apiVersion: e.apiVersion ?? '', applied: e.operation === 'Apply', ...(trusted ? { encoded: e.fieldsV1 } : {}) })
    if (typeof e.time === 'string') times.set(id, e.time)
  })
  return { managers, times }
}

/**
 * The entries for `managers`, in Kubernetes' order: Apply before Update, then by time, manager, version, subresource.
 * `sets`, when given, receives the set each entry was encoded from, in the entries' order.
 */
export function encodeManagedFields ({ managers, times }: DecodedManagedFields, sets?: FieldSet[]): ManagedFieldsEntry[] {
  const entries: ManagedFieldsEntry[] = []
  const from = sets === undefined ? undefined : new Map<ManagedFieldsEntry, FieldSet>()
  for (const [id, m] of managers) {
    if (m.set.empty()) continue
    const key = idFields(id)
    const e: ManagedFieldsEntry = {}
    if (key.manager !== undefined) e.manager = key.manager
    e.operation = m.applied ? 'Apply' : 'Update'
    if (m.apiVersion !== '') e.apiVersion = m.apiVersion
    const time = times.get(id)
    if (time !== undefined) e.time = time
    e.fieldsType = 'FieldsV1'
    e.fieldsV1 = m.encoded ?? m.set.toFieldsV1()
    if (key.subresource !== undefined && key.subresource !== '') e.subresource = key.subresource
    entries.push(e)
    from?.set(e, m.set)
  }
  entries.sort(compareEntries)
  if (sets !== undefined && from !== undefined) for (const e of entries) sets.push(from.get(e) as FieldSet)
  return entries
}

/** Manager and subresource of identifiers already read (an object has few managers, met on every write). Bounded. */
const idsRead = new Map<string, Readonly<Pick<ManagedFieldsEntry, 'manager' | 'subresource'>>>()

function idFields (id: string): Readonly<Pick<ManagedFieldsEntry, 'manager' | 'subresource'>> {
  let fields = idsRead.get(id)
  if (fields === undefined) {
    if (idsRead.size >= 1024) idsRead.clear()
    const key = parseManagerId(id)
    fields = { manager: key.manager, subresource: key.subresource }
    idsRead.set(id, fields)
  }
  return fields
}

/** The sort keys of entries, in order (made once: entries are sorted on every write). */
const ENTRY_ORDER: ReadonlyArray<(e: ManagedFieldsEntry) => string> = [
  e => e.operation ?? '',
  e => e.time === undefined ? '0000' : e.time,
  e => e.manager ?? '',
  e => e.apiVersion ?? '',
  e => e.subresource ?? ''
]

function compareEntries (p: ManagedFieldsEntry, q: ManagedFieldsEntry): number {
  for (const k of ENTRY_ORDER) {
    const a = k(p)
    const b = k(q)
    if (a !== b) return a < b ? -1 : 1
  }
  return 0
}

/**
 * More than `max` Update entries: the oldest are merged, per apiVersion, into an `ancient-changes` entry
 * (the first of a version becomes the bucket when a second one joins), until `max` remain.
 */
export function capUpdateManagers (d: DecodedManagedFields, max = MAX_UPDATE_MANAGERS): void {
  // Counted first: almost every write is under the cap, and it runs on every write.
  let count = 0
  for (const m of d.managers.values()) if (!m.applied) count++
  if (count <= max) return
  const updaters = [...d.managers].filter(([, m]) => !m.applied).map(([id]) => id)
  if (updaters.length <= max) return
  const seconds = (id: string): number => {
    const t = d.times.get(id)
    return t === undefined ? 0 : Math.floor(Date.parse(t) / 1000)
  }
  updaters.sort((a, b) => seconds(a) - seconds(b) || (a < b ? -1 : a > b ? 1 : 0))
  const firstOfVersion = new Map<string, string>()
  let length = updaters.length
  for (let i = 0; i < updaters.length && length > max; i++) {
    const id = updaters[i]
    const m = d.managers.get(id)
    if (m === undefined) continue
    const bucket = managerId(ANCIENT_CHANGES, 'Update', m.apiVersion)
    const first = firstOfVersion.get(m.apiVersion)
    if (first === undefined) {
      firstOfVersion.set(m.apiVersion, id)
      continue
    }
    if (!d.managers.has(bucket)) {
      const firstSet = d.managers.get(first)
      d.managers.delete(first)
      if (firstSet !== undefined) d.managers.set(bucket, firstSet)
    }
    const merged = d.managers.get(bucket)
    d.managers.set(bucket, { set: m.set.union(merged?.set ?? new FieldSet()), apiVersion: m.apiVersion, applied: false })
    d.managers.delete(id)
    length--
    const time = d.times.get(id)
    if (time !== undefined) d.times.set(bucket, time)
  }
}

export class ManagedFieldsError extends Error {
  readonly code = 'APPLY_ERR_MANAGED_FIELDS'
}
