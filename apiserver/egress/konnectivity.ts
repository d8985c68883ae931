// The GRPC proxy protocol of egress selection: connections tunnelled through a konnectivity server on a Unix socket,
// one ProxyService.Proxy stream per connection (DIAL_REQ, DIAL_RSP with the connection id, DATA both ways, CLOSE_REQ).

import { randomInt } from 'node:crypto'
import { existsSync } from 'node:fs'
import { Duplex } from 'node:stream'
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls'
import { isIP } from 'node:net'
import { fileURLToPath } from 'node:url'
import { Client, credentials, type ClientDuplexStream } from '@grpc/grpc-js'
import protobuf from 'protobufjs'
import type { buildConnector } from 'undici'

const PROXY_METHOD = '/ProxyService/Proxy'

type PacketObject = {
  type: 'DIAL_REQ' | 'DIAL_RSP' | 'CLOSE_REQ' | 'CLOSE_RSP' | 'DATA' | 'DIAL_CLS'
  dialRequest?: { protocol: string, address: string, random: number }
  dialResponse?: { error?: string, connectID?: number, random?: number }
  data?: { connectID: number, error?: string, data?: Buffer }
  closeRequest?: { connectID: number }
  closeResponse?: { error?: string, connectID?: number }
}

/** Finds proto/konnectivity/client.proto from the source tree (apiserver/egress) or the build (dist/apiserver/egress). */
function protoPath (): string {
  for (const rel of ['../../proto/konnectivity/client.proto', '../../../proto/konnectivity/client.proto']) {
    const candidate = fileURLToPath(new URL(rel, import.meta.url))
    if (existsSync(candidate)) return candidate
  }
  throw new Error('proto/konnectivity/client.proto not found beside the package')
}

/** One tunnelled connection: bytes written become DATA packets; DATA received is read; closing sends CLOSE_REQ. */
class Tunnel extends Duplex {
  private ended = false

  constructor (private readonly call: ClientDuplexStream<PacketObject, PacketObject>, private readonly connectID: number) {
    super()
  }

  override _read (): void {}

  override _write (chunk: Buffer, _encoding: BufferEncoding, callback: (err?: Error | null) => void): void {
    this.call.write({ type: 'DATA', data: { connectID: this.connectID, data: chunk } }, callback)
  }

  override _final (callback: (err?: Error | null) => void): void {
    this.close()
    callback()
  }

  override _destroy (err: Error | null, callback: (err?: Error | null) => void): void {
    this.close()
    callback(err)
  }

  /** The konnectivity server answered DATA, CLOSE_RSP or ended the stream. */
  received (p: PacketObject): void {
    if (p.type === 'DATA' && p.data?.data !== undefined && p.data.data.length > 0) this.push(p.data.data)
    else if (p.type === 'CLOSE_RSP') { this.ended = true; this.push(null); this.call.end() }
  }

  private close (): void {
    if (this.ended) return
    this.ended = true
    this.call.write({ type: 'CLOSE_REQ', closeRequest: { connectID: this.connectID } })
    this.call.end()
  }
}

export interface Konnectivity {
  /** A tunnel to host:port (the bytes as they are; TLS, if any, is the caller's). */
  tunnel(address: string, timeoutMs: number): Promise<Duplex>
  /** An undici connector whose connections go through the konnectivity server (TLS to the target inside the tunnel). */
  connector(tls: ConnectionOptions & { timeout?: number }): buildConnector.connector
  close(): void
}

/** A client of the konnectivity server listening on `udsName`. */
export function createKonnectivity (udsName: string): Konnectivity {
  const root = protobuf.loadSync(protoPath())
  const Packet = root.lookupType('Packet')
  const serialize = (p: PacketObject): Buffer => Buffer.from(Packet.encode(Packet.fromObject(p)).finish())
  const deserialize = (b: Buffer): PacketObject => Packet.toObject(Packet.decode(b), { longs: Number, enums: String }) as PacketObject
  const client = new Client(`unix:${udsName}`, credentials.createInsecure())

  /** Opens a tunnel to host:port; rejects with the server's dial error. */
  async function dial (address: string, timeoutMs: number): Promise<Tunnel> {
    const call = client.makeBidiStreamRequest(PROXY_METHOD, serialize, deserialize)
    const random = randomInt(1, 2 ** 47)
    return await new Promise<Tunnel>((resolve, reject) => {
      let tunnel: Tunnel | undefined
      const timer = setTimeout(() => fail(new Error(`dial ${address} through konnectivity: timed out`)), timeoutMs)
      const fail = (err: Error): void => {
        clearTimeout(timer)
        if (tunnel === undefined) { call.cancel(); reject(err) } else tunnel.destroy(err)
      }
      call.on('data', (p: PacketObject) => {
        if (tunnel !== undefined) { tunnel.received(p); return }
        if (p.type !== 'DIAL_RSP' || p.dialResponse?.random !== random) return
        clearTimeout(timer)
        if ((p.dialResponse.error ?? '') !== '') { call.end(); reject(new Error(`dial ${address} through konnectivity: ${p.dialResponse.error!}`)); return }
        tunnel = new Tunnel(call, p.dialResponse.connectID ?? 0)
        resolve(tunnel)
      })
      call.on('end', () => { if (tunnel === undefined) fail(new Error(`dial ${address} through konnectivity: stream ended`)); else tunnel.push(null) })
      call.on('error', (err: Error & { code?: number }) => { if (err.code !== 1 /* CANCELLED by us */) fail(err) })
      call.write({ type: 'DIAL_REQ', dialRequest: { protocol: 'tcp', address, random } })
    })
  }

  return {
    tunnel: dial,
    connector (tls) {
      return (opts, callback) => {
        const host = opts.hostname.replace(/^\[|\]$/g, '')
        const port = opts.port !== '' ? opts.port : (opts.protocol === 'https:' ? '443' : '80')
        const address = isIP(host) === 6 ? `[${host}]:${port}` : `${host}:${port}`
        dial(address, tls.timeout ?? 10_000).then(tunnel => {
          if (opts.protocol !== 'https:') { callback(null, tunnel as never); return }
          const servername = opts.servername ?? tls.servername ?? (isIP(host) === 0 ? host : undefined)
          // `host` is what the certificate is checked against (tls.connect would take localhost otherwise).
          const socket = tlsConnect({ ...tls, socket: tunnel, host, servername, ALPNProtocols: ['http/1.1'] })
          socket.once('secureConnect', () => callback(null, socket))
          socket.once('error', err => callback(err, null))
        }, (err: Error) => callback(err, null))
      }
    },
    close () { client.close() }
  }
}
