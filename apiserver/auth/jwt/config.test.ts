// AuthenticationConfiguration: strict decoding and each validation rule, with Kubernetes' field paths and wording.

import t from 'tap'
import { createCa } from '../../pki/certs.js'
import { aggregate } from '../config/errors.js'
import { decodeAuthenticationConfiguration, validateAuthenticationConfiguration, type AuthenticationConfiguration, type JWTAuthenticator } from './config.js'

const base = (over: Partial<JWTAuthenticator> = {}): JWTAuthenticator => ({
  issuer: { url: 'https://issuer.example', audiences: ['orch'] },
  claimMappings: { username: { claim: 'sub', prefix: '' } },
  ...over
})
const messages = (c: AuthenticationConfiguration, disallowedIssuers?: string[]): string[] =>
  validateAuthenticationConfiguration(c, { disallowedIssuers }).map(e => `${e.field}: ${e.message}`)

t.test('decoding accepts orch and Kubernetes group names and refuses other kinds, versions and unknown fields', async (t) => {
  for (const v of ['apiserver.orch.io/v1alpha1', 'apiserver.config.k8s.io/v1alpha1', 'apiserver.config.k8s.io/v1beta1']) {
    const c = decodeAuthenticationConfiguration(`apiVersion: ${v}\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://a, audiences: [x]}\n  claimMappings: {username: {claim: sub, prefix: ""}}\n`)
    t.same(c.jwt[0].claimMappings.username, { claim: 'sub', prefix: '' }, v)
  }
  t.throws(() => decodeAuthenticationConfiguration('apiVersion: apiserver.config.k8s.io/v1alpha1\nkind: AuthorizationConfiguration\n'),
    { message: 'no kind "AuthorizationConfiguration" is registered for version "apiserver.config.k8s.io/v1alpha1" in scheme' })
  t.throws(() => decodeAuthenticationConfiguration('apiVersion: apiserver.config.k8s.io/v2\nkind: AuthenticationConfiguration\n'), { message: /no kind "AuthenticationConfiguration" is registered for version "apiserver.config.k8s.io\/v2"/ })
  t.throws(() => decodeAuthenticationConfiguration('kind: AuthenticationConfiguration\n'), { message: /Object 'apiVersion' is missing/ })
  t.throws(() => decodeAuthenticationConfiguration('apiVersion: apiserver.config.k8s.io/v1alpha1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://a, audience: x}\n'),
    { message: 'strict decoding error: unknown field "jwt[0].issuer.audience"' })
  t.throws(() => decodeAuthenticationConfiguration('apiVersion: apiserver.config.k8s.io/v1alpha1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: 5}\n'), { message: /jwt\[0\]\.issuer\.url: cannot decode number/ })
  t.throws(() => decodeAuthenticationConfiguration('apiVersion: [\n'), { message: /error converting YAML to JSON/ })
})

t.test('a valid configuration has no errors; jwt is required and capped at 64', async (t) => {
  t.same(messages({ jwt: [base()] }), [])
  t.same(messages({ jwt: [] }), ['jwt: Required value: at least one jwt is required'])
  t.same(messages({ jwt: Array.from({ length: 65 }, (_, i) => base({ issuer: { url: `https://i${i}`, audiences: ['a'] } })) }), ['jwt: Too many: 65: must have at most 64 items'])
})

t.test('issuer url: required, https, no user info, query or fragment, unique, not a service-account issuer', async (t) => {
  const issuer = (url: string) => ({ jwt: [base({ issuer: { url, audiences: ['a'] } })] })
  t.same(messages(issuer('')), ['jwt[0].issuer.url: Required value'])
  t.same(messages(issuer('http://issuer.example')), ['jwt[0].issuer.url: Invalid value: "http://issuer.example": URL scheme must be https'])
  t.same(messages(issuer('https://u:p@issuer.example')), ['jwt[0].issuer.url: Invalid value: "https://u:p@issuer.example": URL must not contain a username or password'])
  t.same(messages(issuer('https://issuer.example?x=1')), ['jwt[0].issuer.url: Invalid value: "https://issuer.example?x=1": URL must not contain a query'])
  t.same(messages(issuer('https://issuer.example#f')), ['jwt[0].issuer.url: Invalid value: "https://issuer.example#f": URL must not contain a fragment'])
  t.same(messages(issuer('not a url')), ['jwt[0].issuer.url: Invalid value: "not a url": parse "not a url": invalid URI for request'])
  t.same(messages({ jwt: [base(), base()] }), ['jwt[1].issuer.url: Duplicate value: "https://issuer.example"'])
  t.same(messages({ jwt: [base()] }, ['https://issuer.example', 'https://b']), ['jwt[0].issuer.url: Invalid value: "https://issuer.example": URL must not overlap with disallowed issuers: [https://b https://issuer.example]'])
})

