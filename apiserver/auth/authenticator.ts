// The API server's authenticator: client certificate, then bearer token, then anonymous (when allowed), as kube-apiserver.

import type { IncomingMessage } from 'node:http'
import { ANONYMOUS, AUTHENTICATED, AuthenticationError, UNAUTHENTICATED, type AuthResult, type RequestAuthenticator, type TokenAuthenticator, type UserInfo } from './types.js'

export interface AuthenticatorOptions {
  /** Client certificates (x509Authenticator) and any other request authenticators, tried first, in order. */
  request: RequestAuthenticator[]
  /** Bearer-token authenticators, tried in order until one accepts the token. */
  tokens: TokenAuthenticator[]
  /** --api-audiences: tokens must be meant for one of them. */
  apiAudiences: string[]
  /** --anonymous-auth: a request without credentials is system:anonymous (else 401). */
  anonymous: boolean
}

export interface Authenticator {
  /** The request's user; throws AuthenticationError (answered 401) for bad or (without anonymous) missing credentials. */
  authenticate(req: IncomingMessage): Promise<AuthResult>
  /** A bearer token alone (TokenReview): undefined when no authenticator takes it. */
  authenticateToken(token: string, audiences?: string[]): Promise<AuthResult>
}

/** kube-apiserver's AuthenticatedGroupAdder: every authenticated user is in system:authenticated. */
function withAuthenticatedGroup (user: UserInfo): UserInfo {
  if (user.username === ANONYMOUS || user.groups.includes(AUTHENTICATED) || user.groups.includes(UNAUTHENTICATED)) return user
  return { ...user, groups: [...user.groups, AUTHENTICATED] }
}

export function bearerToken (req: IncomingMessage): string | undefined {
  const h = req.headers.authorization
  if (typeof h !== 'string') return undefined
  const m = /^Bearer\s+(\S*)\s*$/i.exec(h)
  if (m === null || m[1] === '') return undefined
  return m[1]
}

export const anonymousUser = (): UserInfo => ({ username: ANONYMOUS, groups: [UNAUTHENTICATED] })

export function createAuthenticator (o: AuthenticatorOptions): Authenticator {
  async function byToken (token: string, audiences: string[]): Promise<AuthResult> {
    const errors: string[] = []
    for (const a of o.tokens) {
      try {
        const r = await a.authenticateToken(token, audiences)
        if (r !== undefined) return { ...r, user: withAuthenticatedGroup(r.user) }
      } catch (err) {
        if (!(err instanceof AuthenticationError)) throw err
        errors.push(err.message)
      }
    }
    throw new AuthenticationError(errors.length > 0 ? errors.join(', ') : 'invalid bearer token')
  }

  return {
    async authenticate (req) {
      const errors: string[] = []
      for (const a of o.request) {
        try {
          const r = await a.authenticate(req)
          if (r !== undefined) return { ...r, user: withAuthenticatedGroup(r.user) }
        } catch (err) {
          if (!(err instanceof AuthenticationError)) throw err
          errors.push(err.message)
        }
      }
      const token = bearerToken(req)
      if (token !== undefined) {
        try { return await byToken(token, o.apiAudiences) } catch (err) {
          if (!(err instanceof AuthenticationError)) throw err
          errors.push(err.message)
        }
      }
      if (errors.length > 0) throw new AuthenticationError(errors.join(', '))
      if (!o.anonymous) throw new AuthenticationError('no credentials were presented and anonymous access is off')
      return { user: anonymousUser() }
    },
    authenticateToken: async (token, audiences) => await byToken(token, audiences ?? o.apiAudiences)
  }
}
