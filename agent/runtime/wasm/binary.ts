// WebAssembly binary surgery: parse a module's sections and turn its linear memory into a host-supplied,
// capped import, so a module's declared maximum can never exceed the container's memory limit.
//
// A module defining its memory gets that definition moved into the import section as
// `(import "orch:runtime" "memory" (memory min capped-max))`; memory index 0 and every export and
// instruction referring to it are unchanged because imported memories come first and only one memory
// is allowed (multi-memory modules are rejected). A module importing its memory keeps its import: the
// host supplies a Memory whose maximum is the smaller of the declared maximum and the cap.

export const PAGE_BYTES = 65536
/** wasm32 addresses 4 GiB: 65536 pages. */
export const MAX_PAGES = 65536
export const HOST_MEMORY_MODULE = 'orch:runtime'
export const HOST_MEMORY_NAME = 'memory'

export type WasmBinaryErrorCode = 'WASM_ERR_MALFORMED' | 'WASM_ERR_UNSUPPORTED' | 'WASM_ERR_MEMORY_LIMIT'

export class WasmBinaryError extends Error {
  readonly code: WasmBinaryErrorCode
  constructor (code: WasmBinaryErrorCode, message: string) {
    super(message)
    this.name = 'WasmBinaryError'
    this.code = code
  }
}

export interface Limits { min: number; max?: number; shared: boolean }

/** `headerStart` is where the section's id byte is; `start`/`end` bound its content. */
export interface Section { id: number; headerStart: number; start: number; end: number }

/** The memory the host must create and pass as import `module`.`name`. */
export interface HostMemory { module: string; name: string; initial: number; maximum: number; shared: boolean }

export interface CappedModule { bytes: Uint8Array; memory?: HostMemory }

class Reader {
  pos: number
  constructor (readonly buf: Uint8Array, start = 0, readonly end = buf.length) { this.pos = start }
  byte (): number {
    if (this.pos >= this.end) throw malformed('unexpected end of section')
    return this.buf[this.pos++]
  }

  u32 (): number {
    let result = 0
    let shift = 0
    for (let i = 0; i < 5; i++) {
      const b = this.byte()
      result += (b & 0x7f) * 2 ** shift
      if ((b & 0x80) === 0) {
        if (result > 0xffffffff) throw malformed('u32 out of range')
        return result
      }
      shift += 7
    }
    throw malformed('LEB128 u32 too long')
  }

  /** Signed LEB128 up to 33 bits (heap types); the value is not needed, only skipped. */
  skipS33 (): void {
    for (let i = 0; i < 5; i++) if ((this.byte() & 0x80) === 0) return
    throw malformed('LEB128 s33 too long')
  }

  name (): string {
    const len = this.u32()
    if (this.pos + len > this.end) throw malformed('name runs past its section')
    const s = Buffer.from(this.buf.subarray(this.pos, this.pos + len)).toString('utf8')
    this.pos += len
    return s
  }

  limits (): Limits {
    const flags = this.byte()
    if (flags & 0x04) throw new WasmBinaryError('WASM_ERR_UNSUPPORTED', 'memory64 modules are not supported')
    if (flags > 0x03) throw malformed(`bad limits flags 0x${flags.toString(16)}`)
    const min = this.u32()
    const max = (flags & 0x01) !== 0 ? this.u32() : undefined
    return { min, max, shared: (flags & 0x02) !== 0 }
  }

  valType (): void {
    const t = this.byte()
    if (t === 0x63 || t === 0x64) this.skipS33() // (ref null? ht) of the GC proposal
  }
}

function malformed (message: string): WasmBinaryError {
  return new WasmBinaryError('WASM_ERR_MALFORMED', `malformed WebAssembly module: ${message}`)
}

export function writeU32 (value: number): number[] {
  const out: number[] = []
  let v = value >>> 0
  do {
    let b = v & 0x7f
    v >>>= 7
    if (v !== 0) b |= 0x80
    out.push(b)
  } while (v !== 0)
  return out
}

function writeName (s: string): number[] {
  const bytes = [...Buffer.from(s, 'utf8')]
  return [...writeU32(bytes.length), ...bytes]
}

function writeLimits (l: Limits): number[] {
  const flags = (l.max !== undefined ? 0x01 : 0) | (l.shared ? 0x02 : 0)
  return [flags, ...writeU32(l.min), ...(l.max !== undefined ? writeU32(l.max) : [])]
}

