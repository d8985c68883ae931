// `orch up` secure by default, through the real kubectl: HTTPS only, every bad credential refused, RBAC with a user made
// through a CSR, escalation refused, service-account tokens, impersonation, an OIDC issuer with CEL claim mappings, audit.

import t from 'tap'
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { Agent, request } from 'undici'
import { SignJWT } from 'jose'
import { runKubectl, startOrch } from './orch-process.js'
import { kubeconfigDispatcher } from './tls-client.js'
import { newKey, startIssuer } from '../apiserver/auth/testing/oidc-issuer.js'
import { createCa, issueCertificate } from '../apiserver/pki/certs.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const dir = mkdtempSync(join(tmpdir(), 'orch-security-'))
const data = join(dir, 'data')
t.teardown(() => rmSync(dir, { recursive: true, force: true }))

// An OIDC issuer of the test's own (HTTPS, discovery and JWKS), trusted through its CA in the configuration.
const issuer = await startIssuer()
issuer.keys = [await newKey('key-1')]
t.teardown(() => { issuer.server.closeAllConnections(); issuer.server.close() })
writeFileSync(join(dir, 'authn.yaml'), `apiVersion: apiserver.config.k8s.io/v1alpha1
kind: AuthenticationConfiguration
jwt:
- issuer:
    url: ${issuer.url}
    audiences: [orch-cli]
    certificateAuthority: ${JSON.stringify(issuer.caPem)}
  claimValidationRules:
  - expression: 'claims.email_verified == true'
    message: the email must be verified
  claimMappings:
    username: {expression: '"oidc:" + claims.email'}
    groups: {expression: 'claims.teams.map(t, "team:" + t)'}
`)
writeFileSync(join(dir, 'tokens.csv'), 'static-token-of-carol,carol,carol-uid,"ops"\n')
writeFileSync(join(dir, 'audit.yaml'), `apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: Metadata
  resources: [{group: "", resources: ["secrets"]}]
- level: None
`)
const auditLog = join(dir, 'audit.log')

const orch = await startOrch(data, 60_000, [
  '--orchlet=false',
  '--token-auth-file', join(dir, 'tokens.csv'),
  '--feature-gates', 'StructuredAuthenticationConfiguration=true',
  '--authentication-config', join(dir, 'authn.yaml'),
  '--audit-policy-file', join(dir, 'audit.yaml'), '--audit-log-path', auditLog
])
t.teardown(async () => { await orch.stop() })
const admin = kubeconfigDispatcher(orch.kubeconfig)
t.teardown(async () => { await admin.destroy() })
const cache = join(dir, 'cache')
const kubectl = (config: string, ...args: string[]): ReturnType<typeof runKubectl> => runKubectl(config, cache, args)
/** kubectl with no credentials but the server's CA (and a token when given). */
const caFile = join(data, 'pki', 'ca.crt')
const bare = (args: string[], token?: string): ReturnType<typeof runKubectl> =>
  runKubectl('/dev/null', cache, ['--server', orch.server, '--certificate-authority', caFile, ...(token === undefined ? [] : ['--token', token]), ...args])
const trustingCa = new Agent({ connect: { ca: readFileSync(caFile) } })
t.teardown(async () => { await trustingCa.destroy() })

