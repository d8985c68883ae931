// The impersonation step (kubectl --as / --as-group): Impersonate-* headers, each checked with the `impersonate` verb.

import type { IncomingMessage } from 'node:http'
import { StatusError, badRequest } from '../errors/status-error.js'
import { ANONYMOUS, AUTHENTICATED, UNAUTHENTICATED, resourceAttributes, type Attributes, type Authorizer, type UserInfo } from '../auth/types.js'
import { forbiddenError } from './authorization.js'
import type { RequestHandler } from './request-limits.js'

const EXTRA_PREFIX = 'impersonate-extra-'
const SA_PREFIX = 'system:serviceaccount:'

function headerValues (req: IncomingMessage, name: string): string[] {
  const out: string[] = []
  const raw = req.rawHeaders
  for (let i = 0; i < raw.length; i += 2) if (raw[i].toLowerCase() === name) out.push(raw[i + 1])
  return out
}

interface Requested { username?: string; uid?: string; groups: string[]; extra: Record<string, string[]> }

function requested (req: IncomingMessage): Requested | undefined {
  const users = headerValues(req, 'impersonate-user')
  const uids = headerValues(req, 'impersonate-uid')
  const groups = headerValues(req, 'impersonate-group')
  const extra: Record<string, string[]> = {}
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i].toLowerCase()
    if (!name.startsWith(EXTRA_PREFIX)) continue
    // Extra keys travel percent-encoded (kubectl encodes `/` and other characters a header name may not hold).
    let key = name.slice(EXTRA_PREFIX.length)
    try { key = decodeURIComponent(key) } catch { throw badRequest(`invalid impersonation extra key ${key}`) }
    ;(extra[key] ??= []).push(req.rawHeaders[i + 1])
  }
  if (users.length === 0) {
    if (uids.length > 0 || groups.length > 0 || Object.keys(extra).length > 0) {
      throw new StatusError(500, 'InternalError', `Internal error occurred: requested [${[...groups.map(g => `Group=${g}`), ...uids.map(u => `UID=${u}`)].join(' ')}] without impersonating a user`)
    }
    return undefined
  }
  return { username: users[0], uid: uids[0], groups, extra }
}

/** The `impersonate` checks kube-apiserver makes, one per requested identity part. */
function checks (who: UserInfo, r: Requested): Attributes[] {
  const out: Attributes[] = []
  const username = r.username ?? ''
  if (username.startsWith(SA_PREFIX) && username.split(':').length === 4) {
    const [, , namespace, name] = username.split(':')
    out.push(resourceAttributes(who, { verb: 'impersonate', resource: 'serviceaccounts', namespace, name }))
  } else {
    out.push(resourceAttributes(who, { verb: 'impersonate', resource: 'users', name: username }))
  }
  for (const g of r.groups) out.push(resourceAttributes(who, { verb: 'impersonate', resource: 'groups', name: g }))
  if (r.uid !== undefined) out.push(resourceAttributes(who, { verb: 'impersonate', apiGroup: 'authentication.orch.io', resource: 'uids', name: r.uid }))
  for (const [key, values] of Object.entries(r.extra)) {
    for (const v of values) out.push(resourceAttributes(who, { verb: 'impersonate', apiGroup: 'authentication.orch.io', resource: 'userextras', subresource: key, name: v }))
  }
  return out
}

/** The impersonated user, with the groups kube-apiserver adds (service-account groups, authenticated/unauthenticated). */
function impersonatedUser (r: Requested): UserInfo {
  const username = r.username ?? ''
  const groups = [...r.groups]
  if (username.startsWith(SA_PREFIX) && username.split(':').length === 4) {
    const ns = username.split(':')[2]
    for (const g of ['system:serviceaccounts', `system:serviceaccounts:${ns}`]) if (!groups.includes(g)) groups.push(g)
  }
  const implicit = username === ANONYMOUS ? UNAUTHENTICATED : AUTHENTICATED
  if (!groups.includes(implicit)) groups.push(implicit)
  const user: UserInfo = { username, groups }
  if (r.uid !== undefined) user.uid = r.uid
  if (Object.keys(r.extra).length > 0) user.extra = r.extra
  return user
}

/** Replaces `target.user` with the impersonated user when every part of it is allowed; otherwise 403. */
export function withImpersonation (authorizer: Authorizer, next: RequestHandler): RequestHandler {
  return async (req, res, target) => {
    const r = requested(req)
    if (r !== undefined) {
      if (target.user === undefined) throw new Error('withImpersonation needs an authenticated user')
      for (const attrs of checks(target.user, r)) {
        const d = await authorizer.authorize(attrs)
        if (d.decision !== 'allow') throw forbiddenError(attrs, d.reason)
      }
      target.user = impersonatedUser(r)
    }
    await next(req, res, target)
  }
}
