// Egress selection: the undici dispatcher each class of outbound traffic uses (webhooks and orchlets are `cluster`,
// authorization webhooks `controlplane`), direct, through an HTTP CONNECT proxy over TCP (with TLS) or a Unix socket, or
// through a konnectivity server's gRPC tunnels on a Unix socket.

import { readFileSync } from 'node:fs'
import { connect as netConnect, isIP } from 'node:net'
import type { Duplex } from 'node:stream'
import { connect as tlsConnect, type TLSSocket } from 'node:tls'
import { Agent, Client, ProxyAgent } from '../client/undici-core.js'
import type { buildConnector, Dispatcher } from 'undici'
import type { EgressClass, EgressConnection, EgressSettings } from './config.js'
import type { Konnectivity } from './konnectivity.js'

/** How the target itself is verified and what the API server presents to it (undici's connect options). */
export interface TargetTls {
  ca?: string | Buffer
  cert?: string | Buffer
  key?: string | Buffer
  servername?: string
  rejectUnauthorized?: boolean
  /** Connect timeout, ms. */
  timeout?: number
}

export interface Egress {
  /** A new dispatcher (its own pool, closed by the caller) for traffic of `cls` to targets checked with `tls`. */
  dispatcher(cls: EgressClass, tls?: TargetTls): Dispatcher
  /**
   * A TLS connection to host:port for traffic of `cls` that leaves HTTP (exec, attach and port-forward streams),
   * through the selected tunnel; rejects after `tls.timeout` (default 10 s).
   */
  connect(cls: EgressClass, host: string, port: number, tls?: TargetTls): Promise<TLSSocket>
  /** A raw connection to host:port for traffic of `cls` (the caller speaks TLS over it if need be). */
  tunnel(cls: EgressClass, host: string, port: number, timeoutMs?: number): Promise<Duplex>
  /** Whether `cls` leaves directly (no proxy, no tunnel). */
  direct(cls: EgressClass): boolean
  /** Closes the konnectivity channels (dispatchers are closed by their callers). */
  close(): void
  /** The route of `cls`, for logs: `direct`, `HTTPConnect via http://proxy:8131`, ... */
  describe(cls: EgressClass): string
}

function proxied (c: Extract<EgressConnection, { proxyProtocol: 'HTTPConnect' }>, tls: TargetTls): Dispatcher {
  const t = c.transport
  const requestTls = { ...tls }
  if (t.kind === 'uds') {
    // The proxy listens on a Unix socket: undici dials the socket; the URL only names the CONNECT request's origin.
    return new ProxyAgent({ uri: 'http://localhost', proxyTls: { socketPath: t.udsName }, requestTls })
  }
  const proxyTls = t.url.startsWith('https://')
    ? {
        ca: t.caBundle === undefined ? undefined : readFileSync(t.caBundle),
        cert: readFileSync(t.clientCert!),
        key: readFileSync(t.clientKey!)
      }
    : undefined
  return new ProxyAgent({ uri: t.url, proxyTls, requestTls })
}

/** The raw tunnel of an HTTP CONNECT request to the proxy (undici's CONNECT support), for a stream that is not HTTP. */
async function connectThrough (c: Extract<EgressConnection, { proxyProtocol: 'HTTPConnect' }>, address: string): Promise<Duplex> {
  const t = c.transport
  const proxy = t.kind === 'uds'
    ? new Client('http://localhost', { connect: { socketPath: t.udsName } })
    : new Client(t.url, t.url.startsWith('https://') ? { connect: { ca: t.caBundle === undefined ? undefined : readFileSync(t.caBundle), cert: readFileSync(t.clientCert!), key: readFileSync(t.clientKey!) } } : {})
  try {
    const { socket, statusCode } = await proxy.connect({ path: address, headers: { host: address } })
    if (statusCode !== 200) { socket.destroy(); throw new Error(`proxy answered ${statusCode} to CONNECT ${address}`) }
    socket.once('close', () => { void proxy.close() })
    return socket
  } catch (err) {
    void proxy.close()
    throw err
  }
}

