// A gRPC connection to an etcd cluster: unary KV/Maintenance calls and Watch streams, failing over between endpoints.
import { readFileSync } from 'node:fs'
import { Client, credentials, Metadata, status, type ChannelCredentials, type ClientDuplexStream, type ServiceError } from '@grpc/grpc-js'
import type protobuf from 'protobufjs'
import { loadEtcdProto, toObjectOptions, type Msg } from './etcd-proto.js'

export interface EtcdTls {
  caFile?: string
  certFile?: string
  keyFile?: string
}

export interface EtcdClientOptions {
  /** Client URLs (`http://host:port` or `https://host:port`). */
  endpoints: string[]
  tls?: EtcdTls
  /** Deadline of one unary call on one endpoint (ms). */
  callTimeoutMs?: number
  root?: protobuf.Root
  /**
   * Where to dial an endpoint instead (a loopback forwarder of the `etcd` egress selection), and the name its TLS
   * certificate is checked against then; undefined: the endpoint itself.
   */
  route?: (endpoint: string) => { target: string, serverName?: string } | undefined
}

interface Codec {
  path: string
  encode: (value: Msg) => Buffer
  decode: (buf: Buffer) => Msg
}

export type EtcdService = 'KV' | 'Watch' | 'Maintenance'

/** gRPC codes after which another endpoint may answer (the call did not reach a working member). */
const failoverCodes = new Set<number>([status.UNAVAILABLE, status.DEADLINE_EXCEEDED, status.CANCELLED])

export function isFailover (err: unknown): boolean {
  return typeof (err as ServiceError)?.code === 'number' && failoverCodes.has((err as ServiceError).code)
}

/** The etcd server's own error text ("etcdserver: mvcc: required revision has been compacted"). */
export function etcdMessage (err: unknown): string {
  return String((err as ServiceError)?.details ?? (err as Error)?.message ?? err)
}

export class EtcdClient {
  readonly endpoints: string[]
  private readonly root: protobuf.Root
  private readonly creds: ChannelCredentials
  private readonly clients: Array<Client | undefined>
  private readonly codecs = new Map<string, Codec>()
  private readonly callTimeoutMs: number
  private readonly route?: EtcdClientOptions['route']
  /** The endpoint calls go to first; moves on when it fails. */
  private current = 0
  private closed = false

  constructor (opts: EtcdClientOptions) {
    if (opts.endpoints.length === 0) throw new Error('etcd client: no endpoints')
    this.endpoints = opts.endpoints
    this.root = opts.root ?? loadEtcdProto()
    this.callTimeoutMs = opts.callTimeoutMs ?? 5000
    this.route = opts.route
    this.clients = opts.endpoints.map(() => undefined)
    const secure = opts.endpoints.some(e => e.startsWith('https://')) || opts.tls?.caFile !== undefined
    this.creds = secure
      ? credentials.createSsl(read(opts.tls?.caFile), read(opts.tls?.keyFile), read(opts.tls?.certFile))
      : credentials.createInsecure()
  }

  /**
   * One unary call; on unavailability or timeout it is sent to the next endpoint, each tried once. With `once`, it is
   * sent once and the failure thrown (after moving to the next endpoint): for writes whose outcome the caller must
   * then find out itself.
   */
  async call (service: EtcdService, method: string, request: Msg, timeoutMs = this.callTimeoutMs, once = false): Promise<Msg> {
    const codec = this.codecFor(service, method)
    let lastErr: unknown
    for (let attempt = 0; attempt < (once ? 1 : this.endpoints.length); attempt++) {
      const i = this.current
      try {
        return await this.unary(i, codec, request, timeoutMs)
      } catch (err) {
        if (!isFailover(err) || this.closed) throw err
        lastErr = err
        if (this.current === i) this.current = (i + 1) % this.endpoints.length
      }
    }
    throw lastErr
  }

  /** Opens a Watch stream on the current endpoint (the caller reopens on `nextEndpoint()` after an error). */
  watchStream (): ClientDuplexStream<Msg, Msg> {
    const codec = this.codecFor('Watch', 'Watch')
    const res = this.root.lookupType('etcdserverpb.WatchResponse')
    return this.client(this.current).makeBidiStreamRequest(codec.path, codec.encode,
      buf => res.toObject(res.decode(buf), toObjectOptions), new Metadata())
  }

  /** Moves the preferred endpoint on (after a stream on it failed). */
  nextEndpoint (): void {
    this.current = (this.current + 1) % this.endpoints.length
  }

  close (): void {
    this.closed = true
    for (const c of this.clients) c?.close()
  }

  private unary (i: number, codec: Codec, request: Msg, timeoutMs: number): Promise<Msg> {
    return new Promise((resolve, reject) => {
      this.client(i).makeUnaryRequest(codec.path, codec.encode, codec.decode, request, new Metadata(),
        { deadline: new Date(Date.now() + timeoutMs) }, (err, value) => {
          if (err !== null) reject(err)
          else resolve(value ?? {})
        })
    })
  }

  private client (i: number): Client {
    let c = this.clients[i]
    if (c === undefined) {
      const routed = this.route?.(this.endpoints[i])
      const target = routed?.target ?? this.endpoints[i].replace(/^[a-z]+:\/\//, '')
      c = new Client(target, this.creds, {
        'grpc.max_receive_message_length': 64 * 1024 * 1024,
        'grpc.max_send_message_length': 16 * 1024 * 1024,
        ...(routed?.serverName === undefined ? {} : { 'grpc.ssl_target_name_override': routed.serverName, 'grpc.default_authority': routed.serverName })
      })
      this.clients[i] = c
    }
    return c
  }

  private codecFor (service: EtcdService, method: string): Codec {
    const key = `${service}/${method}`
    let codec = this.codecs.get(key)
    if (codec !== undefined) return codec
    const m = this.root.lookupService(`etcdserverpb.${service}`).methods[method]
    const req = m?.resolvedRequestType
    const res = m?.resolvedResponseType
    if (req == null || res == null) throw new Error(`etcd client: ${key} is not in rpc.proto`)
    codec = {
      path: `/etcdserverpb.${key}`,
      encode: value => Buffer.from(req.encode(req.fromObject(value)).finish()),
      decode: buf => res.toObject(res.decode(buf), toObjectOptions)
    }
    this.codecs.set(key, codec)
    return codec
  }
}

function read (path: string | undefined): Buffer | null {
  return path === undefined ? null : readFileSync(path)
}