async function ok (config: string, ...args: string[]): Promise<string> {
  const r = await kubectl(config, ...args)
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${r.code}): ${r.stderr}\n${orch.logs().slice(-2000)}`)
  return r.stdout
}

function orchCli (...args: string[]): { code: number | null, stdout: string, stderr: string } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'apiserver/cli/run.ts'), ...args], { cwd: ROOT, encoding: 'utf8' })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

t.test('the kubeconfig speaks HTTPS with a client certificate; keys and kubeconfig are private', async t => {
  t.match(orch.server, /^https:\/\//)
  const kc = readFileSync(orch.kubeconfig, 'utf8')
  t.match(kc, /certificate-authority-data: /)
  t.match(kc, /client-certificate-data: /)
  t.equal(statSync(orch.kubeconfig).mode & 0o777, 0o600, 'kubeconfig 0600')
  for (const key of ['ca.key', 'apiserver.key', 'admin.key', 'sa.key']) t.equal(statSync(join(data, 'pki', key)).mode & 0o777, 0o600, `${key} 0600`)
  t.match(await ok(orch.kubeconfig, 'auth', 'whoami'), /Username\s+orch-admin[\s\S]*system:masters/)
  const plain = await request(orch.server.replace('https://', 'http://') + '/version').then(r => r.statusCode, (e: Error) => e.message)
  t.not(plain, 200, 'no plain-HTTP answer on the port')
})

t.test('anonymous requests reach health, version and discovery only; bad credentials are 401 everywhere', async t => {
  for (const path of ['/healthz', '/livez', '/readyz', '/version']) {
    const r = await request(orch.server + path, { dispatcher: trustingCa })
    t.equal(r.statusCode, 200, `anonymous ${path}`)
    await r.body.dump()
  }
  const list = await request(`${orch.server}/api/v1/namespaces/kube-system/secrets`, { dispatcher: trustingCa })
  t.equal(list.statusCode, 403)
  t.match(await list.body.json(), { reason: 'Forbidden', message: 'secrets is forbidden: User "system:anonymous" cannot list resource "secrets" in API group "" in the namespace "kube-system"' })
  for (const [what, token] of [['a bogus token', 'bogus'], ['a malformed JWT', 'eyJhbGciOiJub25lIn0.e30.'], ['an unknown bootstrap token', 'abcdef.0123456789abcdef']]) {
    const r = await request(`${orch.server}/healthz`, { dispatcher: trustingCa, headers: { authorization: `Bearer ${token}` } })
    t.equal(r.statusCode, 401, `${what} is refused, even for /healthz`)
    t.match(await r.body.json(), { kind: 'Status', reason: 'Unauthorized', code: 401 })
  }
  // A client certificate from a CA the server does not trust.
  const stranger = await createCa('stranger')
  const cert = await issueCertificate(stranger, { subject: { commonName: 'mallory', organizations: ['system:masters'] }, usage: 'client' })
  const foreign = new Agent({ connect: { ca: readFileSync(caFile), cert: cert.certPem, key: cert.keyPem } })
  t.teardown(async () => { await foreign.destroy() })
  const r = await request(`${orch.server}/api/v1/namespaces`, { dispatcher: foreign })
  t.equal(r.statusCode, 401, 'a client certificate of another CA is refused')
  await r.body.dump()
  const carol = await bare(['auth', 'whoami'], 'static-token-of-carol')
  t.match(carol.stdout, /Username\s+carol[\s\S]*ops/, 'the static token file authenticates')
})

t.test('a user made through a CSR is forbidden until a RoleBinding allows, only in its namespace', async t => {
  const aliceConfig = join(dir, 'alice.kubeconfig')
  const made = orchCli('kubeconfig', '--user', 'alice', '--group', 'dev', '--kubeconfig', orch.kubeconfig, '--output', aliceConfig)
  t.equal(made.code, 0, made.stderr)
  t.equal(statSync(aliceConfig).mode & 0o777, 0o600)
  t.match(await ok(aliceConfig, 'auth', 'whoami'), /Username\s+alice[\s\S]*dev/)
  await ok(orch.kubeconfig, 'create', 'namespace', 'team')
  const denied = await kubectl(aliceConfig, 'get', 'pods', '-n', 'team')
  t.equal(denied.code, 1)
  t.match(denied.stderr, 'Error from server (Forbidden): pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "team"')
  await ok(orch.kubeconfig, 'create', 'rolebinding', 'alice-admin', '--clusterrole=admin', '--user=alice', '-n', 'team')
  let allowed = await kubectl(aliceConfig, 'get', 'pods', '-n', 'team')
  for (let i = 0; i < 50 && allowed.code !== 0; i++) { await new Promise(resolve => setTimeout(resolve, 100)); allowed = await kubectl(aliceConfig, 'get', 'pods', '-n', 'team') }
  t.equal(allowed.code, 0, `allowed in team: ${allowed.stderr}`)
  const elsewhere = await kubectl(aliceConfig, 'get', 'pods', '-n', 'default')
  t.match(elsewhere.stderr, 'User "alice" cannot list resource "pods" in API group "" in the namespace "default"')
  t.equal((await kubectl(orch.kubeconfig, 'auth', 'can-i', 'create', 'deployments', '-n', 'team', '--as', 'alice')).stdout.trim(), 'yes')
  t.equal((await kubectl(orch.kubeconfig, 'auth', 'can-i', 'create', 'deployments', '-n', 'default', '--as', 'alice')).stdout.trim(), 'no')
  const rules = await ok(aliceConfig, 'auth', 'can-i', '--list', '-n', 'team')
  t.match(rules, /deployments\.apps/, 'can-i --list shows what the binding grants')

  // Escalation: admin of the namespace may bind roles, but not one granting what alice does not hold.
  const escalate = await kubectl(aliceConfig, 'create', 'rolebinding', 'grab', '--clusterrole=cluster-admin', '--user=alice', '-n', 'team')
  t.equal(escalate.code, 1)
  t.match(escalate.stderr, /is forbidden: user "alice" .* is attempting to grant RBAC permissions not currently held/)
  const impersonate = await kubectl(aliceConfig, 'get', 'pods', '-n', 'team', '--as', 'carol')
  t.match(impersonate.stderr, 'users "carol" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope')
})

t.test('create token: the token is the service account in auth whoami; another audience is refused', async t => {
  await ok(orch.kubeconfig, 'create', 'serviceaccount', 'builder', '-n', 'team')
  const token = (await ok(orch.kubeconfig, 'create', 'token', 'builder', '-n', 'team', '--duration', '10m')).trim()
  const who = await bare(['auth', 'whoami'], token)
  t.match(who.stdout, /Username\s+system:serviceaccount:team:builder[\s\S]*system:serviceaccounts:team/)
  const other = (await ok(orch.kubeconfig, 'create', 'token', 'builder', '-n', 'team', '--audience', 'somewhere-else')).trim()
  const refused = await bare(['get', 'pods', '-n', 'team'], other)
  t.match(refused.stderr, /Unauthorized|provide credentials/, 'a token for another audience is refused')
  await ok(orch.kubeconfig, 'delete', 'serviceaccount', 'builder', '-n', 'team')
  const gone = await bare(['auth', 'whoami'], token)
  t.not(gone.code, 0, 'the token of a deleted account no longer authenticates')
})

t.test('an OIDC issuer served by the test authenticates a user through CEL claim mappings', async t => {
  const key = issuer.keys[0]
  const sign = async (claims: Record<string, unknown>, audience = 'orch-cli'): Promise<string> => await new SignJWT(claims)
    .setProtectedHeader({ alg: 'RS256', kid: key.kid }).setIssuer(issuer.url).setAudience(audience)
    .setSubject('u-1').setIssuedAt().setExpirationTime('5m').sign(key.privateKey)
  const good = await sign({ email: 'dana@example.com', email_verified: true, teams: ['infra', 'db'] })
  const who = await bare(['auth', 'whoami'], good)
  t.equal(who.code, 0, who.stderr)
  t.match(who.stdout, /Username\s+oidc:dana@example\.com[\s\S]*team:infra[\s\S]*team:db/)
  const unverified = await bare(['auth', 'whoami'], await sign({ email: 'eve@example.com', email_verified: false, teams: [] }))
  t.not(unverified.code, 0, 'a failing claim validation rule is refused')
  const wrongAudience = await bare(['auth', 'whoami'], await sign({ email: 'dana@example.com', email_verified: true, teams: [] }, 'someone-else'))
  t.not(wrongAudience.code, 0, 'a token for another audience is refused')
})

t.test('the audit log records who read a secret, with the authorization decision', async t => {
  await ok(orch.kubeconfig, 'get', 'secrets', '-n', 'team')
  let events: Array<Record<string, any>> = [] // eslint-disable-line @typescript-eslint/no-explicit-any
  for (let i = 0; i < 50; i++) {
    events = readFileSync(auditLog, 'utf8').split('\n').filter(l => l !== '').map(l => JSON.parse(l))
    if (events.some(e => e.objectRef?.resource === 'secrets' && e.stage === 'ResponseComplete' && e.user?.username === 'orch-admin')) break
    await new Promise(resolve => setTimeout(resolve, 100))
  }
  const secretsBy = (user: string): Record<string, any> | undefined => // eslint-disable-line @typescript-eslint/no-explicit-any
    events.find(e => e.objectRef?.resource === 'secrets' && e.stage === 'ResponseComplete' && e.user?.username === user)
  const read = secretsBy('orch-admin')
  t.ok(read, 'an event for the administrator\'s secrets list')
  t.equal(read?.level, 'Metadata')
  t.equal(read?.annotations?.['authorization.k8s.io/decision'], 'allow')
  t.equal(read?.responseStatus?.code, 200)
  t.notOk('requestObject' in (read ?? {}) || 'responseObject' in (read ?? {}), 'no bodies at Metadata level')
  const refused = secretsBy('system:anonymous')
  t.equal(refused?.annotations?.['authorization.k8s.io/decision'], 'forbid', 'the anonymous attempt is recorded as forbidden')
  t.equal(refused?.responseStatus?.code, 403)
  t.notOk(events.some(e => e.objectRef?.resource === 'pods'), 'level None records nothing')
})
