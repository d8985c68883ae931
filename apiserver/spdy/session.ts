// A SPDY/3.1 connection in the dialect of Kubernetes' streaming protocols (moby/spdystream): streams opened with
// SYN_STREAM and accepted with SYN_REPLY, DATA frames with FIN half-closing a stream, RST_STREAM, PING echoed, GOAWAY.
// As spdystream, no flow control: WINDOW_UPDATE and SETTINGS are read and ignored, and no window is enforced.

import { EventEmitter } from 'node:events'
import { Duplex } from 'node:stream'
import {
  FLAG_FIN, FrameReader, FrameType, MAX_DATA_CHUNK, RstStatus, dataFrame, goAwayFrame, payloadStreamId, pingFrame, rstStreamFrame,
  synReplyFrame, synStreamFrame, type Frame
} from './frames.js'
import { HeaderCompressor, HeaderDecompressor, type HeaderBlock } from './header-block.js'

/**
 * One stream: writable (DATA frames, FIN on end()) and readable (the peer's DATA until its FIN or a reset).
 * Writes wait for the stream to be accepted (the peer's SYN_REPLY, or our own reply() for a peer's stream).
 */
export class SpdyStream extends Duplex {
  /** Whether the peer reset the stream (RST_STREAM) or the connection ended before the stream finished. */
  aborted = false
  private accepted = false
  private waiting: Array<() => void> = []
  private remoteFin = false
  private localFin = false

  constructor (private readonly session: SpdySession, readonly id: number, readonly headers: HeaderBlock) {
    super({ allowHalfOpen: true })
  }

  /** The first value of a header (names are lowercase on the wire). */
  header (name: string): string | undefined { return this.headers[name.toLowerCase()]?.[0] }

  /** Resolves once the stream is accepted; rejects if it is reset or the connection ends first. */
  ready (): Promise<void> {
    if (this.accepted) return Promise.resolve()
    if (this.aborted) return Promise.reject(new Error(`SPDY stream ${this.id} was reset`))
    return new Promise((resolve, reject) => this.waiting.push(() => { if (this.accepted) resolve(); else reject(new Error(`SPDY stream ${this.id} was reset`)) }))
  }

  /** Accepts a stream the peer opened (SYN_REPLY). */
  reply (headers: Record<string, string | string[]> = {}): void {
    if (this.accepted) return
    this.session.sendReply(this.id, headers)
    this.markAccepted()
  }

  /** Abandons the stream (RST_STREAM). */
  reset (status: number = RstStatus.CANCEL): void {
    if (!this.aborted) this.session.sendReset(this.id, status)
    this.onReset()
  }

  override _read (): void {}

  override _write (chunk: Buffer, _enc: BufferEncoding, done: (err?: Error | null) => void): void {
    this.ready().then(() => {
      if (this.aborted) { done(); return }
      this.session.sendData(this.id, chunk, false, done)
    }, () => done())
  }

  override _final (done: (err?: Error | null) => void): void {
    this.ready().then(() => {
      this.localFin = true
      if (this.aborted) { done(); return }
      this.session.sendData(this.id, Buffer.alloc(0), true, done)
      this.session.forgetIfDone(this)
    }, () => done())
  }

  /** Whether both directions have finished (or the stream was reset). */
  finished (): boolean { return this.aborted || (this.localFin && this.remoteFin) }

  markAccepted (): void {
    this.accepted = true
    for (const w of this.waiting.splice(0)) w()
  }

  onData (data: Buffer, fin: boolean): void {
    if (this.remoteFin) return
    if (data.length > 0) this.push(data)
    if (fin) this.onRemoteFin()
  }

  onRemoteFin (): void {
    if (this.remoteFin) return
    this.remoteFin = true
    this.push(null)
  }

  onReset (): void {
    if (this.aborted) return
    this.aborted = true
    for (const w of this.waiting.splice(0)) w()
    this.onRemoteFin()
    this.emit('reset')
  }
}

export interface SpdySessionOptions {
  /** A server numbers its streams even and accepts the peer's odd ones; a client the reverse. */
  server: boolean
  /** Bytes read from the socket with the upgrade answer, already part of the SPDY connection. */
  head?: Buffer
}

/** Events: 'stream' (a stream the peer opened, to reply() or reset()), 'goaway', 'close'. */
export class SpdySession extends EventEmitter {
  readonly server: boolean
  private nextId: number
  private lastPeerId = 0
  private readonly streams = new Map<number, SpdyStream>()
  private readonly compressor = new HeaderCompressor()
  private readonly decompressor = new HeaderDecompressor()
  private readonly reader = new FrameReader()
  closed = false

  constructor (readonly socket: Duplex, o: SpdySessionOptions) {
    super()
    this.server = o.server
    this.nextId = o.server ? 2 : 1
    socket.on('data', (chunk: Buffer) => this.receive(chunk))
    socket.on('end', () => this.shutdown())
    socket.on('close', () => this.shutdown())
    socket.on('error', () => { this.shutdown(); socket.destroy() })
    socket.resume()
    const head = o.head
    if (head !== undefined && head.length > 0) process.nextTick(() => this.receive(head))
  }

