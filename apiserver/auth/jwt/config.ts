// AuthenticationConfiguration (document 2 §2.1): its types, strict decoding, and every rule checkable without CEL.

import { X509Certificate } from 'node:crypto'
import type { FieldError } from '../../schema/types.js'
import { child, duplicate, index, invalid, required, tooMany } from '../../schema/field-errors.js'
import { isDNS1123Subdomain } from '../../schema/metadata.js'
import { decodeConfig, type Shape } from '../config/decode.js'

export interface Issuer {
  /** `https://host[/path]`; must equal the token's `iss` and the discovery document's `issuer`. */
  url: string
  /** PEM CA certificates verifying the discovery and JWKS endpoints (system roots when unset). */
  certificateAuthority?: string
  /** At least one must be in the token's `aud`. */
  audiences: string[]
}
export interface ClaimValidationRule { claim?: string; requiredValue?: string; expression?: string; message?: string }
export interface PrefixedClaimOrExpression { claim?: string; prefix?: string; expression?: string }
export interface ClaimOrExpression { claim?: string; expression?: string }
export interface ExtraMapping { key: string; valueExpression: string }
export interface ClaimMappings {
  username: PrefixedClaimOrExpression
  groups?: PrefixedClaimOrExpression
  uid?: ClaimOrExpression
  extra?: ExtraMapping[]
}
export interface UserValidationRule { expression: string; message?: string }
export interface JWTAuthenticator {
  issuer: Issuer
  claimValidationRules?: ClaimValidationRule[]
  claimMappings: ClaimMappings
  userValidationRules?: UserValidationRule[]
}
export interface AuthenticationConfiguration { jwt: JWTAuthenticator[] }

const prefixed: Shape = { claim: 'string', prefix: 'string', expression: 'string' }
const AUTHENTICATION_SHAPE: Shape = {
  jwt: [{
    issuer: { url: 'string', certificateAuthority: 'string', audiences: 'string[]' },
    claimValidationRules: [{ claim: 'string', requiredValue: 'string', expression: 'string', message: 'string' }],
    claimMappings: { username: prefixed, groups: prefixed, uid: { claim: 'string', expression: 'string' }, extra: [{ key: 'string', valueExpression: 'string' }] },
    userValidationRules: [{ expression: 'string', message: 'string' }]
  }]
}

/** Most JWT authenticators a configuration may hold (Kubernetes' limit). */
export const MAX_JWT_AUTHENTICATORS = 64

/** Decodes the file's text (throws ConfigDecodeError); the result still needs validation. */
export function decodeAuthenticationConfiguration (text: string): AuthenticationConfiguration {
  const raw = decodeConfig(text, 'AuthenticationConfiguration', AUTHENTICATION_SHAPE) as { jwt?: Array<Partial<JWTAuthenticator> & { issuer?: Partial<Issuer> }> }
  const jwt = (raw.jwt ?? []).map(a => ({
    ...a,
    issuer: { ...a.issuer, url: a.issuer?.url ?? '', audiences: a.issuer?.audiences ?? [] },
    claimMappings: { ...a.claimMappings, username: { ...a.claimMappings?.username } }
  }))
  return { jwt }
}

export interface AuthenticationValidationOptions {
  /** Issuers no JWT authenticator may claim (the service-account issuers). */
  disallowedIssuers?: string[]
}

