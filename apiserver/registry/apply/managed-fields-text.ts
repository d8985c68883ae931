// The JSON text of managed-fields entries, kept beside their FieldsV1 trees: an object is serialized with the text of
// its unchanged entries spliced in (not stringified again), and a stored revision whose entries' text is known is
// parsed around them (the entries are rebuilt from what was written, not parsed again). Managed fields are about
// half of a stored object's bytes, and all but the writer's own entry are the same from one write to the next.

import { randomUUID } from 'node:crypto'
import type { ManagedFieldsEntry } from './managed-fields.js'

type Obj = Record<string, unknown>

/** The text of a list of entries as an object was serialized with it, and where it sits in the bytes. */
export interface EntriesText {
  /** JSON.stringify of each entry, in the list's order. */
  readonly entries: readonly string[]
  /** The list's JSON (`[` + entries + `]`) in UTF-8, as it sits in the bytes. */
  readonly list: Buffer
  /** Bytes from the list's start to the end of the serialized object (what follows does not move when the revision is written). */
  readonly tail: number
}

/** An entry's fields in the order the field manager writes them (encodeManagedFields). */
const ENTRY_KEYS = ['manager', 'operation', 'apiVersion', 'time', 'fieldsType', 'fieldsV1', 'subresource'] as const

/** An entry's text with the scalar fields it was made from (its tree is the key it is kept under). */
interface KeptText {
  readonly entry: Readonly<ManagedFieldsEntry>
  readonly text: string
}

/**
 * Stands in for the list while the rest of the object is stringified. One per process, random, so that no stored
 * object holds it (a module-level constant: every field manager may share it).
 */
const PLACEHOLDER = `\u0000managed-fields-${randomUUID()}`
const PLACEHOLDER_JSON = JSON.stringify(PLACEHOLDER)

export class ManagedFieldsText {
  /** By FieldsV1 tree. Contract (as for WrittenManagedFields): a tree is never edited in place, only replaced. */
  private readonly byTree = new WeakMap<object, KeptText>()
  /** By the list an object was serialized with: its text and place. */
  private readonly byList = new WeakMap<object, EntriesText>()

  /**
   * JSON.stringify(obj), byte for byte, with the text of `obj.metadata.managedFields` entries taken from earlier
   * serializations where an entry is the same as the one a text was made for (same fields in the same order, same tree).
   */
  stringify (obj: Obj): string {
    const parts = this.split(obj)
    return typeof parts === 'string' ? parts : parts.head + parts.text + parts.after
  }

  /** Buffer.from(JSON.stringify(obj)), made as `stringify` makes the text, in one buffer (the list's bytes copied). */
  serialize (obj: Obj): Buffer {
    const parts = this.split(obj)
    if (typeof parts === 'string') return Buffer.from(parts)
    const head = Buffer.byteLength(parts.head)
    const out = Buffer.allocUnsafe(head + parts.list.length + Buffer.byteLength(parts.after))
    out.write(parts.head, 0)
    parts.list.copy(out, head)
    out.write(parts.after, head + parts.list.length)
    return out
  }

  /**
   * JSON.stringify(obj) as the text before the managed-fields list, the list's text and bytes, the text after it (and keeps
   * the list's text for `textOf`); the whole text when the list's text cannot be put together from its entries'.
   */
  private split (obj: Obj): string | { head: string, text: string, list: Buffer, after: string } {
    const meta = obj.metadata
    if (meta === null || typeof meta !== 'object' || Array.isArray(meta)) return JSON.stringify(obj)
    const m = meta as Obj
    const list = m.managedFields
    if (!Array.isArray(list) || list.length === 0) return JSON.stringify(obj)
    const texts: string[] = []
    for (const e of list) {
      const text = this.entryText(e)
      if (text === undefined) return JSON.stringify(obj)
      texts.push(text)
    }
    m.managedFields = PLACEHOLDER
    let json: string
    try {
      json = JSON.stringify(obj)
    } finally {
      m.managedFields = list
    }
    const at = json.indexOf(PLACEHOLDER_JSON)
    if (at < 0 || json.includes(PLACEHOLDER_JSON, at + PLACEHOLDER_JSON.length)) return JSON.stringify(obj)
    const text = `[${texts.join(',')}]`
    const bytes = Buffer.from(text)
    const after = json.slice(at + PLACEHOLDER_JSON.length)
    this.byList.set(list, { entries: texts, list: bytes, tail: bytes.length + Buffer.byteLength(after) })
    return { head: json.slice(0, at), text, list: bytes, after }
  }