/** TLS to host:port, over `raw` when tunnelled, checked against host (or the given servername). */
async function secure (raw: Duplex | undefined, host: string, port: number, tls: TargetTls, timeoutMs: number): Promise<TLSSocket> {
  return await new Promise((resolve, reject) => {
    const servername = tls.servername ?? (isIP(host) === 0 ? host : undefined)
    const s = tlsConnect({ ...tls, host, port, servername, ...(raw === undefined ? {} : { socket: raw }) })
    const timer = setTimeout(() => { s.destroy(); reject(new Error('connect timeout')) }, timeoutMs)
    const onError = (err: Error): void => { clearTimeout(timer); reject(err) }
    s.once('error', onError)
    s.once('secureConnect', () => { clearTimeout(timer); s.off('error', onError); resolve(s) })
  })
}

/**
 * A konnectivity client whose module (gRPC, protobufjs, the tunnel's definitions) is loaded when a connection first
 * goes through it: most API servers have no konnectivity class and never pay for those libraries.
 */
function lazyKonnectivity (udsName: string): Konnectivity {
  let opened: Promise<Konnectivity> | undefined
  const open = async (): Promise<Konnectivity> => await (opened ??= import('./konnectivity.js').then(m => m.createKonnectivity(udsName)))
  return {
    async tunnel (address, timeoutMs) { return await (await open()).tunnel(address, timeoutMs) },
    connector (tls): buildConnector.connector {
      return (opts, callback) => { open().then(k => { k.connector(tls)(opts, callback) }, (err: Error) => { callback(err, null) }) }
    },
    close () { void opened?.then(k => { k.close() }, () => {}) }
  }
}

export function createEgress (settings: EgressSettings = {}): Egress {
  // One konnectivity client (gRPC channel) per class on the GRPC protocol, made when first used.
  const tunnels = new Map<EgressClass, Konnectivity>()
  const konnectivity = (cls: EgressClass, udsName: string): Konnectivity => {
    let k = tunnels.get(cls)
    if (k === undefined) tunnels.set(cls, k = lazyKonnectivity(udsName))
    return k
  }
  return {
    dispatcher (cls, tls = {}) {
      const c = settings[cls]
      if (c === undefined || c.proxyProtocol === 'Direct') return new Agent({ connect: tls, connectTimeout: tls.timeout })
      if (c.proxyProtocol === 'HTTPConnect') return proxied(c, tls)
      return new Agent({ connect: konnectivity(cls, c.transport.udsName).connector(tls) })
    },
    async connect (cls, host, port, tls = {}) {
      const timeoutMs = tls.timeout ?? 10_000
      const raw = this.direct(cls) ? undefined : await this.tunnel(cls, host, port, timeoutMs)
      return await secure(raw, host, port, tls, timeoutMs)
    },
    async tunnel (cls, host, port, timeoutMs = 10_000) {
      const c = settings[cls]
      const address = isIP(host) === 6 ? `[${host}]:${port}` : `${host}:${port}`
      if (c?.proxyProtocol === 'HTTPConnect') return await connectThrough(c, address)
      if (c?.proxyProtocol === 'GRPC') return await konnectivity(cls, c.transport.udsName).tunnel(address, timeoutMs)
      return await new Promise<Duplex>((resolve, reject) => {
        const s = netConnect(port, host)
        const timer = setTimeout(() => { s.destroy(); reject(new Error('connect timeout')) }, timeoutMs)
        s.once('connect', () => { clearTimeout(timer); s.off('error', onError); resolve(s) })
        const onError = (err: Error): void => { clearTimeout(timer); reject(err) }
        s.once('error', onError)
      })
    },
    direct (cls) {
      const c = settings[cls]
      return c === undefined || c.proxyProtocol === 'Direct'
    },
    close () {
      for (const k of tunnels.values()) k.close()
      tunnels.clear()
    },
    describe (cls) {
      const c = settings[cls]
      if (c === undefined || c.proxyProtocol === 'Direct') return 'direct'
      const t = c.transport
      return `${c.proxyProtocol} via ${t.kind === 'uds' ? `unix:${t.udsName}` : t.url}`
    }
  }
}

/** Every class direct: what an API server without --egress-selector-config-file uses. */
export const directEgress = (): Egress => createEgress({})
