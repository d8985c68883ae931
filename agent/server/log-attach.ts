// Attach for containers whose runtime has no streaming server (WebAssembly): the container's output as it is
// written, over the WebSocket channel protocol kubectl 1.30+ speaks (v5/v4.channel.k8s.io; channel 1 stdout,
// 2 stderr, 3 the final Status) or over SPDY/3.1 as kubectl 1.29 speaks it (spdy-attach.ts). Input and terminal
// resizing are not carried: a WebAssembly container has no stdin.

import type { IncomingMessage } from 'node:http'
import type { Duplex } from 'node:stream'
import { Writable } from 'node:stream'
import type { WebSocket, WebSocketServer } from 'ws'
import { writeContainerLog } from './container-logs.js'
import { serveSpdyAttach, type AttachFlags } from './spdy-attach.js'

export const ATTACH_PROTOCOLS = ['v5.channel.k8s.io', 'v4.channel.k8s.io', 'channel.k8s.io']

export function isWebSocketUpgrade (req: IncomingMessage): boolean {
  return (req.headers.upgrade ?? '').toLowerCase() === 'websocket'
}

/** Frames written text as channel-1 messages on the socket (skipping empty writes). */
function channelWriter (ws: WebSocket): Writable {
  return new Writable({
    write (chunk: Buffer | string, _enc, done) {
      const data = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk)
      if (data.length === 0 || ws.readyState !== ws.OPEN) { done(); return }
      ws.send(Buffer.concat([Buffer.from([1]), data]), done)
    }
  })
}

/** The attach options of the orchlet's query (input, output, error, tty). */
export function attachFlags (q: URLSearchParams): AttachFlags {
  const on = (name: string): boolean => q.get(name) === '1' || q.get(name) === 'true'
  return { stdin: on('input'), stdout: on('output'), stderr: on('error'), tty: on('tty') }
}

export function createLogAttach (): { serve(req: IncomingMessage, socket: Duplex, head: Buffer, logPath: string, running: () => boolean): void; close(): void } {
  // ws is loaded with the first WebSocket attach (an upgraded socket holds its bytes until then).
  let server: Promise<WebSocketServer> | undefined
  const wsServer = async (): Promise<WebSocketServer> => await (server ??= import('ws').then(({ WebSocketServer }) => new WebSocketServer({
    noServer: true,
    handleProtocols: protocols => ATTACH_PROTOCOLS.find(p => protocols.has(p)) ?? false
  })))
  return {
    serve (req, socket, head, logPath, running) {
      if (!isWebSocketUpgrade(req)) {
        const flags = attachFlags(new URL(req.url ?? '/', 'http://orchlet').searchParams)
        serveSpdyAttach(req, socket, head, flags, async (out, signal) => {
          // Only what is written from now on, followed until the container stops (tailLines 0 skips the past).
          await writeContainerLog(logPath, { tailLines: 0, follow: true, timestamps: false }, out, running, signal)
        })
        return
      }
      wsServer().then(wss => wss.handleUpgrade(req, socket, head, ws => {
        const abort = new AbortController()
        ws.on('close', () => abort.abort())
        ws.on('error', () => abort.abort())
        // Only what is written from now on, followed until the container stops (tailLines 0 skips the past).
        writeContainerLog(logPath, { tailLines: 0, follow: true, timestamps: false }, channelWriter(ws), running, abort.signal)
          .then(() => {
            if (ws.readyState === ws.OPEN) ws.send(Buffer.concat([Buffer.from([3]), Buffer.from('{"metadata":{},"status":"Success"}')]), () => ws.close(1000))
          })
          .catch(() => ws.terminate())
      }), () => socket.destroy())
    },
    close () { void server?.then(wss => { for (const c of wss.clients) c.terminate(); wss.close() }) }
  }
}