  /** The text `list` was last serialized with by `stringify` (undefined when it was not). */
  textOf (list: unknown): EntriesText | undefined {
    return list !== null && typeof list === 'object' ? this.byList.get(list) : undefined
  }

  /** JSON.stringify(e) for an entry in the field manager's field order; undefined for any other value. */
  private entryText (e: unknown): string | undefined {
    if (e === null || typeof e !== 'object' || Array.isArray(e)) return undefined
    const entry = e as ManagedFieldsEntry
    const tree = entry.fieldsV1
    if (tree === null || typeof tree !== 'object' || !inEntryOrder(entry)) return undefined
    const kept = this.byTree.get(tree)
    if (kept !== undefined && sameScalars(kept.entry, entry)) return kept.text
    const text = JSON.stringify(entry)
    this.byTree.set(tree, { entry: scalarsOf(entry), text })
    return text
  }
}

/**
 * Parses stored `bytes`, serialized with the list whose text is `text`, around that list: the object with an empty
 * list in its place. Undefined when the bytes do not hold that text where it was written (then parse them whole).
 */
export function parseAroundEntries (bytes: Buffer, text: EntriesText): Obj | undefined {
  const start = bytes.length - text.tail
  const end = start + text.list.length
  if (start <= 0 || end > bytes.length) return undefined
  // Compared as bytes (not decoded and joined): equal bytes decode to the same text.
  if (bytes.compare(text.list, 0, text.list.length, start, end) !== 0) return undefined
  let obj: unknown
  try {
    obj = JSON.parse(bytes.toString('utf8', 0, start) + '[]' + bytes.toString('utf8', end))
  } catch {
    return undefined
  }
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) return undefined
  const meta = (obj as Obj).metadata as Obj | undefined
  const list = meta?.managedFields
  return Array.isArray(list) && list.length === 0 ? obj as Obj : undefined
}

/** The fields of `e` other than its tree, in the field manager's order (for comparing and rebuilding). */
export function scalarsOf (e: ManagedFieldsEntry): ManagedFieldsEntry {
  const out: ManagedFieldsEntry = {}
  for (const k of ENTRY_KEYS) if (k !== 'fieldsV1' && e[k] !== undefined) out[k] = e[k]
  return out
}

/** An entry equal to the one `scalars` were taken from with `tree` as its FieldsV1, in the same field order. */
export function rebuildEntry (scalars: Readonly<ManagedFieldsEntry>, tree: unknown): ManagedFieldsEntry {
  const out: ManagedFieldsEntry = {}
  for (const k of ENTRY_KEYS) {
    if (k === 'fieldsV1') out.fieldsV1 = tree
    else if (scalars[k] !== undefined) out[k] = scalars[k]
  }
  return out
}

function sameScalars (a: Readonly<ManagedFieldsEntry>, b: ManagedFieldsEntry): boolean {
  return a.manager === b.manager && a.operation === b.operation && a.apiVersion === b.apiVersion && a.time === b.time &&
    a.fieldsType === b.fieldsType && a.subresource === b.subresource
}

/**
 * Whether `e`'s own keys are some of ENTRY_KEYS, in that order, with string values but for the tree (so rebuildEntry
 * gives the same JSON, and comparing the scalars tells an entry is unchanged).
 */
function inEntryOrder (e: ManagedFieldsEntry): boolean {
  let next = 0
  for (const k of Object.keys(e)) {
    while (next < ENTRY_KEYS.length && ENTRY_KEYS[next] !== k) next++
    if (next === ENTRY_KEYS.length) return false
    if (k !== 'fieldsV1' && typeof e[k as keyof ManagedFieldsEntry] !== 'string') return false
    next++
  }
  return true
}
