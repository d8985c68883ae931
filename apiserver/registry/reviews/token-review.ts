// TokenReview (authentication.orch.io/v1): whether a bearer token authenticates, and as whom, as kube-apiserver's TokenReview REST.

import { badRequest } from '../../errors/status-error.js'
import { AuthenticationError, type AuthResult, type UserInfo } from '../../auth/types.js'
import type { Obj } from '../object-meta.js'
import { emptyMeta, type Review } from './virtual-resource.js'

/** The one method a TokenReview needs of the API server's authenticator (auth/authenticator.ts). */
export interface TokenReviewAuthenticator {
  /** Throws AuthenticationError when no authenticator takes the token (the message becomes status.error). */
  authenticateToken(token: string, audiences?: string[]): Promise<AuthResult>
}

export interface TokenReviewOptions {
  /** Absent: every review answers unauthenticated, as kube-apiserver without an authenticator does. */
  authenticator?: TokenReviewAuthenticator
  /** --api-audiences: used when the review names none. */
  apiAudiences: string[]
}

/** status.user as authentication/v1 UserInfo (empty uid and extra left out, as Go's omitempty does). */
export function userInfoOf (user: UserInfo): Obj {
  const out: Obj = { username: user.username }
  if (user.uid !== undefined && user.uid !== '') out.uid = user.uid
  out.groups = [...user.groups]
  if (user.extra !== undefined && Object.keys(user.extra).length > 0) out.extra = structuredClone(user.extra)
  return out
}

function stringList (v: unknown): string[] {
  return Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : []
}

/**
 * Authenticates spec.token for spec.audiences (default: the API audiences). Tokens of audience-agnostic
 * authenticators (static token file) carry no audiences of their own: they are good only for the API audiences
 * requested, as kube-apiserver's audience-agnostic wrapper decides.
 */
export function tokenReview (o: TokenReviewOptions): Review {
  return async (_ctx, _namespace, obj) => {
    const spec = (obj.spec ?? {}) as Obj
    if (typeof spec.token !== 'string' || spec.token === '') throw badRequest('token is required for TokenReview in authentication')
    if (o.authenticator === undefined) return obj
    const requested = stringList(spec.audiences)
    const audiences = requested.length > 0 ? requested : o.apiAudiences
    let result: AuthResult
    try {
      result = await o.authenticator.authenticateToken(spec.token, audiences)
    } catch (err) {
      if (!(err instanceof AuthenticationError)) throw err
      return { ...obj, status: { user: {}, error: err.message } }
    }
    const granted = result.audiences ?? o.apiAudiences.filter(a => audiences.includes(a))
    if (audiences.length > 0 && !granted.some(a => audiences.includes(a))) {
      // kube-apiserver answers a bare review here, without the spec it was sent.
      return { metadata: emptyMeta(), spec: {}, status: { user: {}, error: "token audiences don't match" } }
    }
    const status: Obj = { authenticated: true, user: userInfoOf(result.user) }
    if (granted.length > 0) status.audiences = granted.filter(a => audiences.length === 0 || audiences.includes(a))
    return { ...obj, status }
  }
}
