// The server half of kubectl's SPDY/3.1 attach for containers without a streaming server (WebAssembly), as the
// kubelet's remotecommand server answers it: the X-Stream-Protocol-Version negotiated (v4 down to v1), the client's
// streams (error, stdin, stdout, stderr, resize) accepted, output written on stdout, and under v4 the final Status
// on the error stream; then the streams are finished and the connection closed.

import type { IncomingMessage } from 'node:http'
import type { Duplex } from 'node:stream'
import { Writable } from 'node:stream'
import { SpdySession, type SpdyStream } from '../../apiserver/spdy/session.js'
import { answerStatus } from './streaming.js'

/** The stream protocols the orchlet serves over SPDY, newest first. */
export const SPDY_STREAM_PROTOCOLS = ['v4.channel.k8s.io', 'v3.channel.k8s.io', 'v2.channel.k8s.io', 'channel.k8s.io']

/** How long the client has to open the streams it asked for (the kubelet's stream creation timeout). */
const STREAM_CREATION_TIMEOUT_MS = 30_000
/** How long the client has to close the connection once everything is written. */
const CLOSE_GRACE_MS = 5_000

export function isSpdyUpgrade (req: IncomingMessage): boolean {
  return /^spdy\/3\.1$/i.test((req.headers.upgrade ?? '').trim())
}

/** The client's first protocol the orchlet serves; '' when it names none (the v1 protocol, as the kubelet assumes). */
export function negotiateStreamProtocol (req: IncomingMessage): string | undefined {
  const raw = req.headers['x-stream-protocol-version']
  const offered = (Array.isArray(raw) ? raw.join(',') : raw ?? '').split(',').map(p => p.trim()).filter(p => p !== '')
  if (offered.length === 0) return ''
  return offered.find(p => SPDY_STREAM_PROTOCOLS.includes(p))
}

export interface AttachFlags { stdin: boolean; stdout: boolean; stderr: boolean; tty: boolean }

/**
 * Upgrades `socket` to SPDY, waits for the client's streams and runs `produce` with a writer to its stdout (or
 * stderr) stream; `produce` ends when the output does or `signal` aborts (the client went away).
 */
export function serveSpdyAttach (req: IncomingMessage, socket: Duplex, head: Buffer, flags: AttachFlags,
  produce: (out: Writable, signal: AbortSignal) => Promise<void>): void {
  const protocol = negotiateStreamProtocol(req)
  if (protocol === undefined) {
    answerStatus(socket, 403, 'Forbidden', `unable to upgrade: unable to negotiate protocol: client supports ${String(req.headers['x-stream-protocol-version'])}, server supports ${JSON.stringify(SPDY_STREAM_PROTOCOLS)}`)
    return
  }
  const lines = ['HTTP/1.1 101 Switching Protocols', 'Connection: Upgrade', 'Upgrade: SPDY/3.1']
  if (protocol !== '') lines.push(`X-Stream-Protocol-Version: ${protocol}`)
  socket.write(lines.join('\r\n') + '\r\n\r\n')
  const session = new SpdySession(socket, { server: true, head })
  const abort = new AbortController()
  session.on('close', () => abort.abort())

  const v4 = protocol === 'v4.channel.k8s.io'
  const resizable = v4 || protocol === 'v3.channel.k8s.io'
  const expected = new Set(['error'])
  if (flags.stdin) expected.add('stdin')
  if (flags.stdout) expected.add('stdout')
  if (flags.stderr && !flags.tty) expected.add('stderr')
  if (flags.tty && resizable) expected.add('resize')
  const streams = new Map<string, SpdyStream>()
  const timer = setTimeout(() => session.destroy(), STREAM_CREATION_TIMEOUT_MS)
  session.on('stream', (s: SpdyStream) => {
    const type = s.header('streamType') ?? ''
    if (!expected.has(type) || streams.has(type)) { s.reset(); return }
    s.reply()
    // Input and resizes are read and dropped: a WebAssembly container has no stdin or terminal.
    s.resume()
    streams.set(type, s)
    if (streams.size === expected.size) { clearTimeout(timer); void start() }
  })

  async function start (): Promise<void> {
    const target = streams.get('stdout') ?? streams.get('stderr')
    const out = new Writable({
      write (chunk: Buffer, _enc, done) {
        if (target === undefined || abort.signal.aborted || chunk.length === 0) { done(); return }
        target.write(chunk, () => done())
      }
    })
    let failure: string | undefined
    try {
      await produce(out, abort.signal)
    } catch (err) {
      failure = (err as Error).message
    }
    if (abort.signal.aborted) { session.destroy(); return }
    const error = streams.get('error')!
    if (failure !== undefined) error.write(v4 ? JSON.stringify({ metadata: {}, status: 'Failure', message: failure, reason: 'InternalError', code: 500 }) : failure)
    else if (v4) error.write(JSON.stringify({ metadata: {}, status: 'Success' }))
    for (const s of streams.values()) s.end()
    session.goAway()
    // The client closes once it has read every stream; a client that does not is cut off after a grace period.
    const grace = setTimeout(() => session.destroy(), CLOSE_GRACE_MS)
    session.on('close', () => clearTimeout(grace))
  }
}
