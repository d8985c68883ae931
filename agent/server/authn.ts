// Who is calling the orchlet's server: client certificate, bearer token via TokenReview, or anonymous.

import type { IncomingMessage } from 'node:http'
import type { TLSSocket } from 'node:tls'
import type { ApiClient } from '../../apiserver/client/rest-client.js'
import { createTtlCache } from './ttl-cache.js'

export interface User { name: string; uid?: string; groups: string[]; extra?: Record<string, string[]> }

export interface AuthnOptions {
  anonymous: boolean
  /** Set when --client-ca-file is given; the TLS server then asks for (and verifies) client certificates. */
  clientCertificates: boolean
  /** --authentication-token-webhook: bearer tokens are checked with a TokenReview. */
  tokenWebhook?: { client: ApiClient; cacheTtlMs: number }
  now: () => number
}

/** Resolves the caller, or null when no method accepted it (answer 401). */
export type Authenticator = (req: IncomingMessage) => Promise<User | null>

const ANONYMOUS: User = { name: 'system:anonymous', groups: ['system:unauthenticated'] }

function fromCertificate (req: IncomingMessage): User | null {
  const socket = req.socket as TLSSocket
  if (typeof socket.getPeerCertificate !== 'function' || !socket.authorized) return null
  const cert = socket.getPeerCertificate()
  if (cert === undefined || cert.subject === undefined) return null
  const cn = cert.subject.CN
  if (typeof cn !== 'string' || cn === '') return null
  const org = cert.subject.O as string | string[] | undefined
  const groups = org === undefined ? [] : Array.isArray(org) ? org : [org]
  return { name: cn, groups: [...groups, 'system:authenticated'] }
}

export function createAuthenticator (o: AuthnOptions): Authenticator {
  const tokenCache = createTtlCache<User | null>(o.now)

  async function reviewToken (token: string): Promise<User | null> {
    const webhook = o.tokenWebhook
    if (webhook === undefined) return null
    const cached = tokenCache.get(token)
    if (cached !== undefined) return cached
    const review = await webhook.client.create('/apis/authentication.orch.io/v1/tokenreviews', {
      apiVersion: 'authentication.orch.io/v1', kind: 'TokenReview', spec: { token }
    }, { exempt: true })
    const status = review.status as { authenticated?: boolean; user?: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> } } | undefined
    const user = status?.authenticated === true && typeof status.user?.username === 'string'
      ? { name: status.user.username, uid: status.user.uid, groups: status.user.groups ?? [], extra: status.user.extra }
      : null
    tokenCache.set(token, user, webhook.cacheTtlMs)
    return user
  }

  return async (req) => {
    if (o.clientCertificates) {
      const user = fromCertificate(req)
      if (user !== null) return user
    }
    const header = req.headers.authorization
    if (typeof header === 'string' && /^bearer /i.test(header)) {
      const user = await reviewToken(header.slice(7).trim())
      if (user !== null) return user
      return null
    }
    return o.anonymous ? ANONYMOUS : null
  }
}
