// An issuer's signing keys: OIDC discovery and the JWKS fetched through undici, cached, refreshed when a token's key is unknown.
//
// Contract: verify() checks a compact JWS against the cached keys; when none matches (an unknown `kid`, a rotated
// key) the set is fetched again, at most once per minRefreshIntervalMs, and the check repeated once. Discovery
// runs on first need and again after a failure (same rate limit): an issuer that is down at start is picked up
// later without a restart.

import { Agent, request } from '../../client/undici-core.js'
import type { Dispatcher } from 'undici'
import type { JWK, KeyLike } from 'jose'
import { boundedText } from '../bounded-body.js'

/** Largest discovery document or key set read (1 MiB). */
const MAX_ANSWER_BYTES = 1 << 20

/** The asymmetric algorithms accepted with an AuthenticationConfiguration (Kubernetes' list). */
export const SIGNING_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'ES256', 'ES384', 'ES512', 'PS256', 'PS384', 'PS512']

export interface IssuerKeysOptions {
  issuerUrl: string
  /** PEM CA certificates for the discovery and JWKS endpoints (system roots when unset). */
  certificateAuthority?: string
  /** Least time between two fetches of the key set (default 10 s). */
  minRefreshIntervalMs?: number
  /** Longest wait for one HTTP exchange (default 10 s). */
  timeoutMs?: number
  now?: () => number
}

export interface IssuerKeys {
  /** The verified payload bytes; throws Error (worded as go-oidc's) when no key verifies the signature. */
  verify(token: string, algorithms: string[]): Promise<Uint8Array>
  /** Fetches discovery and keys now (start-up, tests); rejects with the reason when the issuer cannot be reached. */
  refresh(): Promise<void>
  /** How many times the key set was fetched (observability, tests). */
  fetches(): number
  close(): Promise<void>
}

interface Loaded { jwks: JWK[]; at: number }

const KTY: Record<string, string> = { RS: 'RSA', PS: 'RSA', ES: 'EC' }
const CURVE: Record<string, string> = { ES256: 'P-256', ES384: 'P-384', ES512: 'P-521' }

function candidates (jwks: JWK[], alg: string, kid: unknown): JWK[] {
  const kty = KTY[alg.slice(0, 2)]
  return jwks.filter(k => k.kty === kty &&
    (typeof kid !== 'string' || k.kid === kid) &&
    (typeof k.alg !== 'string' || k.alg === alg) &&
    (typeof k.use !== 'string' || k.use === 'sig') &&
    (CURVE[alg] === undefined || k.crv === CURVE[alg]))
}

function protectedHeader (token: string): { alg?: unknown; kid?: unknown } {
  const part = token.split('.')[0] ?? ''
  try { return JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as { alg?: unknown; kid?: unknown } } catch { return {} }
}

