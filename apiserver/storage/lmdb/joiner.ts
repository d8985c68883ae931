// Joined live values: the decoder of a raw `live` handle copies each value out of lmdb's read buffer into one page.
import { LIVE_HEADER } from './layout.js'

const INITIAL_BYTES = 1 << 20

/**
 * Receives live records as lmdb reads them (through the decoder of the raw handle, whose input is lmdb's shared read
 * buffer, valid only during the call) and appends their values, `separator` between each two, to one page. One scan
 * at a time: `begin`, the synchronous range scan, then `end` (lmdb reads synchronously, so no other scan interleaves).
 */
export class ValueJoiner {
  private buf: Buffer = Buffer.allocUnsafe(INITIAL_BYTES)
  private at = 0
  private lastAt = 0
  private separator: Buffer = Buffer.alloc(0)
  private n = 0

  begin (separator: Buffer): void {
    this.at = 0
    this.lastAt = 0
    this.n = 0
    this.separator = separator
  }

  /** lmdb's decoder: appends the value of the record `bytes[0, size)` and answers its length. */
  take (bytes: Uint8Array, size: number): number {
    const len = size - LIVE_HEADER
    const sep = this.n > 0 ? this.separator.length : 0
    this.reserve(sep + len)
    this.lastAt = this.at
    if (sep > 0) this.at += this.separator.copy(this.buf, this.at)
    this.buf.set(bytes.subarray(LIVE_HEADER, size), this.at)
    this.at += len
    this.n++
    return len
  }

  /** Takes back the value appended last (a record the scan read past its end). */
  dropLast (): void {
    if (this.n === 0) return
    this.at = this.lastAt
    this.n--
  }

  get count (): number { return this.n }

  /** The page; the joiner starts a fresh buffer, so the page stays valid. */
  end (): Buffer {
    const page = this.buf.subarray(0, this.at)
    this.buf = Buffer.allocUnsafe(Math.max(INITIAL_BYTES, this.buf.length))
    this.at = 0
    return page
  }

  private reserve (bytes: number): void {
    if (this.at + bytes <= this.buf.length) return
    const grown = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.at + bytes))
    this.buf.copy(grown, 0, 0, this.at)
    this.buf = grown
  }
}
