// What is answered on a connection outside the normal request path: the rest of an oversized body, drained so
// its 413 is read, and errors of Node's HTTP parser, answered with a Status body.

import type { IncomingMessage } from 'node:http'
import type { Duplex } from 'node:stream'

/** Bytes of an oversized body read and dropped after its 413 before the connection is cut, and how long to wait. */
const DISCARD_LIMIT_BYTES = 64 * 1024 * 1024
const DISCARD_LIMIT_MS = 10_000

/**
 * Reads the rest of a request body into nothing, keeping the connection (kept alive) open until the client has sent
 * it, so its 413 is read rather than lost to a reset; a body past the byte or time cap has its connection destroyed.
 */
export function discardBody (req: IncomingMessage): void {
  if (req.complete) return
  const socket = req.socket
  let seen = 0
  const cut = (): void => { socket.destroy() }
  const timer = setTimeout(cut, DISCARD_LIMIT_MS)
  timer.unref()
  req.on('data', (chunk: Buffer) => {
    seen += chunk.length
    if (seen > DISCARD_LIMIT_BYTES) cut()
  })
  req.on('end', () => clearTimeout(timer))
  req.on('close', () => clearTimeout(timer))
  req.resume()
}

/**
 * Errors of Node's HTTP parser (oversized headers, malformed requests, header timeouts) answered with a Status
 * body instead of Node's bare status line, then the connection closed.
 */
export function answerClientError (err: Error & { code?: string }, socket: Duplex): void {
  if (!socket.writable || (socket as Duplex & { _httpMessage?: unknown })._httpMessage !== undefined) {
    socket.destroy()
    return
  }
  const [code, reason, message] = err.code === 'HPE_HEADER_OVERFLOW'
    ? [431, 'RequestHeaderFieldsTooLarge', 'Request Header Fields Too Large']
    : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' || err.code === 'HPE_HEADER_TIMEOUT'
      ? [408, 'Timeout', 'the request headers or body were not received in time']
      : [400, 'BadRequest', `malformed HTTP request: ${err.code ?? err.message}`]
  const status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code }
  const body = JSON.stringify(status)
  const title = code === 431 ? 'Request Header Fields Too Large' : code === 408 ? 'Request Timeout' : 'Bad Request'
  socket.end(`HTTP/1.1 ${code} ${title}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`)
}