export function createIssuerKeys (o: IssuerKeysOptions): IssuerKeys {
  const now = o.now ?? Date.now
  const minInterval = o.minRefreshIntervalMs ?? 10_000
  const timeoutMs = o.timeoutMs ?? 10_000
  const agent: Dispatcher = new Agent({ connect: o.certificateAuthority !== undefined && o.certificateAuthority !== '' ? { ca: o.certificateAuthority } : {} })
  const imported = new WeakMap<JWK, Map<string, KeyLike | Uint8Array>>()
  // jose is loaded with the first token checked (an API server without OIDC issuers never loads it).
  let jose: Promise<typeof import('jose')> | undefined
  const lib = async (): Promise<typeof import('jose')> => await (jose ??= import('jose'))
  let loaded: Loaded | undefined
  let loading: Promise<Loaded> | undefined
  let lastAttempt = -Infinity
  let fetchCount = 0

  async function getJson (url: string, what: string): Promise<Record<string, unknown>> {
    const res = await request(url, { dispatcher: agent, headersTimeout: timeoutMs, bodyTimeout: timeoutMs, signal: AbortSignal.timeout(timeoutMs), headers: { accept: 'application/json' } })
    const text = await boundedText(res.body, MAX_ANSWER_BYTES)
    if (res.statusCode !== 200) throw new Error(`${what}: ${res.statusCode}: ${text.slice(0, 200)}`)
    try {
      const v = JSON.parse(text) as unknown
      if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new Error('not an object')
      return v as Record<string, unknown>
    } catch (err) {
      throw new Error(`${what}: failed to decode: ${(err as Error).message}`)
    }
  }

  async function fetchKeys (): Promise<Loaded> {
    lastAttempt = now()
    const wellKnown = o.issuerUrl.replace(/\/+$/, '') + '/.well-known/openid-configuration'
    const discovery = await getJson(wellKnown, 'oidc: failed to query provider discovery')
    if (discovery.issuer !== o.issuerUrl) {
      throw new Error(`oidc: issuer did not match the issuer returned by provider, expected ${JSON.stringify(o.issuerUrl)} got ${JSON.stringify(discovery.issuer)}`)
    }
    if (typeof discovery.jwks_uri !== 'string' || discovery.jwks_uri === '') throw new Error('oidc: provider discovery has no jwks_uri')
    fetchCount++
    const set = await getJson(discovery.jwks_uri, 'oidc: get keys failed')
    if (!Array.isArray(set.keys)) throw new Error('oidc: failed to decode keys: no "keys" list')
    loaded = { jwks: (set.keys as unknown[]).filter((k): k is JWK => k !== null && typeof k === 'object'), at: now() }
    return loaded
  }

  /** One fetch at a time; a further one only after the rate limit's interval. */
  async function refreshIfAllowed (): Promise<Loaded | undefined> {
    if (loading !== undefined) return await loading
    if (now() - lastAttempt < minInterval) return undefined
    loading = fetchKeys()
    try { return await loading } finally { loading = undefined }
  }

  async function keyFor (jwk: JWK, alg: string): Promise<KeyLike | Uint8Array> {
    let byAlg = imported.get(jwk)
    if (byAlg === undefined) imported.set(jwk, (byAlg = new Map()))
    let key = byAlg.get(alg)
    if (key === undefined) byAlg.set(alg, (key = await (await lib()).importJWK(jwk, alg)))
    return key
  }

  async function tryKeys (set: Loaded, token: string, algorithms: string[], alg: string, kid: unknown): Promise<Uint8Array | undefined> {
    for (const jwk of candidates(set.jwks, alg, kid)) {
      try {
        return (await (await lib()).compactVerify(token, await keyFor(jwk, alg), { algorithms })).payload
      } catch { /* the next key may match */ }
    }
    return undefined
  }

  return {
    async verify (token, algorithms) {
      const { alg, kid } = protectedHeader(token)
      if (typeof alg !== 'string' || !algorithms.includes(alg)) {
        throw new Error(`oidc: id token signed with unsupported algorithm, expected ${JSON.stringify(algorithms)} got ${JSON.stringify(alg)}`)
      }
      let set = loaded
      if (set === undefined) {
        try { set = await refreshIfAllowed() } catch (err) { throw new Error(`oidc: authenticator not initialized: ${(err as Error).message}`) }
        if (set === undefined) throw new Error('oidc: authenticator not initialized')
      } else {
        const payload = await tryKeys(set, token, algorithms, alg, kid)
        if (payload !== undefined) return payload
        try { set = await refreshIfAllowed() } catch (err) { throw new Error(`failed to verify signature: fetching keys ${(err as Error).message}`) }
        if (set === undefined) throw new Error('failed to verify signature: failed to verify id token signature')
      }
      const payload = await tryKeys(set, token, algorithms, alg, kid)
      if (payload === undefined) throw new Error('failed to verify signature: failed to verify id token signature')
      return payload
    },
    async refresh () {
      loading ??= fetchKeys()
      try { await loading } finally { loading = undefined }
    },
    fetches: () => fetchCount,
    // Requests still under way are aborted: a hanging issuer must not hold up the server's shutdown.
    async close () { await agent.destroy() }
  }
}
