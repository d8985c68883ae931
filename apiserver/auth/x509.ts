// Client-certificate authentication: a certificate verified against the client CAs names the user (CN) and groups (O).

import type { TLSSocket } from 'node:tls'
import type { IncomingMessage } from 'node:http'
import { AuthenticationError, type RequestAuthenticator } from './types.js'

const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2'
const ANY_USAGE = '2.5.29.37.0'

function values (v: string | string[] | undefined): string[] {
  if (v === undefined) return []
  return Array.isArray(v) ? v : [v]
}

/** What a connection's certificate authenticates as: a user, nobody (no certificate), or a refusal. */
type Outcome = { user: { username: string, groups: string[] } } | undefined | AuthenticationError

/**
 * The TLS server already verified the chain against the client CAs (`socket.authorized`); a certificate that
 * failed that, or that is not meant for client authentication, is refused (401), as kube-apiserver does.
 * The outcome is kept per TLS 1.3 connection (1.3 has no renegotiation, so the peer certificate cannot change):
 * `getPeerCertificate` builds an object with three fingerprints on every call, the largest cost of a small request.
 */
export function x509Authenticator (): RequestAuthenticator {
  const byConnection = new WeakMap<object, Outcome>()
  return {
    async authenticate (req: IncomingMessage) {
      const socket = req.socket as Partial<TLSSocket>
      if (typeof socket.getPeerCertificate !== 'function') return undefined
      const cacheable = socket.getProtocol?.() === 'TLSv1.3'
      let outcome: Outcome
      if (cacheable && byConnection.has(socket)) outcome = byConnection.get(socket)
      else {
        outcome = judge(socket)
        if (cacheable) byConnection.set(socket, outcome)
      }
      if (outcome instanceof AuthenticationError) throw new AuthenticationError(outcome.message)
      return outcome === undefined ? undefined : { user: { ...outcome.user, groups: [...outcome.user.groups] } }
    }
  }
}

function judge (socket: Partial<TLSSocket>): Outcome {
  const cert = socket.getPeerCertificate!()
  if (cert === null || cert === undefined || Object.keys(cert).length === 0) return undefined
  if (socket.authorized !== true) {
    return new AuthenticationError(`verifying certificate SN=${cert.serialNumber}, SKID=, AKID= failed: x509: ${String(socket.authorizationError ?? 'certificate signed by unknown authority')}`)
  }
  const usages = (cert as { ext_key_usage?: string[] }).ext_key_usage
  if (usages !== undefined && !usages.includes(CLIENT_AUTH) && !usages.includes(ANY_USAGE)) {
    return new AuthenticationError('x509: certificate specifies an incompatible key usage')
  }
  const username = values(cert.subject?.CN)[0] ?? ''
  if (username === '') return new AuthenticationError('x509: the client certificate has no common name')
  return { user: { username, groups: values(cert.subject?.O) } }
}
