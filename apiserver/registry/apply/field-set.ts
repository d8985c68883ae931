// A set of field paths (what one manager owns), as structured-merge-diff's fieldpath.Set: members and children per element.
// Serialises to and from the FieldsV1 tree of `metadata.managedFields`.

import { compareElements, isPathElement, printPath, type PathElement } from './field-path.js'

const NO_MEMBERS: ReadonlySet<PathElement> = new Set()
const NO_CHILDREN: ReadonlyMap<PathElement, FieldSet> = new Map()

export class FieldSet {
  // Allocated on first write: most nodes of a set are leaves' parents with members only.
  private ownMembers?: Set<PathElement>
  private ownChildren?: Map<PathElement, FieldSet>

  /** Elements that are themselves in the set (read-only view; add with addMember). */
  get members (): ReadonlySet<PathElement> { return this.ownMembers ?? NO_MEMBERS }
  /** Sub-sets of paths that continue below an element (read-only view; add with setChild). */
  get children (): ReadonlyMap<PathElement, FieldSet> { return this.ownChildren ?? NO_CHILDREN }

  addMember (pe: PathElement): void {
    (this.ownMembers ??= new Set()).add(pe)
  }

  deleteMember (pe: PathElement): void {
    this.ownMembers?.delete(pe)
  }

  setChild (pe: PathElement, c: FieldSet): void {
    (this.ownChildren ??= new Map()).set(pe, c)
  }

  deleteChild (pe: PathElement): void {
    this.ownChildren?.delete(pe)
  }

  static of (paths: Iterable<readonly PathElement[]>): FieldSet {
    const s = new FieldSet()
    for (const p of paths) s.insert(p)
    return s
  }

  insert (path: readonly PathElement[]): void {
    if (path.length === 0) return
    let node: FieldSet = this
    for (let i = 0; i < path.length - 1; i++) node = node.child(path[i])
    node.addMember(path[path.length - 1])
  }

  has (path: readonly PathElement[]): boolean {
    if (path.length === 0) return false
    let node: FieldSet | undefined = this
    for (let i = 0; i < path.length - 1 && node !== undefined; i++) node = node.children.get(path[i])
    return node !== undefined && node.members.has(path[path.length - 1])
  }

  /** The paths below `pe`, without `pe` itself (empty when none). */
  withPrefix (pe: PathElement): FieldSet {
    return this.children.get(pe) ?? EMPTY
  }

  empty (): boolean {
    if (this.members.size > 0) return false
    for (const c of this.children.values()) if (!c.empty()) return false
    return true
  }

  union (other: FieldSet): FieldSet {
    const out = this.clone()
    out.addAll(other)
    return out
  }

  intersection (other: FieldSet): FieldSet {
    const out = new FieldSet()
    for (const m of this.members) if (other.members.has(m)) out.addMember(m)
    for (const [pe, c] of this.children) {
      const o = other.children.get(pe)
      if (o === undefined) continue
      const i = c.intersection(o)
      if (!i.empty()) out.setChild(pe, i)
    }
    return out
  }

  /** Paths of this set that are not in `other` (exact paths: a member of `other` does not remove what lies below it). */
  difference (other: FieldSet): FieldSet {
    const out = new FieldSet()
    for (const m of this.members) if (!other.members.has(m)) out.addMember(m)
    for (const [pe, c] of this.children) {
      const o = other.children.get(pe)
      const d = o === undefined ? c.clone() : c.difference(o)
      if (!d.empty()) out.setChild(pe, d)
    }
    return out
  }

  /** Paths of this set not in `other` and not below any member of `other`. */
  recursiveDifference (other: FieldSet): FieldSet {
    const out = new FieldSet()
    for (const m of this.members) if (!other.members.has(m)) out.addMember(m)
    for (const [pe, c] of this.children) {
      if (other.members.has(pe)) continue
      const o = other.children.get(pe)
      const d = o === undefined ? c.clone() : c.recursiveDifference(o)
      if (!d.empty()) out.setChild(pe, d)
    }
    return out
  }

  /** The same paths (nodes without paths below them count as absent). */
  equals (other: FieldSet): boolean {
    if (this === other) return true
    if (this.members.size !== other.members.size) return false
    for (const m of this.members) if (!other.members.has(m)) return false
    // One pass per side: a child is compared with its namesake, or must be empty when the other side has none.
    for (const [pe, c] of this.children) {
      const o = other.children.get(pe)
      if (o === undefined ? !c.empty() : !c.equals(o)) return false
    }
    for (const [pe, o] of other.children) if (!this.children.has(pe) && !o.empty()) return false
    return true
  }

  /**
   * Removes, in place, the given top-level elements and the given elements below one top-level element
   * (for the shallow sets of system fields every write drops). Returns this set.
   */
  dropShallow (top: readonly PathElement[], below?: { under: PathElement, members: readonly PathElement[] }): FieldSet {
    for (const pe of top) {
      this.ownMembers?.delete(pe)
      this.ownChildren?.delete(pe)
    }
    if (below !== undefined) {
      this.ownMembers?.delete(below.under)
      const c = this.ownChildren?.get(below.under)
      if (c !== undefined) for (const pe of below.members) c.ownMembers?.delete(pe)
    }
    return this
  }

