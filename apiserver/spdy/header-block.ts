// SPDY/3 name/value header blocks: their layout, and the one zlib stream per direction (primed with the SPDY/3
// dictionary) that carries every block of a connection.
//
// Compression writes stored (uncompressed) deflate blocks followed by an empty one, which is what a zlib sync flush
// at level 0 produces: any SPDY peer inflates them with its connection-wide stream. Decompression re-inflates the
// connection's compressed header bytes so far and keeps the new tail: the few header blocks of a streaming session
// (one per stream) make that cheap, and it keeps frame handling synchronous.

import { constants, inflateSync } from 'node:zlib'
import { SPDY3_DICTIONARY } from './dictionary.js'

export type HeaderBlock = Record<string, string[]>

/** Encodes headers (names lowercased; several values joined with NUL) as an uncompressed block. */
export function encodeHeaderBlock (headers: Record<string, string | string[]>): Buffer {
  const entries = Object.entries(headers)
  const parts: Buffer[] = [u32(entries.length)]
  for (const [name, value] of entries) {
    const n = Buffer.from(name.toLowerCase(), 'utf8')
    const v = Buffer.from(Array.isArray(value) ? value.join('\0') : value, 'utf8')
    parts.push(u32(n.length), n, u32(v.length), v)
  }
  return Buffer.concat(parts)
}

/** Decodes an uncompressed block; a length running past its end throws. */
export function decodeHeaderBlock (block: Buffer): HeaderBlock {
  const out: HeaderBlock = {}
  if (block.length < 4) throw new Error('SPDY header block too short')
  const count = block.readUInt32BE(0)
  let at = 4
  const take = (): Buffer => {
    if (at + 4 > block.length) throw new Error('SPDY header block truncated')
    const len = block.readUInt32BE(at)
    at += 4
    if (at + len > block.length) throw new Error('SPDY header block truncated')
    const b = block.subarray(at, at + len)
    at += len
    return b
  }
  for (let i = 0; i < count; i++) {
    const name = take().toString('utf8').toLowerCase()
    const values = take().toString('utf8').split('\0')
    out[name] = [...(out[name] ?? []), ...values]
  }
  return out
}

function u32 (n: number): Buffer {
  const b = Buffer.alloc(4)
  b.writeUInt32BE(n >>> 0)
  return b
}

/** Adler-32 of `data` (the zlib header names the preset dictionary by it). */
export function adler32 (data: Buffer): number {
  let a = 1
  let b = 0
  for (let i = 0; i < data.length; i++) {
    a = (a + data[i]!) % 65521
    b = (b + a) % 65521
  }
  return ((b << 16) | a) >>> 0
}

/** A non-final stored deflate block: header bits 000 padded to a byte, LEN, NLEN (little-endian), the bytes. */
function storedBlock (piece: Buffer): Buffer {
  const head = Buffer.alloc(5)
  head.writeUInt16LE(piece.length, 1)
  head.writeUInt16LE(~piece.length & 0xffff, 3)
  return Buffer.concat([head, piece])
}

/** One direction's compressor: the zlib header (with the dictionary's id) before the first block, then stored blocks. */
export class HeaderCompressor {
  private started = false

  compress (headers: Record<string, string | string[]>): Buffer {
    const raw = encodeHeaderBlock(headers)
    const parts: Buffer[] = []
    if (!this.started) {
      // CMF 0x78 (deflate, 32K window); FLG with FDICT set and level bits 0, FCHECK making CMF*256+FLG a multiple of 31.
      const cmf = 0x78
      let flg = 0x20
      flg += (31 - ((cmf * 256 + flg) % 31)) % 31
      parts.push(Buffer.from([cmf, flg]), u32(adler32(SPDY3_DICTIONARY)))
      this.started = true
    }
    for (let at = 0; at < raw.length; at += 0xffff) parts.push(storedBlock(raw.subarray(at, at + 0xffff)))
    // An empty stored block ends every block, as a sync flush does: an inflater (Go's among them) that reads the next
    // block header before handing out a stored block's bytes finds it within this frame.
    parts.push(storedBlock(Buffer.alloc(0)))
    return Buffer.concat(parts)
  }
}

/** Compressed header bytes one connection may send: ample for Kubernetes' few streams, a bound on re-inflating. */
export const MAX_CONNECTION_HEADER_BYTES = 256 * 1024

/** One direction's decompressor over every compressed header byte the peer has sent on the connection. */
export class HeaderDecompressor {
  private input: Buffer = Buffer.alloc(0)
  private produced = 0

  decompress (compressed: Buffer): HeaderBlock {
    if (this.input.length + compressed.length > MAX_CONNECTION_HEADER_BYTES) throw new Error(`SPDY header blocks exceed ${MAX_CONNECTION_HEADER_BYTES} bytes on one connection`)
    this.input = Buffer.concat([this.input, compressed])
    const all = inflateSync(this.input, { dictionary: SPDY3_DICTIONARY, finishFlush: constants.Z_SYNC_FLUSH })
    const block = all.subarray(this.produced)
    this.produced = all.length
    return decodeHeaderBlock(block)
  }
}
