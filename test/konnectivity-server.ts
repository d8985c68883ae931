// A test konnectivity server on a Unix socket: ProxyService.Proxy streams, each dialling one TCP target and relaying
// DATA both ways, recording the addresses dialled. For the GRPC protocol of egress selection.

import { connect, type Socket } from 'node:net'
import { fileURLToPath } from 'node:url'
import * as grpc from '@grpc/grpc-js'
import protobuf from 'protobufjs'

type Packet = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any

export interface KonnectivityServer {
  socketPath: string
  /** host:port of every DIAL_REQ, in order. */
  dialled: string[]
  close(): Promise<void>
}

export async function startKonnectivityServer (socketPath: string): Promise<KonnectivityServer> {
  const root = protobuf.loadSync(fileURLToPath(new URL('../proto/konnectivity/client.proto', import.meta.url)))
  const P = root.lookupType('Packet')
  const dialled: string[] = []
  const sockets = new Set<Socket>()
  let nextId = 1
  const server = new grpc.Server()
  server.addService({
    Proxy: {
      path: '/ProxyService/Proxy',
      requestStream: true,
      responseStream: true,
      requestSerialize: (p: Packet) => Buffer.from(P.encode(P.fromObject(p)).finish()),
      requestDeserialize: (b: Buffer) => P.toObject(P.decode(b), { longs: Number, enums: String }),
      responseSerialize: (p: Packet) => Buffer.from(P.encode(P.fromObject(p)).finish()),
      responseDeserialize: (b: Buffer) => P.toObject(P.decode(b), { longs: Number, enums: String })
    }
  }, {
    Proxy: (call: grpc.ServerDuplexStream<Packet, Packet>) => {
      let target: Socket | undefined
      let id = 0
      const closed = (): void => {
        if (id === 0) return
        call.write({ type: 'CLOSE_RSP', closeResponse: { connectID: id } })
        id = 0
        call.end()
      }
      call.on('data', (p: Packet) => {
        if (p.type === 'DIAL_REQ') {
          const address = String(p.dialRequest.address)
          dialled.push(address)
          const at = address.lastIndexOf(':')
          const s = connect(Number(address.slice(at + 1)), address.slice(0, at).replace(/^\[|\]$/g, ''))
          sockets.add(s)
          s.once('connect', () => {
            target = s
            id = nextId++
            call.write({ type: 'DIAL_RSP', dialResponse: { random: p.dialRequest.random, connectID: id } })
          })
          s.on('data', (data: Buffer) => { if (id !== 0) call.write({ type: 'DATA', data: { connectID: id, data } }) })
          s.once('error', err => { if (target === undefined) call.write({ type: 'DIAL_RSP', dialResponse: { random: p.dialRequest.random, error: err.message } }) })
          s.once('close', () => { sockets.delete(s); closed() })
        } else if (p.type === 'DATA') {
          target?.write(p.data.data as Buffer)
        } else if (p.type === 'CLOSE_REQ') {
          target?.end()
        }
      })
      call.on('end', () => target?.end())
      call.on('error', () => target?.destroy())
    }
  })
  await new Promise<void>((resolve, reject) => server.bindAsync(`unix:${socketPath}`, grpc.ServerCredentials.createInsecure(), err => { if (err !== null) reject(err); else resolve() }))
  return {
    socketPath,
    dialled,
    async close () {
      for (const s of sockets) s.destroy()
      server.forceShutdown()
    }
  }
}
