// Service-account tokens: JWTs the API server signs (TokenRequest) and verifies (--service-account-issuer, --api-audiences).
//
// Claims as Kubernetes' bound tokens, with orch's name for the private claim: `orch.io` holds the namespace,
// the service account (name, uid) and the object the token is bound to (pod or secret). A token stops
// authenticating when its account, or the object it is bound to, is deleted (or replaced: the uid differs).

import { createHash, createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto'
import type { JWTPayload } from 'jose'
import { AuthenticationError, AUTHENTICATED, type AuthResult, type TokenAuthenticator } from './types.js'

export const PRIVATE_CLAIM = 'orch.io'
const LEEWAY_SECONDS = 60

/** Finds an object's uid (undefined when it does not exist); injected so the authenticator needs no registry. */
export type UidLookup = (resource: 'serviceaccounts' | 'pods' | 'secrets', namespace: string, name: string) => Promise<string | undefined>

export interface BoundObject { kind: 'Pod' | 'Secret'; name: string; uid: string }

export interface TokenClaimsRequest {
  namespace: string
  serviceAccount: { name: string; uid: string }
  audiences: string[]
  expirationSeconds: number
  boundObject?: BoundObject
  now: number
}

interface PrivateClaim {
  namespace: string
  serviceaccount: { name: string; uid: string }
  pod?: { name: string; uid: string }
  secret?: { name: string; uid: string }
}

function algorithmOf (key: KeyObject): string {
  if (key.asymmetricKeyType === 'rsa') return 'RS256'
  if (key.asymmetricKeyType === 'ec') {
    const curve = key.asymmetricKeyDetails?.namedCurve
    return curve === 'secp384r1' ? 'ES384' : curve === 'secp521r1' ? 'ES512' : 'ES256'
  }
  throw new Error(`service-account keys must be RSA or ECDSA, not ${String(key.asymmetricKeyType)}`)
}

/** Kubernetes' key id: base64url of the SHA-256 of the public key's DER (SubjectPublicKeyInfo). */
function keyId (publicKey: KeyObject): string {
  return createHash('sha256').update(publicKey.export({ format: 'der', type: 'spki' })).digest('base64url')
}

/** A string list as Go's %q prints it (`["a" "b"]`), for messages worded as Kubernetes'. */
function goQuoted (list: string[]): string {
  return `[${list.map(s => JSON.stringify(s)).join(' ')}]`
}

export function serviceAccountUsername (namespace: string, name: string): string {
  return `system:serviceaccount:${namespace}:${name}`
}

export interface ServiceAccountTokensOptions {
  signingKeyPem: string
  /** Further public keys whose tokens are accepted (--service-account-key-file); the signing key's own is implied. */
  verifyKeyPems: string[]
  /** --service-account-issuer: the first one signs; all are accepted. */
  issuers: string[]
  lookup: UidLookup
  now: () => number
}

export interface ServiceAccountTokens extends TokenAuthenticator {
  issue(r: TokenClaimsRequest): Promise<{ token: string; expiresAt: number }>
}

export function createServiceAccountTokens (o: ServiceAccountTokensOptions): ServiceAccountTokens {
  const signing = createPrivateKey(o.signingKeyPem)
  const signingAlg = algorithmOf(signing)
  const signingKid = keyId(createPublicKey(signing))
  // The signing key always verifies what it signed (kube-apiserver defaults --service-account-key-file to it).
  const verifyKeys = [createPublicKey(signing), ...o.verifyKeyPems.map(pem => createPublicKey(pem))]
    .map(k => ({ key: k, kid: keyId(k), alg: algorithmOf(k) }))
    .filter((k, i, all) => all.findIndex(other => other.kid === k.kid) === i)

  // jose is loaded with the first token issued or checked: an idle server that sees none never needs it.
  let jose: Promise<typeof import('jose')> | undefined
  const lib = async (): Promise<typeof import('jose')> => await (jose ??= import('jose'))

  async function verify (token: string): Promise<JWTPayload> {
    const { decodeProtectedHeader, jwtVerify } = await lib()
    const header = decodeProtectedHeader(token)
    const candidates = verifyKeys.filter(k => header.kid === undefined || header.kid === k.kid)
    for (const k of candidates) {
      if (header.alg !== k.alg) continue
      try {
        // Kubernetes validates the times with go-jose's default leeway of one minute.
        return (await jwtVerify(token, k.key, { algorithms: [k.alg], clockTolerance: LEEWAY_SECONDS, currentDate: new Date(o.now()) })).payload
      } catch (err) {
        const { code, claim } = err as { code?: string; claim?: string }
        if (code === 'ERR_JWT_EXPIRED') throw new AuthenticationError('service account token has expired')
        if (code === 'ERR_JWT_CLAIM_VALIDATION_FAILED' && claim === 'nbf') throw new AuthenticationError('service account token is not valid yet')
        if (code !== 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED') throw new AuthenticationError(`invalid service account token: ${(err as Error).message}`)
      }
    }
    throw new AuthenticationError('invalid bearer token, square/go-jose: error in cryptographic primitive')
  }

  async function checkBound (claim: PrivateClaim): Promise<void> {
    const ns = claim.namespace
    const saUid = await o.lookup('serviceaccounts', ns, claim.serviceaccount.name)
    if (saUid === undefined) throw new AuthenticationError(`service account ${ns}/${claim.serviceaccount.name} has been deleted`)
    if (saUid !== claim.serviceaccount.uid) throw new AuthenticationError(`service account UID (${saUid}) does not match claim (${claim.serviceaccount.uid})`)
    for (const [resource, ref] of [['pods', claim.pod], ['secrets', claim.secret]] as const) {
      if (ref === undefined) continue
      const uid = await o.lookup(resource, ns, ref.name)
      if (uid === undefined) throw new AuthenticationError(`${resource === 'pods' ? 'pod' : 'secret'} ${ns}/${ref.name} has been deleted`)
      if (uid !== ref.uid) throw new AuthenticationError(`${resource === 'pods' ? 'pod' : 'secret'} UID (${uid}) does not match claim (${ref.uid})`)
    }
  }

  return {
    async issue (r) {
      const claim: PrivateClaim = { namespace: r.namespace, serviceaccount: { ...r.serviceAccount } }
      if (r.boundObject?.kind === 'Pod') claim.pod = { name: r.boundObject.name, uid: r.boundObject.uid }
      if (r.boundObject?.kind === 'Secret') claim.secret = { name: r.boundObject.name, uid: r.boundObject.uid }
      const iat = Math.floor(r.now / 1000)
      const exp = iat + r.expirationSeconds
      const { SignJWT } = await lib()
      const token = await new SignJWT({ [PRIVATE_CLAIM]: claim })
        .setProtectedHeader({ alg: signingAlg, kid: signingKid, typ: 'JWT' })
        .setIssuer(o.issuers[0])
        .setSubject(serviceAccountUsername(r.namespace, r.serviceAccount.name))
        .setAudience(r.audiences)
        .setIssuedAt(iat)
        .setNotBefore(iat)
        .setExpirationTime(exp)
        .sign(signing)
      return { token, expiresAt: exp * 1000 }
    },

    async authenticateToken (token, audiences): Promise<AuthResult | undefined> {
      const { decodeJwt } = await lib()
      let unverified: JWTPayload
      try { unverified = decodeJwt(token) } catch { return undefined }
      // Tokens from other issuers are not ours to judge (another authenticator may take them).
      if (typeof unverified.iss !== 'string' || !o.issuers.includes(unverified.iss)) return undefined
      const payload = await verify(token)
      const tokenAudiences = typeof payload.aud === 'string' ? [payload.aud] : payload.aud ?? []
      const accepted = audiences.length === 0 ? tokenAudiences : tokenAudiences.filter(a => audiences.includes(a))
      if (accepted.length === 0) throw new AuthenticationError(`token audiences ${goQuoted(tokenAudiences)} is invalid for the target audiences ${goQuoted(audiences)}`)
      const claim = payload[PRIVATE_CLAIM] as PrivateClaim | undefined
      if (claim === undefined || typeof claim.namespace !== 'string' || typeof claim.serviceaccount?.name !== 'string') {
        throw new AuthenticationError('service account token claims are missing')
      }
      await checkBound(claim)
      const ns = claim.namespace
      const extra: Record<string, string[]> = {}
      if (claim.pod !== undefined) {
        extra['authentication.orch.io/pod-name'] = [claim.pod.name]
        extra['authentication.orch.io/pod-uid'] = [claim.pod.uid]
      }
      return {
        user: {
          username: serviceAccountUsername(ns, claim.serviceaccount.name),
          uid: claim.serviceaccount.uid,
          groups: ['system:serviceaccounts', `system:serviceaccounts:${ns}`, AUTHENTICATED],
          ...(Object.keys(extra).length > 0 ? { extra } : {})
        },
        audiences: accepted
      }
    }
  }
}
