// One flush's bytes for a watcher: the encoded events, joined and HTTP-chunk-framed at most once and shared
// by every watcher that receives the same events in the same tick.

const CRLF = '\r\n'

export class WatchBatch {
  /** The encoded events in order (one Buffer per event, as the encoder made them). */
  readonly chunks: readonly Buffer[]
  private framed?: Buffer
  private headLength = 0
  private total = -1

  constructor (chunks: readonly Buffer[]) {
    this.chunks = chunks
  }

  /** Total bytes of the events. */
  get length (): number {
    if (this.total < 0) { let n = 0; for (const c of this.chunks) n += c.length; this.total = n }
    return this.total
  }

  /** The events joined: one Buffer (a view of the framed bytes, so both cost one copy in all). */
  payload (): Buffer {
    if (this.chunks.length === 1) return this.chunks[0]
    const f = this.chunkedFrame()
    return f.subarray(this.headLength, this.headLength + this.length)
  }

  /**
   * The events as one HTTP/1.1 chunk: `<hex length>\r\n<events>\r\n`, built once. Contract: the batch is not
   * empty (an empty chunk would end the response); callers skip empty batches.
   */
  chunkedFrame (): Buffer {
    if (this.framed === undefined) {
      const head = this.length.toString(16) + CRLF
      const b = Buffer.allocUnsafe(head.length + this.length + 2)
      let off = b.write(head, 0, 'latin1')
      for (const c of this.chunks) off += c.copy(b, off)
      b.write(CRLF, off, 'latin1')
      this.headLength = head.length
      this.framed = b
    }
    return this.framed
  }
}
