// WebSocket clients of pods/exec, pods/attach and pods/portforward that kubectl 1.30+ sends, served in the API server
// as kube-apiserver does: `v5.channel.k8s.io` (exec, attach) is terminated here and carried to the orchlet over
// SPDY/3.1 (`v4.channel.k8s.io`), stream by stream (TranslateStreamCloseWebsocketRequests); port-forward's
// `SPDY/3.1+portforward.k8s.io` tunnel has SPDY frames inside WebSocket messages, relayed as bytes to the orchlet's
// SPDY port-forward (PortForwardWebsockets).

import type { IncomingMessage } from 'node:http'
import type { Duplex } from 'node:stream'
import type { RawData, WebSocket, WebSocketServer } from 'ws'
import { internalError, StatusError, type StatusReason } from '../errors/status-error.js'
import { SpdySession, type SpdyStream } from '../spdy/session.js'
import type { UpgradeAnswer } from '../spdy/upgrade.js'

export const V5_CHANNEL_PROTOCOL = 'v5.channel.k8s.io'
export const PORT_FORWARD_TUNNEL_PROTOCOL = 'SPDY/3.1+portforward.k8s.io'

/** The channels of v4/v5.channel.k8s.io: the first byte of every message. */
export const Channel = { stdin: 0, stdout: 1, stderr: 2, error: 3, resize: 4, close: 255 } as const

/** An SPDY/3.1 upgrade to the orchlet with the given X-Stream-Protocol-Version; the socket and the orchlet's answer. */
export type OpenUpstream = (streamProtocol: string) => Promise<{ socket: Duplex; answer: UpgradeAnswer }>

export interface StreamFlags { stdin: boolean; stdout: boolean; stderr: boolean; tty: boolean }

/** The subprotocols a WebSocket upgrade offers (Sec-WebSocket-Protocol, comma-separated, possibly repeated). */
export function offeredSubprotocols (req: IncomingMessage): string[] {
  if ((req.headers.upgrade ?? '').toLowerCase() !== 'websocket') return []
  const raw = req.headers['sec-websocket-protocol']
  return (Array.isArray(raw) ? raw.join(',') : raw ?? '').split(',').map(p => p.trim()).filter(p => p !== '')
}

const HIGH_WATER = 1024 * 1024
const LOW_WATER = 256 * 1024

const SUCCESS = Buffer.from(JSON.stringify({ metadata: {}, status: 'Success' }))

/** A refused upgrade's body as the Status to report: the orchlet's own Status, or an InternalError naming the answer. */
export function refusalStatus (answer: UpgradeAnswer): Record<string, unknown> {
  try {
    const body = JSON.parse(answer.rest.toString('utf8')) as Record<string, unknown>
    if (body.kind === 'Status') return body
  } catch {}
  const text = answer.rest.toString('utf8').trim()
  return new StatusError(500, 'InternalError', `error upgrading the connection to the orchlet: ${answer.status}${text === '' ? '' : ': ' + text}`).toStatus()
}

export interface StreamTranslator {
  /** exec or attach over v5.channel.k8s.io: the WebSocket is accepted, then the orchlet is reached over SPDY. */
  translate(req: IncomingMessage, socket: Duplex, head: Buffer, flags: StreamFlags, open: OpenUpstream): void
  /** port-forward's tunnel: the orchlet's SPDY upgrade first (a refusal is thrown as a StatusError), then the WebSocket. */
  tunnel(req: IncomingMessage, socket: Duplex, head: Buffer, open: OpenUpstream): Promise<void>
  close(): void
}

function frame (channel: number, data: Buffer): Buffer {
  return Buffer.concat([Buffer.from([channel]), data])
}

function asBuffer (data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data
  if (Array.isArray(data)) return Buffer.concat(data)
  return Buffer.from(data)
}

