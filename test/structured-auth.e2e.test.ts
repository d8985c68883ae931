// Structured authentication and authorization end to end: a real API server whose users come from an OIDC issuer
// (AuthenticationConfiguration with CEL claim mappings) and whose decisions come from an AuthorizationConfiguration
// (a webhook over HTTPS with match conditions, then AlwaysDeny), both built from files by createStructuredAuth.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { pino } from 'pino'
import { SignJWT } from 'jose'
import { openLmdbStore } from '../apiserver/storage/lmdb/index.js'
import { createRegistry } from '../apiserver/registry/registry.js'
import { createApiServer } from '../apiserver/server.js'
import { createAuthenticator } from '../apiserver/auth/authenticator.js'
import { createSandboxPool } from '../sandbox/pool.js'
import { parseFlags } from '../apiserver/cli/args.js'
import { AUTHN_CONFIG_FLAGS, authnConfigOptions, createStructuredAuth } from '../apiserver/cli/authn-config-flags.js'
import { newKey, startIssuer } from '../apiserver/auth/testing/oidc-issuer.js'
import { startWebhook } from '../apiserver/auth/testing/webhook-server.js'

t.test('OIDC users authorized by a webhook through a real API server', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'structured-auth-e2e-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const issuer = await startIssuer()
  t.teardown(() => { issuer.server.closeAllConnections(); issuer.server.close() })
  const key = await newKey('k1')
  issuer.keys = [key]
  const hook = await startWebhook(dir)
  t.teardown(() => { hook.server.closeAllConnections(); hook.server.close() })
  hook.setAnswer(body => {
    const s = body.spec
    if (s.user === 'oidc:alice' && s.groups.includes('team:blue') && s.groups.includes('system:authenticated')) return { body: { status: { allowed: true, reason: 'blue team' } } }
    return { body: { status: { allowed: false, reason: 'not on the blue team' } } }
  })

  const authnFile = join(dir, 'authn.yaml')
  writeFileSync(authnFile, `apiVersion: apiserver.config.k8s.io/v1beta1
kind: AuthenticationConfiguration
jwt:
- issuer:
    url: ${issuer.url}
    audiences: [orch]
    certificateAuthority: |
${issuer.caPem.trim().split('\n').map(l => '      ' + l).join('\n')}
  claimValidationRules:
  - expression: "claims.email_verified == true"
    message: email must be verified
  claimMappings:
    username: {expression: "'oidc:' + claims.preferred_username"}
    groups: {expression: "claims.teams.map(x, 'team:' + x)"}
    uid: {claim: sub}
`)
  const authzFile = join(dir, 'authz.yaml')
  writeFileSync(authzFile, `apiVersion: apiserver.config.k8s.io/v1alpha1
kind: AuthorizationConfiguration
authorizers:
- type: Webhook
  name: team-webhook
  webhook:
    timeout: 3s
    authorizedTTL: 1m
    unauthorizedTTL: 10s
    subjectAccessReviewVersion: v1
    matchConditionSubjectAccessReviewVersion: v1
    failurePolicy: Deny
    connectionInfo: {type: KubeConfigFile, kubeConfigFile: ${hook.kubeconfig}}
    matchConditions:
    - expression: "has(request.resourceAttributes) && request.resourceAttributes.namespace == 'team-blue'"
- {type: AlwaysDeny, name: deny-the-rest}
`)
  const argv = ['--feature-gates', 'x', '--authentication-config', authnFile, '--authorization-config', authzFile]
  const { flags } = parseFlags(argv.slice(2), AUTHN_CONFIG_FLAGS)
  const pool = createSandboxPool({ size: 1 })
  t.teardown(() => pool.close())
  const structured = await createStructuredAuth({
    options: authnConfigOptions(flags, argv, () => true),
    evaluator: pool,
    serviceAccountIssuers: ['https://kubernetes.default.svc.cluster.local'],
    authorizerFactories: {}
  })
  t.teardown(() => structured.close())

  const silent = pino({ level: 'silent' })
  const store = await openLmdbStore({ path: join(dir, 'db') })
  const registry = createRegistry({ store, logger: silent })
  await registry.start()
  const server = createApiServer({
    registry,
    logger: silent,
    authentication: createAuthenticator({ request: [], tokens: [structured.jwt!], apiAudiences: ['https://kubernetes.default.svc.cluster.local'], anonymous: false }),
    authorization: structured.authorizer!.authorizer
  })
  const { port } = await server.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(async () => { await server.close(); await registry.stop(); await store.close() })

  const token = async (claims: Record<string, unknown>): Promise<string> => await new SignJWT({
    iss: issuer.url, aud: 'orch', sub: 'u-1', preferred_username: 'alice', email_verified: true, teams: ['blue'], exp: Math.floor(Date.now() / 1000) + 300, ...claims
  }).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).sign(key.privateKey)
  const get = async (path: string, bearer?: string): Promise<{ status: number; body: any }> => {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, { headers: bearer === undefined ? {} : { authorization: `Bearer ${bearer}` } })
    return { status: res.status, body: await res.json() }
  }

  const ok = await get('/api/v1/namespaces/team-blue/configmaps', await token({}))
  t.equal(ok.status, 200, 'alice of the blue team lists configmaps in team-blue')
  t.equal(ok.body.kind, 'ConfigMapList')
  t.same(hook.seen.at(-1)?.body.spec, {
    resourceAttributes: { namespace: 'team-blue', verb: 'list', version: 'v1', resource: 'configmaps' },
    user: 'oidc:alice', groups: ['team:blue', 'system:authenticated'], uid: 'u-1'
  }, 'the webhook saw the user of the CEL claim mappings')

  const red = await get('/api/v1/namespaces/team-blue/configmaps', await token({ preferred_username: 'bob', teams: ['red'] }))
  t.equal(red.status, 403)
  t.equal(red.body.message, 'configmaps is forbidden: User "oidc:bob" cannot list resource "configmaps" in API group "" in the namespace "team-blue": Everything is forbidden.', 'the webhook had no opinion; AlwaysDeny refused')

  const calls = hook.seen.length
  const elsewhere = await get('/api/v1/namespaces/default/configmaps', await token({}))
  t.equal(elsewhere.status, 403, 'outside team-blue the match condition skips the webhook and AlwaysDeny refuses')
  t.equal(hook.seen.length, calls)

  t.equal((await get('/api/v1/namespaces/team-blue/configmaps')).status, 401, 'no token')
  t.equal((await get('/api/v1/namespaces/team-blue/configmaps', await token({ aud: 'someone-else' }))).status, 401, 'token for another audience')
  t.equal((await get('/api/v1/namespaces/team-blue/configmaps', await token({ email_verified: false }))).status, 401, 'claim validation rule fails')
  t.equal((await get('/api/v1/namespaces/team-blue/configmaps', await token({ exp: Math.floor(Date.now() / 1000) - 3600 }))).status, 401, 'expired token')
})