/** Every rule of §2.1 that does not need CEL, with Kubernetes' field paths and wording. */
export function validateAuthenticationConfiguration (c: AuthenticationConfiguration, o: AuthenticationValidationOptions = {}): FieldError[] {
  const root = 'jwt'
  if (c.jwt.length === 0) return [required(root, 'at least one jwt is required')]
  if (c.jwt.length > MAX_JWT_AUTHENTICATORS) return [tooMany(root, c.jwt.length, MAX_JWT_AUTHENTICATORS)]
  const errs: FieldError[] = []
  const seen = new Set<string>()
  c.jwt.forEach((a, i) => {
    const at = index(root, i)
    errs.push(...validateIssuer(a.issuer, child(at, 'issuer'), o.disallowedIssuers ?? []))
    errs.push(...validateClaimValidationRules(a.claimValidationRules ?? [], child(at, 'claimValidationRules')))
    errs.push(...validateClaimMappings(a.claimMappings, child(at, 'claimMappings')))
    errs.push(...validateUserValidationRules(a.userValidationRules ?? [], child(at, 'userValidationRules')))
    if (seen.has(a.issuer.url)) errs.push(duplicate(child(child(at, 'issuer'), 'url'), a.issuer.url))
    seen.add(a.issuer.url)
  })
  return errs
}

function validateIssuer (issuer: Issuer, at: string, disallowed: string[]): FieldError[] {
  const errs: FieldError[] = []
  const urlPath = child(at, 'url')
  if (issuer.url === '') errs.push(required(urlPath))
  else errs.push(...validateIssuerUrl(issuer.url, urlPath, disallowed))
  const audPath = child(at, 'audiences')
  if (issuer.audiences.length === 0) errs.push(required(audPath, `at least one ${audPath} is required`))
  const seen = new Set<string>()
  issuer.audiences.forEach((aud, i) => {
    if (aud === '') errs.push(required(index(audPath, i)))
    if (seen.has(aud)) errs.push(duplicate(index(audPath, i), aud))
    seen.add(aud)
  })
  if (issuer.certificateAuthority !== undefined && issuer.certificateAuthority !== '') {
    const why = certificateAuthorityError(issuer.certificateAuthority)
    if (why !== undefined) errs.push(invalid(child(at, 'certificateAuthority'), '<omitted>', why))
  }
  return errs
}

function validateIssuerUrl (text: string, at: string, disallowed: string[]): FieldError[] {
  const errs: FieldError[] = []
  if (disallowed.includes(text)) errs.push(invalid(at, text, `URL must not overlap with disallowed issuers: [${[...disallowed].sort().join(' ')}]`))
  let u: URL
  try {
    u = new URL(text)
  } catch {
    errs.push(invalid(at, text, `parse ${JSON.stringify(text)}: invalid URI for request`))
    return errs
  }
  if (u.protocol !== 'https:') errs.push(invalid(at, text, 'URL scheme must be https'))
  if (u.username !== '' || u.password !== '') errs.push(invalid(at, text, 'URL must not contain a username or password'))
  if (u.search !== '' || text.includes('?')) errs.push(invalid(at, text, 'URL must not contain a query'))
  if (u.hash !== '' || text.includes('#')) errs.push(invalid(at, text, 'URL must not contain a fragment'))
  return errs
}

/** Why a PEM bundle is not a usable CA set, or undefined. */
export function certificateAuthorityError (pem: string): string | undefined {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []
  if (blocks.length === 0) return 'data does not contain any valid RSA or ECDSA certificates'
  for (const b of blocks) {
    try { void new X509Certificate(b) } catch (err) { return `failed to parse certificate: ${(err as Error).message}` }
  }
  return undefined
}

function validateClaimValidationRules (rules: ClaimValidationRule[], at: string): FieldError[] {
  const errs: FieldError[] = []
  const claims = new Set<string>()
  const expressions = new Set<string>()
  rules.forEach((r, i) => {
    const p = index(at, i)
    const claim = r.claim ?? ''
    const expression = r.expression ?? ''
    if (claim !== '' && expression !== '') errs.push(invalid(p, claim, "claim and expression can't both be set"))
    else if (claim === '' && expression === '') errs.push(required(p, 'claim or expression is required'))
    else if (claim !== '') {
      if ((r.message ?? '') !== '') errs.push(invalid(child(p, 'message'), r.message, 'may not be specified when claim is set'))
      if (claims.has(claim)) errs.push(duplicate(child(p, 'claim'), claim))
      claims.add(claim)
    } else {
      if ((r.requiredValue ?? '') !== '') errs.push(invalid(child(p, 'requiredValue'), r.requiredValue, 'may not be specified when expression is set'))
      if (expressions.has(expression)) errs.push(duplicate(child(p, 'expression'), expression))
      expressions.add(expression)
    }
  })
  return errs
}

