// A loopback listener whose connections are piped into tunnels: for clients that dial by themselves (grpc-js for
// etcd), so their traffic still leaves through the egress selection.

import { createServer, type Server, type Socket } from 'node:net'
import type { AddressInfo } from 'node:net'
import type { Duplex } from 'node:stream'

export interface Forwarder {
  /** `127.0.0.1:port` to give the client instead of the real address. */
  address: string
  close(): Promise<void>
}

/** Each accepted connection gets its own tunnel from `open`; one that cannot be opened is closed at once. */
export async function startForwarder (open: () => Promise<Duplex>, onError: (err: Error) => void = () => {}): Promise<Forwarder> {
  const live = new Set<Socket | Duplex>()
  const server: Server = createServer(client => {
    live.add(client)
    client.once('close', () => live.delete(client))
    client.on('error', () => {})
    open().then(upstream => {
      live.add(upstream)
      upstream.once('close', () => { live.delete(upstream); client.destroy() })
      upstream.on('error', () => client.destroy())
      client.once('close', () => upstream.destroy())
      client.pipe(upstream)
      upstream.pipe(client)
    }, (err: Error) => { onError(err); client.destroy() })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  return {
    address: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close () {
      for (const s of live) s.destroy()
      await new Promise<void>(resolve => server.close(() => resolve()))
    }
  }
}
