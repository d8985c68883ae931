// Field management of one served kind, as kube-apiserver's field manager: every write records what its manager owns in
// `metadata.managedFields` (Update entries, capped, timestamped, system metadata stripped); server-side apply merges,
// prunes and checks conflicts, migrates from client-side apply for `kubectl`, and keeps the last-applied annotation.

import { applyConflict, badRequest, type StatusCause } from '../../errors/status-error.js'
import type { Json, JsonObject } from '../patch/json-pointer.js'
import { fieldElement, printPath, stableJson } from './field-path.js'
import { FieldSet } from './field-set.js'
import {
  capUpdateManagers, decodeManagedFields, encodeManagedFields, isResetRequest, managerId, printManager,
  ManagedFieldsError, type DecodedManagedFields, type ManagedFieldsEntry
} from './managed-fields.js'
import type { MergeType } from './merge-type.js'
import { compare, toFieldSet } from './typed-sets.js'
import { createdFieldsV1, type CreatedFieldsFilter } from './created-fields.js'
import { ApplyConflicts, Updater, type Conflict } from './updater.js'
import { decodedFromWritten, WrittenManagedFields, type WrittenManagers } from './written-managers.js'
import { cloneJson } from '../patch/json-pointer.js'
import { ManagedFieldsText } from './managed-fields-text.js'
import type { DroppedFields } from './config-set-match.js'

export const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration'
const LAST_APPLIED_LIMIT = 256 * 1024

/** System metadata no manager owns (Kubernetes' stripMeta set). */
const STRIPPED_TOP = ['f:apiVersion', 'f:kind']
const STRIPPED_META = {
  under: 'f:metadata',
  members: ['name', 'namespace', 'creationTimestamp', 'selfLink', 'uid', 'clusterName', 'generation', 'managedFields', 'resourceVersion']
    .map(fieldElement)
}
const STRIPPED = FieldSet.of([...STRIPPED_TOP.map(pe => [pe]), [STRIPPED_META.under], ...STRIPPED_META.members.map(pe => [STRIPPED_META.under, pe])])

export interface FieldManagerOptions {
  type: MergeType
  /** The served group/version (`apps/v1`, `v1`) entries record. */
  apiVersion: string
  /** Whether the kind has a status subresource: then the main resource's writes never own `status`, and /status owns only it. */
  statusSubresource: boolean
  now: () => Date
}

export type Obj = Record<string, unknown>

export class FieldManager {
  private readonly mainUpdater: Updater
  private readonly statusUpdater: Updater
  /** What the main resource's writes may not own, for the walk that records a create. */
  private readonly createdFilter: CreatedFieldsFilter
  /** The last timestamp made and the second it stands for. */
  private stamp = ''
  private stampSecond = NaN
  /** The entries this field manager encoded, with their sets (see writtenManagers). */
  private readonly written = new WrittenManagedFields()
  /** The text of the entries this field manager's objects were serialized with (see serialize). */
  private readonly texts = new ManagedFieldsText()

  constructor (private readonly o: FieldManagerOptions) {
    // What a write may own: never system metadata, and with a status subresource, status only through /status.
    const top = o.statusSubresource ? [...STRIPPED_TOP, 'f:status'] : STRIPPED_TOP
    const dropped = (elements: string[]): DroppedFields =>
      ({ top: new Set(elements), under: STRIPPED_META.under, members: new Set(STRIPPED_META.members) })
    this.mainUpdater = new Updater(o.type, s => s.dropShallow(top, STRIPPED_META), dropped(top))
    this.statusUpdater = o.statusSubresource
      ? new Updater(o.type, onlyStatus)
      : new Updater(o.type, s => s.dropShallow(STRIPPED_TOP, STRIPPED_META), dropped(STRIPPED_TOP))
    this.createdFilter = { top: new Set(top), metadata: new Set(STRIPPED_META.members) }
  }

  /**
   * A create, update or non-apply patch by `manager`: sets `next.metadata.managedFields`. The request's own
   * managedFields are kept when given (a list of one empty entry resets them), otherwise the live object's are used.
   */
  update (live: Obj | undefined, next: Obj, manager: string, subresource = ''): void {
    const sent = metadata(next).managedFields
    if (live === undefined && subresource === '' && (sent === undefined || (Array.isArray(sent) && sent.length === 0)) &&
      this.recordCreate(next, manager)) return
    let decoded: DecodedManagedFields
    if (subresource === '' && isResetRequest(sent)) decoded = { managers: new Map(), times: new Map() }
    else if (subresource === '' && Array.isArray(sent) && sent.length > 0) decoded = this.decodeOr(sent, live, live !== undefined && sent === metadata(live).managedFields)
    else decoded = this.decodeOr(live === undefined ? undefined : metadata(live).managedFields, undefined, true)
    const id = managerId(manager, 'Update', this.o.apiVersion, subresource)
    const current = 'current-operation'
    const managers = this.updater(subresource).update(bare(live), bare(next), this.o.apiVersion, decoded.managers, current)
    const taken = managers.get(current)
    managers.delete(current)
    if (taken !== undefined) {
      const set = taken.set.difference(STRIPPED)
      const previous = managers.get(id)
      if (!set.empty()) {
        managers.set(id, { set: previous === undefined ? set : set.union(previous.set), apiVersion: this.o.apiVersion, applied: false })
        decoded.times.set(id, this.timestamp())
      }
    }
    this.store(next, { managers, times: decoded.times })
  }