t.test('audiences: at least one, none empty, no duplicates', async (t) => {
  const aud = (audiences: string[]) => ({ jwt: [base({ issuer: { url: 'https://i', audiences } })] })
  t.same(messages(aud([])), ['jwt[0].issuer.audiences: Required value: at least one jwt[0].issuer.audiences is required'])
  t.same(messages(aud(['a', ''])), ['jwt[0].issuer.audiences[1]: Required value'])
  t.same(messages(aud(['a', 'a'])), ['jwt[0].issuer.audiences[1]: Duplicate value: "a"'])
})

t.test('certificateAuthority must hold PEM certificates', async (t) => {
  const ca = await createCa('oidc-test-ca')
  t.same(messages({ jwt: [base({ issuer: { url: 'https://i', audiences: ['a'], certificateAuthority: ca.certPem } })] }), [])
  t.same(messages({ jwt: [base({ issuer: { url: 'https://i', audiences: ['a'], certificateAuthority: 'junk' } })] }),
    ['jwt[0].issuer.certificateAuthority: Invalid value: "<omitted>": data does not contain any valid RSA or ECDSA certificates'])
})

t.test('claimValidationRules: claim xor expression, message only with expression, requiredValue only with claim, no duplicates', async (t) => {
  const rules = (claimValidationRules: JWTAuthenticator['claimValidationRules']) => messages({ jwt: [base({ claimValidationRules })] })
  t.same(rules([{ claim: 'hd', requiredValue: 'example.com' }, { expression: 'claims.x == "y"', message: 'x must be y' }]), [])
  t.same(rules([{ claim: 'hd', expression: 'true' }]), ['jwt[0].claimValidationRules[0]: Invalid value: "hd": claim and expression can\'t both be set'])
  t.same(rules([{}]), ['jwt[0].claimValidationRules[0]: Required value: claim or expression is required'])
  t.same(rules([{ claim: 'hd', message: 'm' }]), ['jwt[0].claimValidationRules[0].message: Invalid value: "m": may not be specified when claim is set'])
  t.same(rules([{ expression: 'true', requiredValue: 'v' }]), ['jwt[0].claimValidationRules[0].requiredValue: Invalid value: "v": may not be specified when expression is set'])
  t.same(rules([{ claim: 'hd' }, { claim: 'hd' }]), ['jwt[0].claimValidationRules[1].claim: Duplicate value: "hd"'])
  t.same(rules([{ expression: 'true' }, { expression: 'true' }]), ['jwt[0].claimValidationRules[1].expression: Duplicate value: "true"'])
})

t.test('claimMappings.username: required, claim xor expression, prefix required with claim and refused with expression', async (t) => {
  const user = (username: JWTAuthenticator['claimMappings']['username']) => messages({ jwt: [base({ claimMappings: { username } })] })
  t.same(user({ expression: 'claims.sub' }), [])
  t.same(user({}), ['jwt[0].claimMappings.username: Required value: claim or expression is required'])
  t.same(user({ claim: 'sub', expression: 'claims.sub' }), ['jwt[0].claimMappings.username: Invalid value: "": claim and expression can\'t both be set'])
  t.same(user({ claim: 'sub' }), ['jwt[0].claimMappings.username.prefix: Required value: prefix is required when claim is set. It can be set to an empty string to disable prefixing'])
  t.same(user({ expression: 'claims.sub', prefix: 'p:' }), ['jwt[0].claimMappings.username.prefix: Invalid value: "p:": may not be specified when expression is set'])
})

