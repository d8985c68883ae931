// The structured authentication/authorization flags: combinations refused as kube-apiserver does, the --oidc-* mapping, the build.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { parseFlags, type FlagSpec } from './args.js'
import { createFeatureGates, parseFeatureGateList } from '../featuregate/featuregate.js'
import { createSandboxPool } from '../../sandbox/pool.js'
import { createCa } from '../pki/certs.js'
import { AUTHN_CONFIG_FLAGS, authnConfigOptions, createStructuredAuth, givenFlags, legacyOidcAuthenticator } from './authn-config-flags.js'
import { startWebhook } from '../auth/testing/webhook-server.js'

// The lead's --authorization-mode lives in security-flags.ts; this test declares it as that file does.
const SPECS: FlagSpec[] = [...AUTHN_CONFIG_FLAGS, { name: 'authorization-mode', kind: 'string', help: '', default: 'RBAC' }, { name: 'feature-gates', kind: 'string', help: '' }]
const options = (argv: string[]) => {
  const { flags } = parseFlags(argv, SPECS)
  const gates = createFeatureGates(parseFeatureGateList(String(flags['feature-gates'] ?? '')))
  return authnConfigOptions(flags, argv, (g) => gates.enabled(g))
}
const AUTHN_GATE = '--feature-gates=StructuredAuthenticationConfiguration=true'
const AUTHZ_GATE = '--feature-gates=StructuredAuthorizationConfiguration=true'

t.test('--authentication-config needs its feature gate and excludes the --oidc-* flags', async (t) => {
  t.throws(() => options(['--authentication-config', '/x.yaml']), { name: 'UsageError', message: 'set --feature-gates=StructuredAuthenticationConfiguration=true to use authentication-config file' })
  t.same(options([AUTHN_GATE, '--authentication-config', '/x.yaml']), { authenticationConfigFile: '/x.yaml' })
  t.throws(() => options([AUTHN_GATE, '--authentication-config', '/x.yaml', '--oidc-username-claim=email']), { message: 'authentication-config file and oidc-* flags are mutually exclusive' })
  t.same(options([]), {}, 'defaults of the --oidc-* flags are not "set"')
})

t.test('--oidc-issuer-url and --oidc-client-id go together; algorithms and required claims are checked', async (t) => {
  t.throws(() => options(['--oidc-issuer-url', 'https://i']), { message: 'oidc-issuer-url and oidc-client-id should be specified together' })
  t.throws(() => options(['--oidc-client-id', 'c']), { message: 'oidc-issuer-url and oidc-client-id should be specified together' })
  t.throws(() => options(['--oidc-issuer-url', 'https://i', '--oidc-client-id', 'c', '--oidc-signing-algs', 'RS256,HS256']), { message: 'oidc: unsupported signing alg: "HS256"' })
  t.throws(() => options(['--oidc-issuer-url', 'https://i', '--oidc-client-id', 'c', '--oidc-required-claim', 'nope']), { message: /want key=value/ })
  const o = options(['--oidc-issuer-url', 'https://i', '--oidc-client-id', 'c', '--oidc-required-claim', 'hd=example.org', '--oidc-required-claim=tier=a=b', '--oidc-signing-algs=ES256,RS256'])
  t.same(o.legacyOidc, { issuerUrl: 'https://i', clientId: 'c', caFile: undefined, usernameClaim: 'sub', usernamePrefix: undefined, groupsClaim: undefined, groupsPrefix: undefined, signingAlgs: ['ES256', 'RS256'], requiredClaims: [['hd', 'example.org'], ['tier', 'a=b']] })
})

t.test('--authorization-config needs its feature gate and excludes --authorization-mode', async (t) => {
  t.throws(() => options(['--authorization-config', '/a.yaml']), { message: '--authorization-config cannot be used without enabling StructuredAuthorizationConfiguration feature flag' })
  t.same(options([AUTHZ_GATE, '--authorization-config', '/a.yaml']), { authorizationConfigFile: '/a.yaml' })
  t.throws(() => options([AUTHZ_GATE, '--authorization-config', '/a.yaml', '--authorization-mode', 'RBAC']), { message: '--authorization-config can not be specified when --authorization-mode or --authorization-webhook-* flags are defined' })
  t.same([...givenFlags(['--a', 'v', '--b=1', 'rest'])], ['a', 'b'])
})