  /** A create without managed fields of its own: one Update entry owning all it sets. False when the walk does not apply. */
  private recordCreate (next: Obj, manager: string): boolean {
    const tree = createdFieldsV1(bare(next) as JsonObject, this.o.type, this.createdFilter)
    if (tree === undefined) return false
    const meta = metadata(next)
    if (Object.keys(tree).length === 0) {
      delete meta.managedFields
      return true
    }
    const entry: ManagedFieldsEntry = {}
    if (manager !== '') entry.manager = manager
    entry.operation = 'Update'
    entry.apiVersion = this.o.apiVersion
    entry.time = this.timestamp()
    entry.fieldsType = 'FieldsV1'
    entry.fieldsV1 = tree
    meta.managedFields = [entry]
    return true
  }

  /**
   * Server-side apply of `config` by `manager` onto `live` (undefined: create); `entrySubresource` names the
   * subresource the entry records when it differs (`scale` applies the main object). Returns the object to write with its
   * managedFields, or undefined when nothing would change (a no-op apply writes nothing). Throws a 409 on conflicts.
   * `written`: writtenManagers of the object `live` is a copy of (its managedFields are then not decoded again).
   */
  apply (live: Obj | undefined, config: Obj, manager: string, force: boolean, subresource = '', entrySubresource = subresource,
    written?: WrittenManagers): Obj | undefined {
    const base: Obj = live ?? {}
    const known = written === undefined ? undefined : decodedFromWritten(written, metadata(base).managedFields)
    const decoded = known ?? this.decodeOr(metadata(base).managedFields, undefined, true)
    const id = managerId(manager, 'Apply', this.o.apiVersion, entrySubresource)
    const updater = this.updater(subresource)
    const liveBare = bare(base)
    let result
    try {
      result = updater.apply(liveBare, config as JsonObject, this.o.apiVersion, decoded.managers, id, force)
    } catch (err) {
      if (!(err instanceof ApplyConflicts)) throw err
      const allowed = manager === 'kubectl' ? this.allowedByLastApplied(liveBare) : undefined
      const remaining = allowed === undefined ? err.conflicts : err.conflicts.filter(c => !allowed.has(c.path))
      if (remaining.length > 0) throw conflictError(remaining)
      result = updater.apply(liveBare, config as JsonObject, this.o.apiVersion, decoded.managers, id, true)
    }
    if (result.unchanged && live !== undefined) return undefined
    const own = result.managers.get(id)
    // Only a set holding some of the system fields changes (usually none: the updater's filter dropped them).
    if (own !== undefined && (own.set.empty() || !STRIPPED.intersection(own.set).empty())) {
      const set = own.set.difference(STRIPPED)
      if (set.empty()) result.managers.delete(id)
      else if (!set.equals(own.set)) result.managers.set(id, { set, apiVersion: own.apiVersion, applied: own.applied })
    }
    if (result.object !== undefined) decoded.times.set(id, this.timestamp())
    const out = (result.object ?? cloneJson(liveBare)) as Obj
    if (manager === 'kubectl') syncLastApplied(out, config)
    this.store(out, { managers: result.managers, times: decoded.times })
    if (live !== undefined && result.object === undefined && sameManagedFields(out, live)) return undefined
    return out
  }

  /**
   * The decoded managedFields of `obj` when they are entries this field manager encoded and handed out unchanged (as in
   * the object a write stored): what decoding them would give, kept for a later apply to a copy of `obj`.
   */
  writtenManagers (obj: Obj): WrittenManagers | undefined {
    const list = metadata(obj).managedFields
    const found = this.written.find(list)
    if (found === undefined) return undefined
    const text = this.texts.textOf(list)
    return text === undefined || text.entries.length !== found.entries.length ? found : { ...found, text }
  }

  /**
   * Buffer.from(JSON.stringify(obj)) (an object to store), made in one buffer with the bytes of managedFields entries
   * unchanged since an earlier serialization reused; writtenManagers then tells where the list sits in the bytes.
   */
  serialize (obj: Obj): Buffer {
    return this.texts.serialize(obj)
  }

  private updater (subresource: string): Updater {
    return subresource === 'status' || subresource === 'approval' ? this.statusUpdater : this.mainUpdater
  }

