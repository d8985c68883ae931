// A minimal tar (ustar/pax) reader and writer for regular files: enough for OCI image layouts and layers.
// Chosen over the transitively installed tar-stream so no undeclared dependency is relied on; gzip is node:zlib.
import { gunzipSync } from 'node:zlib'
import { OciError } from './errors.js'

export interface TarEntry { name: string; type: 'file' | 'dir' | 'other'; data: Buffer }

const BLOCK = 512

function str (buf: Buffer, start: number, len: number): string {
  const end = buf.indexOf(0, start)
  return buf.toString('utf8', start, end >= 0 && end < start + len ? end : start + len)
}

function octal (buf: Buffer, start: number, len: number): number {
  if (buf[start] & 0x80) { // base-256 (GNU) for large sizes
    let v = 0
    for (let i = start + 1; i < start + len; i++) v = v * 256 + buf[i]
    return v
  }
  const s = str(buf, start, len).trim()
  if (s === '') return 0
  if (!/^[0-7]+$/.test(s)) throw new OciError('OCI_ERR_BAD_CONTENT', `tar: bad octal field ${JSON.stringify(s)}`)
  return parseInt(s, 8)
}

function paxPath (data: Buffer): string | undefined {
  let pos = 0
  while (pos < data.length) {
    const sp = data.indexOf(0x20, pos)
    if (sp < 0) break
    const len = parseInt(data.toString('utf8', pos, sp), 10)
    if (!(len > 0)) break
    const rec = data.toString('utf8', sp + 1, pos + len - 1)
    const eq = rec.indexOf('=')
    if (rec.slice(0, eq) === 'path') return rec.slice(eq + 1)
    pos += len
  }
  return undefined
}

/** Normalise an entry name: no leading './' or '/', no '..' components. */
export function cleanTarPath (name: string): string {
  const parts = name.split('/').filter(p => p !== '' && p !== '.')
  if (parts.includes('..')) throw new OciError('OCI_ERR_BAD_CONTENT', `tar: entry ${JSON.stringify(name)} escapes the archive`)
  return parts.join('/')
}

/** Read every entry of a tar archive; gzip-compressed archives are detected by their magic bytes. */
export function readTar (archive: Buffer): TarEntry[] {
  const buf = archive.length >= 2 && archive[0] === 0x1f && archive[1] === 0x8b ? gunzipSync(archive) : archive
  const out: TarEntry[] = []
  let pos = 0
  let longName: string | undefined
  while (pos + BLOCK <= buf.length) {
    const header = buf.subarray(pos, pos + BLOCK)
    if (header.every(b => b === 0)) break
    let sum = 0
    for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : header[i]
    if (sum !== octal(header, 148, 8)) throw new OciError('OCI_ERR_BAD_CONTENT', `tar: bad header checksum at offset ${pos}`)
    const size = octal(header, 124, 12)
    const typeflag = String.fromCharCode(header[156] || 0x30)
    const dataStart = pos + BLOCK
    if (dataStart + size > buf.length) throw new OciError('OCI_ERR_BAD_CONTENT', 'tar: truncated archive')
    const data = buf.subarray(dataStart, dataStart + size)
    pos = dataStart + Math.ceil(size / BLOCK) * BLOCK
    if (typeflag === 'x') { longName = paxPath(data) ?? longName; continue }
    if (typeflag === 'L') { longName = str(data, 0, data.length); continue }
    if (typeflag === 'g') continue
    const prefix = str(header, 345, 155)
    const base = str(header, 0, 100)
    const name = longName ?? (prefix !== '' && str(header, 257, 6) === 'ustar' ? `${prefix}/${base}` : base)
    longName = undefined
    const type = typeflag === '0' || typeflag === '7' ? 'file' : typeflag === '5' ? 'dir' : 'other'
    out.push({ name: cleanTarPath(name), type, data })
  }
  return out
}

function header (name: string, size: number, typeflag: string, mtime: number): Buffer {
  const h = Buffer.alloc(BLOCK)
  const nameBytes = Buffer.from(name, 'utf8')
  if (nameBytes.length > 100) throw new OciError('OCI_ERR_BAD_CONTENT', `tar: name too long for ustar: ${name}`)
  nameBytes.copy(h, 0)
  h.write('0000644\0', 100)
  h.write('0000000\0', 108)
  h.write('0000000\0', 116)
  h.write(size.toString(8).padStart(11, '0') + '\0', 124)
  h.write(Math.floor(mtime).toString(8).padStart(11, '0') + '\0', 136)
  h.write('        ', 148)
  h.write(typeflag, 156)
  h.write('ustar\0', 257)
  h.write('00', 263)
  let sum = 0
  for (let i = 0; i < BLOCK; i++) sum += h[i]
  h.write(sum.toString(8).padStart(6, '0') + '\0 ', 148)
  return h
}

/** Write a tar archive of regular files (names up to 100 bytes), in the given order. */
export function writeTar (files: { name: string; data: Uint8Array }[], mtime = 0): Buffer {
  const parts: Buffer[] = []
  for (const f of files) {
    parts.push(header(f.name, f.data.length, '0', mtime), Buffer.from(f.data))
    const pad = (BLOCK - (f.data.length % BLOCK)) % BLOCK
    if (pad) parts.push(Buffer.alloc(pad))
  }
  parts.push(Buffer.alloc(BLOCK * 2))
  return Buffer.concat(parts)
}
