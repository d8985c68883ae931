// A test HTTP CONNECT proxy (TCP or Unix socket) that records the targets it tunnels to, for egress selection tests.

import { createServer, type Server } from 'node:http'
import { connect } from 'node:net'
import type { AddressInfo } from 'node:net'
import type { Duplex } from 'node:stream'

export interface ConnectProxy {
  /** `http://127.0.0.1:port` for a TCP proxy, the socket path for a Unix socket one. */
  address: string
  /** Every CONNECT target (`host:port`), in order. */
  targets: string[]
  close(): Promise<void>
}

/** Listens on 127.0.0.1:0, or on `socketPath` when given. */
export async function startConnectProxy (socketPath?: string): Promise<ConnectProxy> {
  const targets: string[] = []
  const tunnels = new Set<Duplex>()
  const server: Server = createServer((_req, res) => { res.statusCode = 405; res.end() })
  server.on('connect', (req, client, head) => {
    const target = req.url ?? ''
    targets.push(target)
    const at = target.lastIndexOf(':')
    tunnels.add(client)
    client.once('close', () => tunnels.delete(client))
    const upstream = connect(Number(target.slice(at + 1)), target.slice(0, at).replace(/^\[|\]$/g, ''), () => {
      client.write('HTTP/1.1 200 Connection established\r\n\r\n')
      upstream.write(head)
      upstream.pipe(client)
      client.pipe(upstream)
    })
    tunnels.add(upstream)
    upstream.once('close', () => { tunnels.delete(upstream); client.destroy() })
    upstream.on('error', () => { client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n') })
    client.on('error', () => upstream.destroy())
    client.once('close', () => upstream.destroy())
  })
  await new Promise<void>(resolve => socketPath === undefined ? server.listen(0, '127.0.0.1', resolve) : server.listen(socketPath, resolve))
  return {
    address: socketPath ?? `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    targets,
    async close () {
      for (const c of tunnels) c.destroy()
      server.closeAllConnections()
      await new Promise<void>(resolve => server.close(() => resolve()))
    }
  }
}
