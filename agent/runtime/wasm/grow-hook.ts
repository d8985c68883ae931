// Instruments a module so the host learns when a memory.grow failed: every `memory.grow` becomes a call to
// an added function that grows, and on failure (-1) sets an added exported global before returning -1.
// Wasm semantics are unchanged (the module still sees -1); the host then reports a module that fails after
// a refused grow as OOMKilled, where Linux would have OOM-killed the process.
//
// Added items go at the end of their index spaces (type, function, global), so no existing index moves.
// Only instruction positions need decoding: the decoder knows the immediates of the core spec, bulk memory,
// reference types, SIMD, threads, tail calls and exceptions; a module using anything else (e.g. GC) is left
// unchanged and `instrumentMemoryGrow` returns undefined.
import { parseSections, writeU32, WasmBinaryError } from './binary.js'
import type { Section } from './binary.js'

export const OOM_EXPORT = 'orch:oom'

class Unsupported extends Error {}

class Cursor {
  constructor (readonly b: Uint8Array, public pos: number) {}
  byte (): number {
    if (this.pos >= this.b.length) throw new WasmBinaryError('WASM_ERR_MALFORMED', 'malformed WebAssembly module: code runs past the end')
    return this.b[this.pos++]
  }

  leb (): number { // unsigned value; also used to skip signed LEBs (value then meaningless)
    let result = 0
    for (let shift = 0; shift < 70; shift += 7) {
      const x = this.byte()
      if (shift < 35) result += (x & 0x7f) * 2 ** shift
      if ((x & 0x80) === 0) return result
    }
    throw new WasmBinaryError('WASM_ERR_MALFORMED', 'malformed WebAssembly module: LEB128 too long')
  }

  skip (n: number): void { this.pos += n }
  valType (): void { const t = this.byte(); if (t === 0x63 || t === 0x64) this.leb() }
  blockType (): void { const t = this.b[this.pos]; if (t === 0x63 || t === 0x64) { this.pos++; this.leb() } else this.leb() }
  memarg (): void { const align = this.leb(); if (align & 0x40) this.leb(); this.leb() }
}

/** Skip one instruction at `c`; returns true when it was `memory.grow`. */
function skipInstruction (c: Cursor): boolean {
  const op = c.byte()
  if (op === 0x40) { c.leb(); return true }
  if ((op >= 0x45 && op <= 0xc4) || [0x00, 0x01, 0x05, 0x0a, 0x0b, 0x0f, 0x19, 0x1a, 0x1b, 0xd1, 0xd3, 0xd5].includes(op)) return false
  if (op >= 0x02 && op <= 0x04) { c.blockType(); return false }
  if (op === 0x06) { c.blockType(); return false }
  if ([0x07, 0x08, 0x09, 0x0c, 0x0d, 0x10, 0x12, 0x14, 0x15, 0x18, 0x3f, 0x41, 0x42, 0xd0, 0xd2, 0xd4, 0xd6].includes(op) || (op >= 0x20 && op <= 0x26)) { c.leb(); return false }
  if (op === 0x11 || op === 0x13) { c.leb(); c.leb(); return false }
  if (op === 0x0e) { const n = c.leb(); for (let i = 0; i <= n; i++) c.leb(); return false }
  if (op === 0x1c) { const n = c.leb(); for (let i = 0; i < n; i++) c.valType(); return false }
  if (op === 0x1f) {
    c.blockType()
    const n = c.leb()
    for (let i = 0; i < n; i++) { const kind = c.byte(); if (kind <= 1) c.leb(); c.leb() }
    return false
  }
  if (op >= 0x28 && op <= 0x3e) { c.memarg(); return false }
  if (op === 0x43) { c.skip(4); return false }
  if (op === 0x44) { c.skip(8); return false }
  if (op === 0xfc) {
    const sub = c.leb()
    if (sub <= 7) return false
    if ([8, 10, 12, 14].includes(sub)) { c.leb(); c.leb(); return false }
    if ([9, 11, 13, 15, 16, 17].includes(sub)) { c.leb(); return false }
    throw new Unsupported()
  }
  if (op === 0xfd) {
    const sub = c.leb()
    if (sub <= 11 || sub === 92 || sub === 93) c.memarg()
    else if (sub === 12 || sub === 13) c.skip(16)
    else if (sub >= 21 && sub <= 34) c.skip(1)
    else if (sub >= 84 && sub <= 91) { c.memarg(); c.skip(1) }
    return false
  }
  if (op === 0xfe) { const sub = c.leb(); if (sub === 3) c.skip(1); else c.memarg(); return false }
  throw new Unsupported()
}

function vecCount (bytes: Uint8Array, s: Section | undefined): number {
  return s ? new Cursor(bytes, s.start).leb() : 0
}

function importCounts (bytes: Uint8Array, s: Section | undefined): { funcs: number; globals: number } {
  let funcs = 0
  let globals = 0
  if (!s) return { funcs, globals }
  const c = new Cursor(bytes, s.start)
  const n = c.leb()
  for (let i = 0; i < n; i++) {
    c.skip(c.leb()); c.skip(c.leb())
    const kind = c.byte()
    if (kind === 0x00) { funcs++; c.leb() } else if (kind === 0x01) { c.valType(); const f = c.byte(); c.leb(); if (f & 1) c.leb() } else if (kind === 0x02) { const f = c.byte(); c.leb(); if (f & 1) c.leb() } else if (kind === 0x03) { globals++; c.valType(); c.byte() } else if (kind === 0x04) { c.byte(); c.leb() } else throw new Unsupported()
  }
  return { funcs, globals }
}

