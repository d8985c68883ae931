// Bootstrap tokens (`abcdef.0123456789abcdef`): the Secrets of type bootstrap.kubernetes.io/token in kube-system
// that back them, and the bearer-token authenticator that accepts them as system:bootstrap:<id>, as kube-apiserver's
// --enable-bootstrap-token-auth does. Kubernetes' names are kept: kubeadm-style tooling and RBAC bindings use them.

import { timingSafeEqual } from 'node:crypto'
import type { AuthResult, TokenAuthenticator } from './types.js'
import type { Registry } from '../registry/types.js'
import { internalContext } from '../registry/internal-context.js'

export const BOOTSTRAP_TOKEN_NAMESPACE = 'kube-system'
export const BOOTSTRAP_TOKEN_SECRET_TYPE = 'bootstrap.kubernetes.io/token'
export const BOOTSTRAP_TOKEN_SECRET_PREFIX = 'bootstrap-token-'
export const BOOTSTRAP_USER_PREFIX = 'system:bootstrap:'
export const BOOTSTRAPPERS_GROUP = 'system:bootstrappers'

const TOKEN = /^([a-z0-9]{6})\.([a-z0-9]{16})$/
export const BOOTSTRAP_GROUP_PATTERN = '\\Asystem:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]\\z'
const GROUP = /^system:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]$/

type Secret = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any

/** Reads a Secret of kube-system by name; undefined when there is none. */
export type SecretLookup = (name: string) => Promise<Secret | undefined>

/** `[id, secret]` of a well-formed token, else undefined. */
export function parseBootstrapToken (token: string): [string, string] | undefined {
  const m = TOKEN.exec(token)
  return m === null ? undefined : [m[1], m[2]]
}

/** A Secret's data value (base64 in the object) as text; '' when absent. */
export function secretData (secret: Secret, key: string): string {
  const v = secret.data?.[key]
  return typeof v === 'string' ? Buffer.from(v, 'base64').toString('utf8') : ''
}

/** Whether the token's `expiration` has passed at `now` (an unparsable one counts as passed); ms left otherwise. */
export function tokenExpiry (secret: Secret, now: number): { expired: boolean, remainingMs?: number } {
  const text = secretData(secret, 'expiration')
  if (text === '') return { expired: false }
  const at = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(text) ? Date.parse(text) : NaN
  if (Number.isNaN(at) || at - now <= 0) return { expired: true }
  return { expired: false, remainingMs: at - now }
}

/** system:bootstrappers plus the valid `auth-extra-groups`, sorted; throws naming an invalid group. */
export function tokenGroups (secret: Secret): string[] {
  const groups = new Set([BOOTSTRAPPERS_GROUP])
  const extra = secretData(secret, 'auth-extra-groups')
  if (extra !== '') {
    for (const g of extra.split(',')) {
      if (!GROUP.test(g)) throw new Error(`bootstrap group ${JSON.stringify(g)} is invalid (must match ${BOOTSTRAP_GROUP_PATTERN})`)
      groups.add(g)
    }
  }
  return [...groups].sort()
}

const sameText = (a: string, b: string): boolean => {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}

/**
 * Accepts a token whose Secret exists (not being deleted), has the bootstrap type, the same id and secret, has not
 * expired and is marked usage-bootstrap-authentication=true. Anything else is "not a token of ours" (undefined), so
 * the request ends 401 as with any unknown token; the reason is logged through `onRejected`.
 */
export function bootstrapTokenAuthenticator (secrets: SecretLookup, now: () => number = Date.now,
  onRejected: (why: string) => void = () => {}): TokenAuthenticator {
  return {
    async authenticateToken (token): Promise<AuthResult | undefined> {
      const parsed = parseBootstrapToken(token)
      if (parsed === undefined) return undefined
      const [id, tokenSecret] = parsed
      const name = BOOTSTRAP_TOKEN_SECRET_PREFIX + id
      const secret = await secrets(name)
      const reject = (why: string): undefined => { onRejected(`Bootstrap secret ${BOOTSTRAP_TOKEN_NAMESPACE}/${name} ${why}`); return undefined }
      if (secret === undefined) return undefined
      if (secret.metadata?.deletionTimestamp !== undefined) return reject('is deleted and awaiting removal')
      if (secret.type !== BOOTSTRAP_TOKEN_SECRET_TYPE || secret.data === undefined) return reject(`has invalid type, expected ${BOOTSTRAP_TOKEN_SECRET_TYPE}.`)
      if (!sameText(secretData(secret, 'token-secret'), tokenSecret)) return reject('has invalid value for key token-secret.')
      if (secretData(secret, 'token-id') !== id) return reject('has invalid value for key token-id.')
      if (tokenExpiry(secret, now()).expired) return reject('has expired.')
      if (secretData(secret, 'usage-bootstrap-authentication') !== 'true') return reject('not marked usage-bootstrap-authentication=true.')
      let groups: string[]
      try { groups = tokenGroups(secret) } catch (err) { return reject(`has invalid value for key auth-extra-groups: ${(err as Error).message}.`) }
      return { user: { username: BOOTSTRAP_USER_PREFIX + id, groups } }
    }
  }
}

/** Secrets of kube-system read straight from the registry (the API server's own lookup). */
export function registrySecretLookup (registry: Registry): SecretLookup {
  const ctx = internalContext('system:apiserver')
  return async name => {
    const h = registry.handler('', 'v1', 'secrets')
    if (h === undefined) return undefined
    try {
      const got = await h.get(ctx, BOOTSTRAP_TOKEN_NAMESPACE, name, {})
      return JSON.parse((Buffer.isBuffer(got) ? got : got.bytes).toString('utf8')) as Secret
    } catch (err) {
      if ((err as { code?: number }).code === 404) return undefined
      throw err
    }
  }
}
