// Egress selection: the undici dispatcher each class of outbound traffic uses (webhooks and orchlets are `cluster`,
// authorization webhooks `controlplane`), direct, through an HTTP CONNECT proxy over TCP (with TLS) or a Unix socket, or
// through a konnectivity server's gRPC tunnels on a Unix socket.

import { readFileSync } from 'node:fs'
import { Agent, ProxyAgent, type Dispatcher } from 'undici'
import type { EgressClass, EgressConnection, EgressSettings } from './config.js'
import { createKonnectivity, type Konnectivity } from './konnectivity.js'

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

export function createEgress (settings: EgressSettings = {}): Egress {
  // One konnectivity client (gRPC channel) per class on the GRPC protocol, made when first used.
  const tunnels = new Map<EgressClass, Konnectivity>()
  const konnectivity = (cls: EgressClass, udsName: string): Konnectivity => {
    let k = tunnels.get(cls)
    if (k === undefined) tunnels.set(cls, k = createKonnectivity(udsName))
    return k
  }
  return {
    dispatcher (cls, tls = {}) {
      const c = settings[cls]
      if (c === undefined || c.proxyProtocol === 'Direct') return new Agent({ connect: tls, connectTimeout: tls.timeout })
      if (c.proxyProtocol === 'HTTPConnect') return proxied(c, tls)
      return new Agent({ connect: konnectivity(cls, c.transport.udsName).connector(tls) })
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