export function createStreamTranslator (): StreamTranslator {
  const tunnelled = new WeakSet<IncomingMessage>()
  // ws is loaded with the first exec, attach or port-forward stream (an upgraded socket holds its bytes until then).
  let servers: Promise<{ channels: WebSocketServer, tunnels: WebSocketServer }> | undefined
  const wsServers = async (): Promise<{ channels: WebSocketServer, tunnels: WebSocketServer }> => await (servers ??= import('ws').then(({ WebSocketServer }) => {
    const channels = new WebSocketServer({ noServer: true, handleProtocols: offered => offered.has(V5_CHANNEL_PROTOCOL) ? V5_CHANNEL_PROTOCOL : false })
    // `SPDY/3.1+portforward.k8s.io` is not an RFC 7230 token (the `/`), which ws refuses to parse: the offer is taken
    // off the request before ws sees it and the answer names the protocol itself.
    const tunnels = new WebSocketServer({ noServer: true })
    tunnels.on('headers', (headers: string[], req: IncomingMessage) => {
      if (tunnelled.has(req)) headers.push(`Sec-WebSocket-Protocol: ${PORT_FORWARD_TUNNEL_PROTOCOL}`)
    })
    return { channels, tunnels }
  }))
  const sessions = new Set<{ destroy(): void }>()

  function finishWith (ws: WebSocket, status: Buffer): void {
    if (ws.readyState !== ws.OPEN) return
    ws.send(frame(Channel.error, status), () => ws.close(1000))
  }

  async function run (ws: WebSocket, flags: StreamFlags, open: OpenUpstream): Promise<void> {
    // The client may send (stdin, a resize, the close of stdin) before the orchlet's streams exist: held until then.
    const early: Buffer[] = []
    let deliver: ((data: Buffer) => void) | undefined
    ws.on('message', (raw: RawData) => {
      const data = asBuffer(raw)
      if (deliver === undefined) early.push(data); else deliver(data)
    })
    let upstream: { socket: Duplex; answer: UpgradeAnswer }
    try {
      upstream = await open('v4.channel.k8s.io')
    } catch (err) {
      finishWith(ws, Buffer.from(JSON.stringify((err instanceof StatusError ? err : internalError(err)).toStatus())))
      return
    }
    if (upstream.answer.status !== 101) {
      upstream.socket.destroy()
      finishWith(ws, Buffer.from(JSON.stringify(refusalStatus(upstream.answer))))
      return
    }
    if (ws.readyState !== ws.OPEN) { upstream.socket.destroy(); return }
    const session = new SpdySession(upstream.socket, { server: false, head: upstream.answer.rest })
    sessions.add(session)
    ws.on('close', () => { session.destroy(); sessions.delete(session) })
    // The streams in the order kubectl's SPDY executor opens them; the error stream carries the final Status.
    const error = session.openStream({ streamType: 'error' })
    error.end()
    const stdin = flags.stdin ? session.openStream({ streamType: 'stdin' }) : undefined
    const stdout = flags.stdout ? session.openStream({ streamType: 'stdout' }) : undefined
    const stderr = flags.stderr && !flags.tty ? session.openStream({ streamType: 'stderr' }) : undefined
    const resize = flags.tty ? session.openStream({ streamType: 'resize' }) : undefined

    const statusParts: Buffer[] = []
    error.on('data', (d: Buffer) => statusParts.push(d))
    const pending = new Set<SpdyStream>([error])
    // SPDY here has no per-stream flow control: a client slower than the container is met by pausing the orchlet's
    // connection while more than HIGH_WATER bytes wait to be sent on the WebSocket.
    let unsent = 0
    let paused = false
    const forward = (s: SpdyStream | undefined, channel: number): void => {
      if (s === undefined) return
      pending.add(s)
      s.on('data', (d: Buffer) => {
        if (ws.readyState !== ws.OPEN) return
        unsent += d.length
        if (unsent > HIGH_WATER && !paused) { paused = true; upstream.socket.pause() }
        ws.send(frame(channel, d), () => {
          unsent -= d.length
          if (paused && unsent < LOW_WATER) { paused = false; upstream.socket.resume() }
        })
      })
    }
    forward(stdout, Channel.stdout)
    forward(stderr, Channel.stderr)
    for (const s of pending) {
      s.on('end', () => {
        pending.delete(s)
        if (pending.size > 0) return
        // Every output has ended and the error stream is read: its Status (or Success when it is empty) is the last word.
        const status = Buffer.concat(statusParts)
        finishWith(ws, status.length > 0 ? status : SUCCESS)
        session.destroy()
      })
    }

    deliver = (data: Buffer): void => {
      if (data.length === 0) return
      const body = data.subarray(1)
      if (data[0] === Channel.stdin && stdin !== undefined && body.length > 0) {
        if (!stdin.write(body)) { ws.pause(); stdin.once('drain', () => ws.resume()) }
      } else if (data[0] === Channel.resize && resize !== undefined) {
        resize.write(body)
      } else if (data[0] === Channel.close && body[0] === Channel.stdin) {
        stdin?.end()
      }
    }
    for (const data of early.splice(0)) deliver(data)
  }

  return {
    translate (req, socket, head, flags, open) {
      wsServers().then(({ channels }) => {
        channels.handleUpgrade(req, socket, head, ws => {
          ws.on('error', () => ws.terminate())
          run(ws, flags, open).catch(err => finishWith(ws, Buffer.from(JSON.stringify(internalError(err).toStatus()))))
        })
      }, () => socket.destroy())
    },
    async tunnel (req, socket, head, open) {
      const { tunnels } = await wsServers()
      const upstream = await open('portforward.k8s.io')
      if (upstream.answer.status !== 101) {
        upstream.socket.destroy()
        const s = refusalStatus(upstream.answer)
        throw new StatusError(Number(s.code ?? 500), String(s.reason ?? 'InternalError') as StatusReason, String(s.message ?? 'port-forward failed'))
      }
      const up = upstream.socket
      delete req.headers['sec-websocket-protocol']
      tunnelled.add(req)
      tunnels.handleUpgrade(req, socket, head, ws => {
        const entry = { destroy: () => { ws.terminate(); up.destroy() } }
        sessions.add(entry)
        const end = (): void => { sessions.delete(entry); ws.terminate(); up.destroy() }
        ws.on('close', end); ws.on('error', end)
        up.on('close', end); up.on('error', end)
        if (upstream.answer.rest.length > 0) ws.send(upstream.answer.rest)
        up.on('data', (d: Buffer) => { if (ws.readyState === ws.OPEN) ws.send(d) })
        up.resume()
        ws.on('message', (raw: RawData) => {
          if (!up.write(asBuffer(raw))) { ws.pause(); up.once('drain', () => ws.resume()) }
        })
      })
    },
    close () {
      for (const s of [...sessions]) s.destroy()
      void servers?.then(({ channels, tunnels }) => {
        for (const c of channels.clients) c.terminate()
        for (const c of tunnels.clients) c.terminate()
        channels.close(); tunnels.close()
      })
    }
  }
}
