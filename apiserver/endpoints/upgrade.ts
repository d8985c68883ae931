// Upgrade requests through the ordinary request pipeline: a ServerResponse bound to the raw socket, so refusals
// (401, 403, 404, 400 ...) are written as any Status answer, and a handler that accepts takes the socket over.

import { ServerResponse, type IncomingMessage } from 'node:http'
import type { Socket } from 'node:net'
import type { Duplex } from 'node:stream'

/**
 * A response writing on `socket`; once it is finished the connection closes (an upgrade connection is never
 * reused for another request). A handler that pipes the socket elsewhere simply never writes to the response.
 */
export function takeOverUpgrade (req: IncomingMessage, socket: Duplex): ServerResponse {
  const res = new ServerResponse(req)
  res.shouldKeepAlive = false
  res.assignSocket(socket as Socket)
  socket.on('error', () => socket.destroy())
  res.on('finish', () => {
    res.detachSocket(socket as Socket)
    socket.end()
  })
  return res
}