t.test('the --oidc-* flags map to one JWT authenticator as kube-apiserver maps them', async (t) => {
  const base = { issuerUrl: 'https://i', clientId: 'c', usernameClaim: 'sub', signingAlgs: ['RS256'], requiredClaims: [] as Array<[string, string]> }
  t.same(await legacyOidcAuthenticator(base), { issuer: { url: 'https://i', audiences: ['c'] }, claimMappings: { username: { claim: 'sub', prefix: 'https://i#' } } }, 'claims other than email are prefixed with the issuer')
  t.same((await legacyOidcAuthenticator({ ...base, usernameClaim: 'email' })).claimMappings.username, { claim: 'email', prefix: '' })
  t.same((await legacyOidcAuthenticator({ ...base, usernamePrefix: '-' })).claimMappings.username, { claim: 'sub', prefix: '' }, '"-" means no prefix')
  t.same((await legacyOidcAuthenticator({ ...base, usernamePrefix: 'oidc:' })).claimMappings.username, { claim: 'sub', prefix: 'oidc:' })
  t.same((await legacyOidcAuthenticator({ ...base, groupsClaim: 'groups' })).claimMappings.groups, { claim: 'groups', prefix: '' })
  t.same((await legacyOidcAuthenticator({ ...base, requiredClaims: [['hd', 'x']] })).claimValidationRules, [{ claim: 'hd', requiredValue: 'x' }])
  const dir = mkdtempSync(join(tmpdir(), 'oidc-flags-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const ca = await createCa('oidc-flags-ca')
  writeFileSync(join(dir, 'ca.crt'), ca.certPem)
  t.equal((await legacyOidcAuthenticator({ ...base, caFile: join(dir, 'ca.crt') })).issuer.certificateAuthority, ca.certPem)
  await t.rejects(legacyOidcAuthenticator({ ...base, caFile: join(dir, 'none') }), { name: 'InvalidConfigurationError', message: /^--oidc-ca-file: / })
})

t.test('createStructuredAuth builds what the flags ask for and refuses bad configurations at start', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'structured-auth-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const pool = createSandboxPool({ size: 1 })
  t.teardown(() => pool.close())
  const build = async (argv: string[]) => await createStructuredAuth({ options: options(argv), evaluator: pool, serviceAccountIssuers: ['https://kubernetes.default.svc.cluster.local'], authorizerFactories: { rbac: () => ({ authorize: async () => ({ decision: 'noOpinion', reason: '' }) }) } })

  const none = await build([])
  t.equal(none.jwt, undefined)
  t.equal(none.authorizer, undefined)

  await t.rejects(build(['--oidc-issuer-url', 'http://issuer.example', '--oidc-client-id', 'c']),
    { message: 'invalid authentication configuration: jwt[0].issuer.url: Invalid value: "http://issuer.example": URL scheme must be https' })
  await t.rejects(build(['--oidc-issuer-url', 'https://kubernetes.default.svc.cluster.local', '--oidc-client-id', 'c']),
    { message: /URL must not overlap with disallowed issuers: \[https:\/\/kubernetes\.default\.svc\.cluster\.local\]/ })
  // Issuers on a loopback port nobody serves: the background key fetch fails at once, and is reported.
  const issuerErrors: string[] = []
  const legacy = await createStructuredAuth({ options: options(['--oidc-issuer-url', 'https://127.0.0.1:9', '--oidc-client-id', 'c']), evaluator: pool, serviceAccountIssuers: [], authorizerFactories: {}, onIssuerError: (e) => issuerErrors.push(e) })
  t.teardown(() => legacy.close())
  t.equal(legacy.jwt?.authenticators[0].issuer, 'https://127.0.0.1:9')
  while (issuerErrors.length === 0) await new Promise(resolve => setTimeout(resolve, 10))
  t.match(issuerErrors[0], /^jwt\[0\] https:\/\/127\.0\.0\.1:9: .*ECONNREFUSED/)

  const authn = join(dir, 'authn.yaml')
  writeFileSync(authn, 'apiVersion: apiserver.config.k8s.io/v1beta1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: "https://127.0.0.1:9", audiences: [orch]}\n  claimMappings: {username: {expression: "claims.sub"}}\n')
  const authz = join(dir, 'authz.yaml')
  writeFileSync(authz, 'apiVersion: apiserver.config.k8s.io/v1alpha1\nkind: AuthorizationConfiguration\nauthorizers:\n- {type: RBAC, name: rbac}\n- {type: AlwaysDeny, name: deny}\n')
  const both = await build([AUTHN_GATE.replace('true', 'true,StructuredAuthorizationConfiguration=true'), '--authentication-config', authn, '--authorization-config', authz])
  t.teardown(() => both.close())
  t.equal(both.jwt?.authenticators.length, 1)
  t.equal((await both.authorizer?.authorizer.authorize({ user: { username: 'x', groups: [] }, verb: 'get', resourceRequest: false, path: '/', apiGroup: '', apiVersion: '', resource: '', subresource: '', namespace: '', name: '' }))?.decision, 'deny')

  writeFileSync(authn, 'apiVersion: apiserver.config.k8s.io/v1beta1\nkind: AuthenticationConfiguration\njwt: [{issuer: {url: "https://127.0.0.1:9"}, claimMappings: {username: {claim: sub}}}]\n')
  await t.rejects(build([AUTHN_GATE, '--authentication-config', authn]), {
    name: 'InvalidConfigurationError',
    message: 'invalid authentication configuration: [jwt[0].issuer.audiences: Required value: at least one jwt[0].issuer.audiences is required, jwt[0].claimMappings.username.prefix: Required value: prefix is required when claim is set. It can be set to an empty string to disable prefixing]'
  })
  await t.rejects(build([AUTHN_GATE, '--authentication-config', join(dir, 'missing.yaml')]), { message: `failed to load authentication configuration from file "${join(dir, 'missing.yaml')}": open ${join(dir, 'missing.yaml')}: no such file or directory` })
})

t.test('--authorization-mode naming Webhook asks the --authorization-webhook-config-file webhook, in its place in the chain', async (t) => {
  t.throws(() => options(['--authorization-mode', 'Node,RBAC,Webhook']), { message: "authorization-mode Webhook's authorization config file not passed" })
  const dir = mkdtempSync(join(tmpdir(), 'webhook-mode-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const webhook = await startWebhook(dir)
  t.teardown(() => { webhook.server.closeAllConnections(); webhook.server.close() })
  const o = options(['--authorization-mode', 'AlwaysDeny,Webhook', '--authorization-webhook-config-file', webhook.kubeconfig,
    '--authorization-webhook-cache-authorized-ttl', '1m', '--authorization-webhook-version', 'v1'])
  t.same(o.authorizationConfig?.authorizers.map(a => [a.type, a.name]), [['AlwaysDeny', 'alwaysdeny'], ['Webhook', 'webhook']])
  t.match(o.authorizationConfig?.authorizers[1].webhook, { authorizedTTL: 60_000, unauthorizedTTL: 30_000, timeout: 30_000, subjectAccessReviewVersion: 'v1', failurePolicy: 'NoOpinion' })
  const pool = createSandboxPool({ size: 1 })
  t.teardown(() => pool.close())
  const allowOnly = await createStructuredAuth({
    options: options(['--authorization-mode', 'Webhook', '--authorization-webhook-config-file', webhook.kubeconfig, '--authorization-webhook-version', 'v1']),
    evaluator: pool, serviceAccountIssuers: [], authorizerFactories: {}
  })
  t.teardown(() => allowOnly.close())
  webhook.setAnswer(body => ({ body: { ...body, status: { allowed: body.spec.user === 'alice' } } }))
  const ask = (user: string) => allowOnly.authorizer!.authorizer.authorize({ user: { username: user, groups: [] }, verb: 'get', resourceRequest: true, path: '', apiGroup: '', apiVersion: 'v1', resource: 'pods', subresource: '', namespace: 'default', name: '' })
  t.equal((await ask('alice')).decision, 'allow')
  t.equal((await ask('bob')).decision, 'noOpinion')
  t.equal(webhook.seen[0].body.apiVersion, 'authorization.k8s.io/v1')
})