function plainFuncTypes (bytes: Uint8Array, s: Section | undefined): boolean {
  if (!s) return true
  const c = new Cursor(bytes, s.start)
  const n = c.leb()
  for (let i = 0; i < n; i++) {
    if (c.byte() !== 0x60) return false
    for (let k = 0; k < 2; k++) { const m = c.leb(); for (let j = 0; j < m; j++) c.valType() }
  }
  return true
}

/** Section content with `extra` entries appended to its vector. */
function appendToVec (bytes: Uint8Array, s: Section | undefined, extra: number[][]): number[] {
  const c = new Cursor(bytes, s?.start ?? 0)
  const n = s ? c.leb() : 0
  const rest = s ? [...bytes.subarray(c.pos, s.end)] : []
  return [...writeU32(n + extra.length), ...rest, ...extra.flat()]
}

const ORDER = [1, 2, 3, 4, 5, 13, 6, 7, 8, 9, 12, 10, 11]

/** Returns the instrumented module, or undefined if it has no memory.grow or uses instructions we do not decode. */
export function instrumentMemoryGrow (bytes: Uint8Array): Uint8Array | undefined {
  const sections = parseSections(bytes)
  const find = (id: number): Section | undefined => sections.find(s => s.id === id)
  const code = find(10)
  if (!code) return undefined
  const bodies: { start: number; end: number; grows: { at: number; end: number }[] }[] = []
  try {
    const c = new Cursor(bytes, code.start)
    const n = c.leb()
    for (let i = 0; i < n; i++) {
      const size = c.leb()
      const start = c.pos
      const end = start + size
      const locals = c.leb()
      for (let j = 0; j < locals; j++) { c.leb(); c.valType() }
      const grows: { at: number; end: number }[] = []
      while (c.pos < end) {
        const at = c.pos
        if (skipInstruction(c)) grows.push({ at, end: c.pos })
      }
      bodies.push({ start, end, grows })
    }
  } catch (err) {
    if (err instanceof Unsupported) return undefined
    throw err
  }
  if (bodies.every(b => b.grows.length === 0)) return undefined
  let imports: { funcs: number; globals: number }
  try { imports = importCounts(bytes, find(2)) } catch (err) { if (err instanceof Unsupported) return undefined; throw err }
  if (!plainFuncTypes(bytes, find(1))) return undefined // GC rec groups: type indices are not the vec count
  const typeIdx = vecCount(bytes, find(1))
  const funcIdx = imports.funcs + vecCount(bytes, find(3))
  const globalIdx = imports.globals + vecCount(bytes, find(6))
  const call = [0x10, ...writeU32(funcIdx)]
  const hook = [0x01, 0x01, 0x7f, 0x20, 0x00, 0x40, 0x00, 0x22, 0x01, 0x41, 0x7f, 0x46, 0x04, 0x40, 0x41, 0x01, 0x24, ...writeU32(globalIdx), 0x0b, 0x20, 0x01, 0x0b]
  const newBodies = bodies.map(b => {
    const out: number[] = []
    let pos = b.start
    for (const g of b.grows) { out.push(...bytes.subarray(pos, g.at), ...call); pos = g.end }
    out.push(...bytes.subarray(pos, b.end))
    return [...writeU32(out.length), ...out]
  })
  newBodies.push([...writeU32(hook.length), ...hook])
  const name = [...Buffer.from(OOM_EXPORT)]
  const replaced = new Map<number, number[]>([
    [1, appendToVec(bytes, find(1), [[0x60, 0x01, 0x7f, 0x01, 0x7f]])],
    [3, appendToVec(bytes, find(3), [writeU32(typeIdx)])],
    [6, appendToVec(bytes, find(6), [[0x7f, 0x01, 0x41, 0x00, 0x0b]])],
    [7, appendToVec(bytes, find(7), [[...writeU32(name.length), ...name, 0x03, ...writeU32(globalIdx)]])],
    [10, [...writeU32(newBodies.length), ...newBodies.flat()]]
  ])
  const out: Uint8Array[] = [bytes.subarray(0, 8)]
  const emit = (id: number): void => {
    const body = replaced.get(id) as number[]
    out.push(Uint8Array.from([id, ...writeU32(body.length), ...body]))
    replaced.delete(id)
  }
  for (const s of sections) {
    if (s.id !== 0) {
      // Emit added sections that come before this one in the canonical order.
      for (const id of [...replaced.keys()]) if (id !== s.id && ORDER.indexOf(id) < ORDER.indexOf(s.id) && !find(id)) emit(id)
    }
    if (replaced.has(s.id)) emit(s.id)
    else out.push(bytes.subarray(s.headerStart, s.end))
  }
  for (const id of ORDER) if (replaced.has(id)) emit(id)
  return Buffer.concat(out)
}