  /** Fields of the last-applied annotation that still match the live object: a `kubectl` apply may take them over. */
  private allowedByLastApplied (live: Json): FieldSet | undefined {
    const text = (metadata(live as Obj).annotations as Record<string, unknown> | undefined)?.[LAST_APPLIED]
    if (typeof text !== 'string' || text === '') return undefined
    let last: Json
    try {
      last = JSON.parse(text) as Json
    } catch {
      return undefined
    }
    if ((last as Obj)?.apiVersion !== this.o.apiVersion) return undefined
    const c = compare(last, live, this.o.type)
    return toFieldSet(last, this.o.type).difference(c.modified).difference(c.added).difference(c.removed)
  }

  private decodeOr (value: unknown, fallback: Obj | undefined, trusted = false): DecodedManagedFields {
    try {
      return decodeManagedFields(value, trusted)
    } catch (err) {
      if (!(err instanceof ManagedFieldsError)) throw err
      if (fallback !== undefined) return this.decodeOr(metadata(fallback).managedFields, undefined, true)
      return { managers: new Map(), times: new Map() }
    }
  }

  private store (obj: Obj, d: DecodedManagedFields): void {
    capUpdateManagers(d)
    const sets: FieldSet[] = []
    const entries = encodeManagedFields(d, sets)
    const meta = metadata(obj)
    if (entries.length === 0) delete meta.managedFields
    else {
      meta.managedFields = entries
      this.written.record(entries, sets)
    }
  }

  private timestamp (): string {
    // Seconds precision: the text changes once a second, so it is made once a second.
    const ms = this.o.now().getTime()
    const second = Math.floor(ms / 1000)
    if (second !== this.stampSecond) {
      this.stamp = new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z')
      this.stampSecond = second
    }
    return this.stamp
  }
}

function onlyStatus (s: FieldSet): FieldSet {
  const out = new FieldSet()
  if (s.members.has('f:status')) out.addMember('f:status')
  const c = s.children.get('f:status')
  if (c !== undefined) out.setChild('f:status', c.clone())
  return out
}

function metadata (obj: Obj): Record<string, unknown> {
  const m = obj.metadata
  if (m !== null && typeof m === 'object' && !Array.isArray(m)) return m as Record<string, unknown>
  const fresh = {}
  obj.metadata = fresh
  return fresh
}

/** The object without managedFields (they are bookkeeping, not content), as JSON. */
function bare (obj: Obj | undefined): Json {
  if (obj === undefined) return {}
  const meta = obj.metadata
  if (meta === null || typeof meta !== 'object' || !('managedFields' in meta)) return obj as JsonObject
  const { managedFields: _drop, ...rest } = meta as Record<string, unknown>
  return { ...obj, metadata: rest } as JsonObject
}

/** kubectl's server-side apply keeps a last-applied annotation, where there is one, equal to what it applied. */
function syncLastApplied (out: Obj, config: Obj): void {
  const annotations = metadata(out).annotations as Record<string, unknown> | undefined
  if (annotations === undefined || typeof annotations[LAST_APPLIED] !== 'string' || annotations[LAST_APPLIED] === '') return
  const copy = cloneJson(config)
  const meta = metadata(copy)
  const own = meta.annotations as Record<string, unknown> | undefined
  if (own !== undefined) {
    delete own[LAST_APPLIED]
    if (Object.keys(own).length === 0) delete meta.annotations
  }
  const text = stableJson(copy as Json) + '\n'
  if (text.length > LAST_APPLIED_LIMIT) delete annotations[LAST_APPLIED]
  else annotations[LAST_APPLIED] = text
}

function sameManagedFields (a: Obj, b: Obj): boolean {
  return JSON.stringify(metadata(a).managedFields ?? []) === JSON.stringify(metadata(b).managedFields ?? [])
}

/** 409 worded as kube-apiserver's: one cause per field, the message listing conflicts by manager. */
function conflictError (conflicts: Conflict[]): Error {
  const causes: StatusCause[] = conflicts.map(c => ({
    reason: 'FieldManagerConflict', message: `conflict with ${printManager(c.manager)}`, field: printPath(c.path)
  }))
  if (conflicts.length === 1) {
    const c = conflicts[0]
    return applyConflict(`Apply failed with 1 conflict: conflict with ${printManager(c.manager)}: ${printPath(c.path)}`, causes)
  }
  const byManager = new Map<string, string[]>()
  for (const c of conflicts) byManager.set(c.manager, [...(byManager.get(c.manager) ?? []), printPath(c.path)])
  const lines: string[] = []
  for (const m of [...byManager.keys()].sort()) {
    lines.push(`conflicts with ${printManager(m)}:`)
    for (const p of byManager.get(m) ?? []) lines.push(`- ${p}`)
  }
  return applyConflict(`Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`, causes)
}

/** A body server-side apply refuses (managedFields set, no manager): 400 worded as kube-apiserver. */
export function refuseManagedFieldsInApply (): Error {
  return badRequest('metadata.managedFields must be nil')
}