function validatePrefixed (m: PrefixedClaimOrExpression | undefined, at: string, mandatory: boolean): FieldError[] {
  const claim = m?.claim ?? ''
  const expression = m?.expression ?? ''
  if (claim !== '' && expression !== '') return [invalid(at, '', "claim and expression can't both be set")]
  if (claim === '' && expression === '') return mandatory ? [required(at, 'claim or expression is required')] : []
  if (expression !== '') return m?.prefix !== undefined ? [invalid(child(at, 'prefix'), m.prefix, 'may not be specified when expression is set')] : []
  if (m?.prefix === undefined) return [required(child(at, 'prefix'), 'prefix is required when claim is set. It can be set to an empty string to disable prefixing')]
  return []
}

function validateClaimMappings (m: ClaimMappings, at: string): FieldError[] {
  const errs: FieldError[] = [
    ...validatePrefixed(m.username, child(at, 'username'), true),
    ...validatePrefixed(m.groups, child(at, 'groups'), false)
  ]
  if ((m.uid?.claim ?? '') !== '' && (m.uid?.expression ?? '') !== '') errs.push(invalid(child(at, 'uid'), '', "claim and expression can't both be set"))
  const keys = new Set<string>()
  ;(m.extra ?? []).forEach((x, i) => {
    const p = index(child(at, 'extra'), i)
    const keyPath = child(p, 'key')
    const key = x.key ?? ''
    errs.push(...domainPrefixedPathErrors(keyPath, key))
    if (key !== key.toLowerCase()) errs.push(invalid(keyPath, key, 'must be lowercase'))
    if (isKubernetesDomain(key)) errs.push(invalid(keyPath, key, 'k8s.io, kubernetes.io and their subdomains are reserved for Kubernetes use'))
    if (keys.has(key)) { errs.push(duplicate(keyPath, key)); return }
    keys.add(key)
    if ((x.valueExpression ?? '') === '') errs.push(required(child(p, 'valueExpression')))
  })
  return errs
}

const HTTP_PATH = /^[A-Za-z0-9/\-._~%!$&'()*+,;=:]+$/

/** As Kubernetes' IsDomainPrefixedPath: `example.org/some-path`. */
function domainPrefixedPathErrors (at: string, key: string): FieldError[] {
  if (key === '') return [required(at)]
  const slash = key.indexOf('/')
  const host = slash < 0 ? '' : key.slice(0, slash)
  const path = slash < 0 ? '' : key.slice(slash + 1)
  if (host === '' || path === '') return [invalid(at, key, 'must be a domain-prefixed path (such as "acme.io/foo")')]
  const errs = isDNS1123Subdomain(host).map(e => invalid(at, host, e))
  if (!HTTP_PATH.test(path)) errs.push(invalid(at, path, "Invalid path (regex used for validation is '[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+')"))
  return errs
}

function isKubernetesDomain (key: string): boolean {
  const slash = key.indexOf('/')
  const host = slash < 0 ? '' : key.slice(0, slash)
  return ['kubernetes.io', 'k8s.io'].some(d => host === d || host.endsWith('.' + d))
}

function validateUserValidationRules (rules: UserValidationRule[], at: string): FieldError[] {
  const errs: FieldError[] = []
  const seen = new Set<string>()
  rules.forEach((r, i) => {
    const p = child(index(at, i), 'expression')
    const e = r.expression ?? ''
    if (e === '') { errs.push(required(p)); return }
    if (seen.has(e)) { errs.push(duplicate(p, e)); return }
    seen.add(e)
  })
  return errs
}