export function parseSections (bytes: Uint8Array): Section[] {
  if (bytes.length < 8 || bytes[0] !== 0 || bytes[1] !== 0x61 || bytes[2] !== 0x73 || bytes[3] !== 0x6d) {
    throw malformed('missing \\0asm magic')
  }
  if (bytes[4] !== 1 || bytes[5] !== 0 || bytes[6] !== 0 || bytes[7] !== 0) {
    throw new WasmBinaryError('WASM_ERR_UNSUPPORTED', 'only binary format version 1 (core modules) is supported')
  }
  const r = new Reader(bytes, 8)
  const sections: Section[] = []
  while (r.pos < bytes.length) {
    const headerStart = r.pos
    const id = r.byte()
    const size = r.u32()
    const start = r.pos
    if (start + size > bytes.length) throw malformed(`section ${id} runs past the end`)
    sections.push({ id, headerStart, start, end: start + size })
    r.pos = start + size
  }
  return sections
}

interface ImportEntry { module: string; name: string; kind: number; limits?: Limits; start: number; end: number }

function parseImports (bytes: Uint8Array, s: Section): ImportEntry[] {
  const r = new Reader(bytes, s.start, s.end)
  const n = r.u32()
  const out: ImportEntry[] = []
  for (let i = 0; i < n; i++) {
    const start = r.pos
    const module = r.name()
    const name = r.name()
    const kind = r.byte()
    let limits: Limits | undefined
    if (kind === 0x00) r.u32()
    else if (kind === 0x01) { r.valType(); r.limits() } else if (kind === 0x02) limits = r.limits()
    else if (kind === 0x03) { r.valType(); r.byte() } else if (kind === 0x04) { r.byte(); r.u32() } else throw malformed(`unknown import kind ${kind}`)
    out.push({ module, name, kind, limits, start, end: r.pos })
  }
  if (r.pos !== s.end) throw malformed('import section has trailing bytes')
  return out
}

function parseMemories (bytes: Uint8Array, s: Section): Limits[] {
  const r = new Reader(bytes, s.start, s.end)
  const n = r.u32()
  const out: Limits[] = []
  for (let i = 0; i < n; i++) out.push(r.limits())
  if (r.pos !== s.end) throw malformed('memory section has trailing bytes')
  return out
}

function section (id: number, content: number[] | Uint8Array): Uint8Array {
  const head = [id, ...writeU32(content.length)]
  const out = new Uint8Array(head.length + content.length)
  out.set(head, 0)
  out.set(content, head.length)
  return out
}

function capMax (declared: number | undefined, capPages: number): number {
  return Math.min(declared ?? MAX_PAGES, capPages)
}

/**
 * Rewrite `bytes` so its linear memory is an import with a maximum of at most `capPages` pages.
 * Throws WASM_ERR_MEMORY_LIMIT when the module's initial memory alone is above the cap.
 */
export function capModuleMemory (bytes: Uint8Array, capPages: number): CappedModule {
  const sections = parseSections(bytes)
  const importSec = sections.find(s => s.id === 2)
  const memSec = sections.find(s => s.id === 5)
  const imports = importSec ? parseImports(bytes, importSec) : []
  const memImports = imports.filter(i => i.kind === 0x02)
  const defined = memSec ? parseMemories(bytes, memSec) : []
  if (memImports.length + defined.length > 1) throw new WasmBinaryError('WASM_ERR_UNSUPPORTED', 'modules with more than one memory are not supported')
  const checkMin = (min: number): void => {
    if (min > capPages) {
      throw new WasmBinaryError('WASM_ERR_MEMORY_LIMIT', `module needs ${min * PAGE_BYTES} bytes of initial memory, above the limit of ${capPages * PAGE_BYTES}`)
    }
  }
  if (memImports.length === 1) {
    const imp = memImports[0]
    const l = imp.limits as Limits
    checkMin(l.min)
    return { bytes, memory: { module: imp.module, name: imp.name, initial: l.min, maximum: capMax(l.max, capPages), shared: l.shared } }
  }
  if (defined.length === 0) return { bytes }

  const mem = defined[0]
  checkMin(mem.min)
  const maximum = capMax(mem.max, capPages)
  const entry = [...writeName(HOST_MEMORY_MODULE), ...writeName(HOST_MEMORY_NAME), 0x02, ...writeLimits({ min: mem.min, max: maximum, shared: mem.shared })]
  const importBody: number[] = [...writeU32(imports.length + 1)]
  for (const imp of imports) importBody.push(...bytes.subarray(imp.start, imp.end))
  importBody.push(...entry)
  const newImport = section(2, importBody)

  const parts: Uint8Array[] = [bytes.subarray(0, 8)]
  let placed = false
  for (const s of sections) {
    const whole = bytes.subarray(s.headerStart, s.end)
    if (s.id === 2) { parts.push(newImport); placed = true; continue }
    if (s.id === 5) continue
    // The import section goes after the type section (1) and before every later known section.
    if (!placed && s.id !== 0 && s.id !== 1) { parts.push(newImport); placed = true }
    parts.push(whole)
  }
  if (!placed) parts.push(newImport)
  return { bytes: Buffer.concat(parts), memory: { module: HOST_MEMORY_MODULE, name: HOST_MEMORY_NAME, initial: mem.min, maximum, shared: mem.shared } }
}