  /** Every member path, in structured-merge-diff's order. */
  paths (): PathElement[][] {
    const out: PathElement[][] = []
    const walk = (node: FieldSet, prefix: PathElement[]): void => {
      for (const pe of sortedElements(node)) {
        if (node.members.has(pe)) out.push([...prefix, pe])
        const c = node.children.get(pe)
        if (c !== undefined) walk(c, [...prefix, pe])
      }
    }
    walk(this, [])
    return out
  }

  toString (): string {
    return this.paths().map(printPath).join('\n')
  }

  /** The FieldsV1 tree: `{}` for a member, children nested, `".": {}` when a member also has children. */
  toFieldsV1 (): Record<string, unknown> {
    return this.writeFieldsV1({})
  }

  /** Writes this set's FieldsV1 members into `out` (after whatever it holds) and returns it. */
  private writeFieldsV1 (out: Record<string, unknown>): Record<string, unknown> {
    for (const pe of sortedElements(this)) {
      const c = this.ownChildren?.get(pe)
      const isMember = this.ownMembers?.has(pe) === true
      if (c === undefined || c.empty()) {
        if (isMember) out[pe] = {}
        continue
      }
      out[pe] = c.writeFieldsV1(isMember ? { '.': {} } : {})
    }
    return out
  }

  /**
   * Reads a FieldsV1 tree; throws FieldsV1Error on anything that is not one. `trusted` (trees this server wrote)
   * skips parsing each element's JSON.
   */
  static fromFieldsV1 (tree: unknown, where = 'fieldsV1', trusted = false): FieldSet {
    const out = new FieldSet()
    if (tree === null || typeof tree !== 'object' || Array.isArray(tree)) throw new FieldsV1Error(`${where}: expected an object`)
    const obj = tree as Record<string, unknown>
    for (const k of Object.keys(obj)) {
      if (k === '.') continue
      const v = obj[k]
      if (!(trusted ? k.length > 2 && k[1] === ':' : isPathElement(k))) throw new FieldsV1Error(`${where}: unknown path element ${JSON.stringify(k)}`)
      if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new FieldsV1Error(`${where}.${k}: expected an object`)
      // One pass over the entry's keys: `.` makes it a member, any other key continues below it.
      const entries = Object.keys(v as object)
      let dot = false
      let below = false
      for (const e of entries) {
        if (e === '.') dot = true
        else below = true
      }
      if (entries.length === 0 || dot) out.addMember(k)
      if (below) {
        const c = FieldSet.fromFieldsV1(v, trusted ? where : `${where}.${k}`, trusted)
        if (!c.empty()) out.setChild(k, c)
      }
    }
    return out
  }

  /** The sub-set below `pe`, made (empty) when there is none yet. */
  child (pe: PathElement): FieldSet {
    let c = this.ownChildren?.get(pe)
    if (c === undefined) {
      c = new FieldSet()
      this.setChild(pe, c)
    }
    return c
  }

  private addAll (other: FieldSet): void {
    for (const m of other.members) this.addMember(m)
    for (const [pe, c] of other.children) this.child(pe).addAll(c)
  }

  /**
   * The set as read back from its FieldsV1 tree: without nodes that hold no paths (toFieldsV1 leaves them out, and
   * walks that visit every child, such as ensureNamedFieldsAreMembers, would see them). This set when it has none.
   */
  compact (): FieldSet {
    return this.compacted() ?? (this.members.size === 0 && this.children.size === 0 ? this : new FieldSet())
  }

  /** compact in one walk: undefined when the set holds no paths at all. */
  private compacted (): FieldSet | undefined {
    let out: FieldSet | undefined
    for (const [pe, c] of this.children) {
      const k = c.compacted()
      if (k === c) continue
      out ??= this.shallowCopy()
      if (k === undefined) out.deleteChild(pe)
      else out.setChild(pe, k)
    }
    const s = out ?? this
    return s.members.size === 0 && s.children.size === 0 ? undefined : s
  }

  private shallowCopy (): FieldSet {
    const out = new FieldSet()
    for (const m of this.members) out.addMember(m)
    for (const [pe, c] of this.children) out.setChild(pe, c)
    return out
  }

  clone (): FieldSet {
    const out = new FieldSet()
    for (const m of this.members) out.addMember(m)
    for (const [pe, c] of this.children) out.setChild(pe, c.clone())
    return out
  }
}

const EMPTY = new FieldSet()

export class FieldsV1Error extends Error {
  readonly code = 'APPLY_ERR_FIELDS_V1'
}

function sortedElements (s: FieldSet): PathElement[] {
  const out = [...s.members]
  for (const k of s.children.keys()) if (!s.members.has(k)) out.push(k)
  return out.length > 1 ? out.sort(compareElements) : out
}
