// SPDY/3 framing: the control and data frame layouts, encoding each frame kind and cutting a byte stream into frames.

export const SPDY_VERSION = 3

export const FrameType = {
  SYN_STREAM: 1,
  SYN_REPLY: 2,
  RST_STREAM: 3,
  SETTINGS: 4,
  PING: 6,
  GOAWAY: 7,
  HEADERS: 8,
  WINDOW_UPDATE: 9
} as const

export const FLAG_FIN = 0x01
export const FLAG_UNIDIRECTIONAL = 0x02

/** RST_STREAM status codes (draft 3, 2.6.3). */
export const RstStatus = { PROTOCOL_ERROR: 1, INVALID_STREAM: 2, REFUSED_STREAM: 3, CANCEL: 5, INTERNAL_ERROR: 6, STREAM_ALREADY_CLOSED: 9 } as const

/** The largest DATA payload written at once (the format allows 2^24-1; smaller frames interleave streams better). */
export const MAX_DATA_CHUNK = 32 * 1024

export type Frame =
  | { kind: 'data'; streamId: number; flags: number; data: Buffer }
  | { kind: 'control'; version: number; type: number; flags: number; payload: Buffer }

function header (first: number, flags: number, length: number): Buffer {
  if (length > 0xffffff) throw new Error(`SPDY frame too long (${length} bytes)`)
  const h = Buffer.alloc(8)
  h.writeUInt32BE(first >>> 0, 0)
  h.writeUInt32BE((((flags & 0xff) << 24) | length) >>> 0, 4)
  return h
}

export function controlFrame (type: number, flags: number, payload: Buffer): Buffer {
  const first = (0x80000000 | (SPDY_VERSION << 16) | type) >>> 0
  return Buffer.concat([header(first, flags, payload.length), payload])
}

export function dataFrame (streamId: number, flags: number, data: Buffer): Buffer {
  return Buffer.concat([header(streamId & 0x7fffffff, flags, data.length), data])
}

function words (...ns: number[]): Buffer {
  const b = Buffer.alloc(ns.length * 4)
  ns.forEach((n, i) => b.writeUInt32BE(n >>> 0, i * 4))
  return b
}

/** SYN_STREAM: stream id, associated stream id, priority (0 highest .. 7) and slot, then the compressed headers. */
export function synStreamFrame (streamId: number, flags: number, priority: number, compressedHeaders: Buffer): Buffer {
  const pri = Buffer.from([(priority & 7) << 5, 0])
  return controlFrame(FrameType.SYN_STREAM, flags, Buffer.concat([words(streamId & 0x7fffffff, 0), pri, compressedHeaders]))
}

export function synReplyFrame (streamId: number, flags: number, compressedHeaders: Buffer): Buffer {
  return controlFrame(FrameType.SYN_REPLY, flags, Buffer.concat([words(streamId & 0x7fffffff), compressedHeaders]))
}

export function rstStreamFrame (streamId: number, status: number): Buffer {
  return controlFrame(FrameType.RST_STREAM, 0, words(streamId & 0x7fffffff, status))
}

export function pingFrame (id: number): Buffer {
  return controlFrame(FrameType.PING, 0, words(id))
}

export function goAwayFrame (lastGoodStreamId: number, status: number): Buffer {
  return controlFrame(FrameType.GOAWAY, 0, words(lastGoodStreamId & 0x7fffffff, status))
}

/** The stream id of a SYN_STREAM, SYN_REPLY, RST_STREAM, HEADERS or WINDOW_UPDATE payload. */
export function payloadStreamId (payload: Buffer): number {
  if (payload.length < 4) throw new Error('SPDY control frame too short')
  return payload.readUInt32BE(0) & 0x7fffffff
}

/** Accumulates bytes and returns every complete frame; a partial frame waits for more. */
export class FrameReader {
  private buf: Buffer = Buffer.alloc(0)

  push (chunk: Buffer): Frame[] {
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk])
    const frames: Frame[] = []
    while (this.buf.length >= 8) {
      const length = this.buf.readUInt32BE(4) & 0xffffff
      if (this.buf.length < 8 + length) break
      const first = this.buf.readUInt32BE(0)
      const flags = this.buf[4]!
      const body = Buffer.from(this.buf.subarray(8, 8 + length))
      if ((first & 0x80000000) !== 0) frames.push({ kind: 'control', version: (first >>> 16) & 0x7fff, type: first & 0xffff, flags, payload: body })
      else frames.push({ kind: 'data', streamId: first & 0x7fffffff, flags, data: body })
      this.buf = this.buf.subarray(8 + length)
    }
    return frames
  }
}