t.test('claimMappings.groups and uid: optional, claim xor expression', async (t) => {
  const m = (claimMappings: Partial<JWTAuthenticator['claimMappings']>) => messages({ jwt: [base({ claimMappings: { username: { claim: 'sub', prefix: '' }, ...claimMappings } })] })
  t.same(m({ groups: { claim: 'groups', prefix: 'oidc:' }, uid: { claim: 'sub' } }), [])
  t.same(m({ groups: { claim: 'groups' } }), ['jwt[0].claimMappings.groups.prefix: Required value: prefix is required when claim is set. It can be set to an empty string to disable prefixing'])
  t.same(m({ groups: { claim: 'g', expression: 'claims.g' } }), ['jwt[0].claimMappings.groups: Invalid value: "": claim and expression can\'t both be set'])
  t.same(m({ uid: { claim: 'sub', expression: 'claims.sub' } }), ['jwt[0].claimMappings.uid: Invalid value: "": claim and expression can\'t both be set'])
})

t.test('claimMappings.extra: domain-prefixed lowercase keys, not Kubernetes domains, unique, with a valueExpression', async (t) => {
  const extra = (x: Array<{ key: string; valueExpression: string }>) => messages({ jwt: [base({ claimMappings: { username: { claim: 'sub', prefix: '' }, extra: x } })] })
  t.same(extra([{ key: 'example.org/team', valueExpression: 'claims.team' }]), [])
  t.same(extra([{ key: '', valueExpression: 'x' }]), ['jwt[0].claimMappings.extra[0].key: Required value'])
  t.same(extra([{ key: 'team', valueExpression: 'x' }]), ['jwt[0].claimMappings.extra[0].key: Invalid value: "team": must be a domain-prefixed path (such as "acme.io/foo")'])
  t.same(extra([{ key: 'Example.org/team', valueExpression: 'x' }]), [
    'jwt[0].claimMappings.extra[0].key: Invalid value: "Example.org": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, \'-\' or \'.\', and must start and end with an alphanumeric character (e.g. \'example.com\', regex used for validation is \'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\')',
    'jwt[0].claimMappings.extra[0].key: Invalid value: "Example.org/team": must be lowercase'
  ])
  t.same(extra([{ key: 'example.org/a b', valueExpression: 'x' }]), ['jwt[0].claimMappings.extra[0].key: Invalid value: "a b": Invalid path (regex used for validation is \'[A-Za-z0-9/\\-._~%!$&\'()*+,;=:]+\')'])
  t.same(extra([{ key: 'sub.k8s.io/x', valueExpression: 'x' }]), ['jwt[0].claimMappings.extra[0].key: Invalid value: "sub.k8s.io/x": k8s.io, kubernetes.io and their subdomains are reserved for Kubernetes use'])
  t.same(extra([{ key: 'example.org/a', valueExpression: 'x' }, { key: 'example.org/a', valueExpression: 'y' }]), ['jwt[0].claimMappings.extra[1].key: Duplicate value: "example.org/a"'])
  t.same(extra([{ key: 'example.org/a', valueExpression: '' }]), ['jwt[0].claimMappings.extra[0].valueExpression: Required value'])
})

t.test('userValidationRules: expression required and unique', async (t) => {
  const rules = (userValidationRules: JWTAuthenticator['userValidationRules']) => messages({ jwt: [base({ userValidationRules })] })
  t.same(rules([{ expression: "!user.username.startsWith('system:')", message: 'no system users' }]), [])
  t.same(rules([{ expression: '' }]), ['jwt[0].userValidationRules[0].expression: Required value'])
  t.same(rules([{ expression: 'true' }, { expression: 'true' }]), ['jwt[0].userValidationRules[1].expression: Duplicate value: "true"'])
})

t.test('errors aggregate as Kubernetes prints them: one alone, several in brackets', async (t) => {
  const errs = validateAuthenticationConfiguration({ jwt: [base({ issuer: { url: 'http://i', audiences: [] } })] })
  t.equal(aggregate(errs), '[jwt[0].issuer.url: Invalid value: "http://i": URL scheme must be https, jwt[0].issuer.audiences: Required value: at least one jwt[0].issuer.audiences is required]')
  t.equal(aggregate(errs.slice(0, 1)), 'jwt[0].issuer.url: Invalid value: "http://i": URL scheme must be https')
})
