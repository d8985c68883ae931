// One JWT authenticator (a TokenAuthenticator): a token of its issuer verified, validated and mapped to a user.
//
// Contract: a token whose unverified `iss` is not this issuer's URL is not this authenticator's (undefined), so
// several authenticators can be chained; a token of this issuer that fails any check throws AuthenticationError
// with Kubernetes' wording (`oidc: verify token: ...`, `oidc: error evaluating ...`).

import { AuthenticationError, type AuthResult, type TokenAuthenticator, type UserInfo } from '../types.js'
import type { JWTAuthenticator } from './config.js'
import { checkRules, stringList, type JwtExpressions } from './cel.js'
import type { IssuerKeys } from './keys.js'
import type { PooledProgram } from '../../../sandbox/expression-evaluator.js'

export interface JwtAuthenticatorOptions {
  config: JWTAuthenticator
  expressions: JwtExpressions
  keys: IssuerKeys
  /** Accepted `alg` values (default: every asymmetric algorithm of SIGNING_ALGORITHMS). */
  algorithms: string[]
  /** Tolerance for `exp` (default 10 s) and `nbf` (default 60 s, as go-oidc), in seconds. */
  expiryLeewaySeconds?: number
  notBeforeLeewaySeconds?: number
  now?: () => number
}

export interface JwtAuthenticator extends TokenAuthenticator {
  readonly issuer: string
  /** Fetches discovery and keys now; rejects when the issuer cannot be reached. */
  prefetch(): Promise<void>
  close(): Promise<void>
}

type Claims = Record<string, unknown>

/** The token's claims read without verification (to pick the authenticator by issuer), or undefined. */
export function unverifiedClaims (token: string): Claims | undefined {
  const parts = token.split('.')
  if (parts.length !== 3) return undefined
  try {
    const v = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8')) as unknown
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? v as Claims : undefined
  } catch {
    return undefined
  }
}

const rfc3339 = (seconds: number): string => new Date(seconds * 1000).toISOString().replace(/\.000Z$/, 'Z')
const goQuoted = (list: string[]): string => `[${list.map(s => JSON.stringify(s)).join(' ')}]`

function checkTimesAndAudience (c: Claims, audiences: string[], nowSeconds: number, expLeeway: number, nbfLeeway: number): void {
  const aud = typeof c.aud === 'string' ? [c.aud] : Array.isArray(c.aud) ? c.aud.filter((a): a is string => typeof a === 'string') : []
  if (!aud.some(a => audiences.includes(a))) throw new Error(`oidc: expected audience in ${goQuoted([...audiences].sort())} got ${goQuoted(aud)}`)
  const exp = typeof c.exp === 'number' ? c.exp : 0
  if (exp + expLeeway < nowSeconds) throw new Error(`oidc: token is expired (Token Expiry: ${rfc3339(exp)})`)
  if (typeof c.nbf === 'number' && nowSeconds + nbfLeeway < c.nbf) {
    throw new Error(`oidc: current time ${rfc3339(nowSeconds)} before the nbf (not before) time: ${rfc3339(c.nbf)}`)
  }
}

/** A claim that must be a string (username, uid by claim); go-oidc's wording when it is missing or not one. */
function stringClaim (c: Claims, name: string, what: string): string {
  if (!Object.hasOwn(c, name)) throw new Error(`oidc: parse ${what} ${JSON.stringify(name)}: claim not present`)
  const v = c[name]
  if (typeof v !== 'string') throw new Error(`oidc: parse ${what} ${JSON.stringify(name)}: json: cannot unmarshal ${Array.isArray(v) ? 'array' : typeof v} into Go value of type string`)
  return v
}

