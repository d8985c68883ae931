// Egress selection: the undici dispatcher each class of outbound traffic uses (webhooks and orchlets are `cluster`,
// authorization webhooks `controlplane`), direct or through an HTTP CONNECT proxy over TCP (with TLS) or a Unix socket.

import { readFileSync } from 'node:fs'
import { Agent, ProxyAgent, type Dispatcher } from 'undici'
import type { EgressClass, EgressConnection, EgressSettings } from './config.js'

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
  /** The route of `cls`, for logs: `direct`, `HTTPConnect via http://proxy:8131`, ... */
  describe(cls: EgressClass): string
}

export class EgressUnsupportedError extends Error {
  readonly code = 'ORCH_ERR_EGRESS_UNSUPPORTED'
  override readonly name = 'ConfigError'
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
  for (const [cls, c] of Object.entries(settings)) {
    if (c?.proxyProtocol === 'GRPC') {
      throw new EgressUnsupportedError(`--egress-selector-config-file: egress selection "${cls}": the GRPC proxy protocol (konnectivity) is not supported by orch; use HTTPConnect over the same socket`)
    }
  }
  return {
    dispatcher (cls, tls = {}) {
      const c = settings[cls]
      if (c === undefined || c.proxyProtocol === 'Direct') return new Agent({ connect: tls, connectTimeout: tls.timeout })
      if (c.proxyProtocol === 'HTTPConnect') return proxied(c, tls)
      throw new EgressUnsupportedError(`egress selection "${cls}": unsupported proxy protocol`)
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