  /** Opens a stream (SYN_STREAM) with Kubernetes' headers (streamType, port, requestID ...). */
  openStream (headers: Record<string, string | string[]>, priority = 0): SpdyStream {
    if (this.closed) throw new Error('SPDY connection is closed')
    const id = this.nextId
    this.nextId += 2
    const stream = new SpdyStream(this, id, lowercase(headers))
    this.streams.set(id, stream)
    this.write(synStreamFrame(id, 0, priority, this.compressor.compress(headers)))
    return stream
  }

  /** Says no new streams will be accepted (GOAWAY, status OK). */
  goAway (status = 0): void {
    this.write(goAwayFrame(this.lastPeerId, status))
  }

  /** Ends the connection at once; every open stream sees its end. */
  destroy (): void {
    this.socket.destroy()
    this.shutdown()
  }

  sendReply (id: number, headers: Record<string, string | string[]>): void {
    this.write(synReplyFrame(id, 0, this.compressor.compress(headers)))
  }

  sendReset (id: number, status: number): void {
    this.write(rstStreamFrame(id, status))
    this.streams.delete(id)
  }

  /** DATA frames of at most MAX_DATA_CHUNK bytes; `done` once the last is handed to the socket. */
  sendData (id: number, data: Buffer, fin: boolean, done: (err?: Error | null) => void): void {
    if (this.closed) { done(); return }
    const frames: Buffer[] = []
    for (let at = 0; at < data.length; at += MAX_DATA_CHUNK) frames.push(dataFrame(id, 0, data.subarray(at, at + MAX_DATA_CHUNK)))
    if (fin) frames.push(dataFrame(id, FLAG_FIN, Buffer.alloc(0)))
    if (frames.length === 0) { done(); return }
    const last = frames.pop()!
    for (const f of frames) this.socket.write(f)
    this.socket.write(last, () => done())
  }

  forgetIfDone (s: SpdyStream): void {
    if (s.finished()) this.streams.delete(s.id)
  }

  private write (frame: Buffer): void {
    if (!this.closed && this.socket.writable) this.socket.write(frame)
  }

  private receive (chunk: Buffer): void {
    if (this.closed) return
    try {
      for (const f of this.reader.push(chunk)) this.handle(f)
    } catch (err) {
      this.emit('protocolError', err)
      this.write(goAwayFrame(this.lastPeerId, 1))
      this.destroy()
    }
  }

  private handle (f: Frame): void {
    if (f.kind === 'data') {
      const s = this.streams.get(f.streamId)
      if (s === undefined) return
      s.onData(f.data, (f.flags & FLAG_FIN) !== 0)
      this.forgetIfDone(s)
      return
    }
    const fin = (f.flags & FLAG_FIN) !== 0
    switch (f.type) {
      case FrameType.SYN_STREAM: {
        const id = payloadStreamId(f.payload)
        // Every header block passes through the connection's zlib stream, even that of a refused stream.
        const headers = this.decompressor.decompress(f.payload.subarray(10))
        const peerParity = this.server ? 1 : 0
        if (id % 2 !== peerParity || id <= this.lastPeerId || this.closed) { this.write(rstStreamFrame(id, RstStatus.PROTOCOL_ERROR)); return }
        this.lastPeerId = id
        const s = new SpdyStream(this, id, headers)
        this.streams.set(id, s)
        if (fin) s.onRemoteFin()
        if (this.listenerCount('stream') === 0) { s.reset(RstStatus.REFUSED_STREAM); return }
        this.emit('stream', s)
        return
      }
      case FrameType.SYN_REPLY: {
        const id = payloadStreamId(f.payload)
        this.decompressor.decompress(f.payload.subarray(4))
        const s = this.streams.get(id)
        if (s === undefined) return
        s.markAccepted()
        if (fin) s.onRemoteFin()
        this.forgetIfDone(s)
        return
      }
      case FrameType.HEADERS: {
        const id = payloadStreamId(f.payload)
        this.decompressor.decompress(f.payload.subarray(4))
        const s = this.streams.get(id)
        if (s !== undefined && fin) { s.onRemoteFin(); this.forgetIfDone(s) }
        return
      }
      case FrameType.RST_STREAM: {
        const id = payloadStreamId(f.payload)
        const s = this.streams.get(id)
        this.streams.delete(id)
        s?.onReset()
        return
      }
      case FrameType.PING: {
        if (f.payload.length < 4) throw new Error('SPDY PING frame too short')
        const pingId = f.payload.readUInt32BE(0)
        // The peer's pings (odd from a client, even from a server) are echoed; answers to our own are dropped.
        if (pingId % 2 === (this.server ? 1 : 0)) this.write(pingFrame(pingId))
        return
      }
      case FrameType.GOAWAY:
        this.emit('goaway')
        return
      default:
        // SETTINGS, WINDOW_UPDATE and unknown control frames carry nothing this dialect acts on.
    }
  }

  private shutdown (): void {
    if (this.closed) return
    this.closed = true
    for (const s of this.streams.values()) s.onReset()
    this.streams.clear()
    this.emit('close')
  }
}

function lowercase (headers: Record<string, string | string[]>): HeaderBlock {
  const out: HeaderBlock = {}
  for (const [k, v] of Object.entries(headers)) out[k.toLowerCase()] = Array.isArray(v) ? v : [v]
  return out
}