export function createJwtAuthenticator (o: JwtAuthenticatorOptions): JwtAuthenticator {
  const { config, expressions: x } = o
  const now = o.now ?? Date.now
  const expLeeway = o.expiryLeewaySeconds ?? 10
  const nbfLeeway = o.notBeforeLeewaySeconds ?? 60

  async function username (c: Claims): Promise<string> {
    if (x.username !== undefined) {
      const v = await evaluate('username claim expression', x.username, c)
      if (typeof v !== 'string') throw new Error('oidc: error evaluating username claim expression: username claim expression must return a string')
      return v
    }
    const claim = config.claimMappings.username.claim ?? ''
    const name = stringClaim(c, claim, 'username claims')
    if (claim === 'email' && Object.hasOwn(c, 'email_verified')) {
      if (typeof c.email_verified !== 'boolean') throw new Error("oidc: parse 'email_verified' claim: json: cannot unmarshal into Go value of type bool")
      if (!c.email_verified) throw new Error('oidc: email not verified')
    }
    return (config.claimMappings.username.prefix ?? '') + name
  }

  async function groups (c: Claims): Promise<string[]> {
    const claim = config.claimMappings.groups?.claim ?? ''
    if (claim !== '' && Object.hasOwn(c, claim)) {
      const v = c[claim]
      let list: string[]
      if (typeof v === 'string') list = [v]
      else if (Array.isArray(v) && v.every(g => typeof g === 'string')) list = v
      else throw new Error(`oidc: parse groups claim ${JSON.stringify(claim)}: json: cannot unmarshal into Go value of type string`)
      const prefix = config.claimMappings.groups?.prefix ?? ''
      return list.map(g => prefix + g)
    }
    if (x.groups === undefined) return []
    const v = await evaluate('group claim expression', x.groups, c)
    try { return stringList(v) } catch (err) { throw new Error(`oidc: error evaluating group claim expression: ${(err as Error).message}`) }
  }

  async function uid (c: Claims): Promise<string> {
    const claim = config.claimMappings.uid?.claim ?? ''
    if (claim !== '') return stringClaim(c, claim, 'uid claim')
    if (x.uid === undefined) return ''
    const v = await evaluate('uid claim expression', x.uid, c)
    if (typeof v !== 'string') throw new Error('oidc: error evaluating uid claim expression: uid claim expression must return a string')
    return v
  }

  async function extra (c: Claims): Promise<Record<string, string[]>> {
    const out: Record<string, string[]> = {}
    for (const { key, program } of x.extra) {
      const v = await evaluate('extra claim expression', program, c)
      let values: string[]
      try { values = stringList(v) } catch (err) { throw new Error(`oidc: error evaluating extra claim expression: ${program.expression}: ${(err as Error).message}`) }
      if (values.length > 0) out[key] = values
    }
    return out
  }

  async function evaluate (what: string, p: PooledProgram, claims: Claims): Promise<unknown> {
    try { return (await p.evaluate({ claims })).value } catch (err) { throw new Error(`oidc: error evaluating ${what}: ${(err as Error).message}`) }
  }

  function requiredClaims (c: Claims): void {
    for (const r of config.claimValidationRules ?? []) {
      if ((r.claim ?? '') === '') continue
      const claim = r.claim!
      if (!Object.hasOwn(c, claim)) throw new Error(`oidc: required claim ${claim} not present in ID token`)
      const v = c[claim]
      if (typeof v !== 'string') throw new Error(`oidc: parse claim ${claim}: json: cannot unmarshal ${typeof v} into Go value of type string`)
      const want = r.requiredValue ?? ''
      if (v !== want) throw new Error(`oidc: required claim ${claim} value does not match. Got = ${v}, want = ${want}`)
    }
  }

  async function mapUser (c: Claims): Promise<UserInfo> {
    const user: UserInfo = { username: await username(c), groups: await groups(c) }
    const id = await uid(c)
    if (id !== '') user.uid = id
    const ex = await extra(c)
    if (Object.keys(ex).length > 0) user.extra = ex
    requiredClaims(c)
    try { await checkRules(x.claimValidation, { claims: c }) } catch (err) { throw new Error(`oidc: error evaluating claim validation expression: ${(err as Error).message}`) }
    const userVar = { username: user.username, uid: user.uid ?? '', groups: user.groups, extra: user.extra ?? {} }
    try { await checkRules(x.userValidation, { user: userVar }) } catch (err) { throw new Error(`oidc: error evaluating user info validation rule: ${(err as Error).message}`) }
    return user
  }

  return {
    issuer: config.issuer.url,
    async authenticateToken (token, audiences): Promise<AuthResult | undefined> {
      const unverified = unverifiedClaims(token)
      if (unverified === undefined || unverified.iss !== config.issuer.url) return undefined
      try {
        let claims: Claims
        try {
          const payload = await o.keys.verify(token, o.algorithms)
          claims = JSON.parse(Buffer.from(payload).toString('utf8')) as Claims
          checkTimesAndAudience(claims, config.issuer.audiences, Math.floor(now() / 1000), expLeeway, nbfLeeway)
        } catch (err) {
          throw new Error(`oidc: verify token: ${(err as Error).message}`)
        }
        return { user: await mapUser(claims), audiences }
      } catch (err) {
        throw new AuthenticationError((err as Error).message)
      }
    },
    prefetch: async () => await o.keys.refresh(),
    close: async () => { x.release(); await o.keys.close() }
  }
}
