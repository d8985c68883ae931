// Certificates end to end over HTTP with real kubectl: a CSR created, `kubectl certificate approve`, the certificate
// issued by csrsigning; invalid requests refused with a clear Status; orchlet requests from a bootstrap token approved
// automatically; expired tokens refused; `orch kubeconfig --user` and `orch admin token create` against the server.
import t from 'tap'
import { X509Certificate } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parse as parseYaml } from 'yaml'
import { startTestApiServer } from './api-server-fixture.js'
import { runKubectl } from './orch-process.js'
import { createAuthenticator } from '../apiserver/auth/authenticator.js'
import { staticTokens } from '../apiserver/auth/token-file.js'
import { bootstrapTokenAuthenticator, registrySecretLookup } from '../apiserver/auth/bootstrap-tokens.js'
import { buildOpenAPIv2, buildOpenAPIv3GroupVersion } from '../apiserver/schema/openapi.js'
import { startControllerManager } from '../apiserver/controllers/manager.js'
import { inProcessClient } from '../apiserver/controllers/client/in-process.js'
import { silentLogger } from '../apiserver/registry/testing.js'
import { until } from '../apiserver/controllers/testing.js'
import { createCa, issueCertificate } from '../apiserver/pki/certs.js'
import { x509Authenticator } from '../apiserver/auth/x509.js'
import { createCsr, type CsrRequestOptions } from '../apiserver/pki/csr.js'
import { main } from '../apiserver/cli/main.js'
import { bootstrapTokenSecret } from '../apiserver/cli/token.js'

const dir = mkdtempSync(join(tmpdir(), 'orch-certs-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))

const ADMIN_TOKEN = 'admin-token-for-the-certificates-test'
const ca = await createCa('certs-test-ca')
const serving = await issueCertificate(ca, { subject: { commonName: 'orch-apiserver' }, usage: 'server', hosts: ['127.0.0.1'] })
// HTTPS: kubectl sends bearer tokens only over TLS; client certificates of the cluster CA authenticate too.
const api = await startTestApiServer(t, registry => ({
  openapi: { v2: buildOpenAPIv2, v3GroupVersion: buildOpenAPIv3GroupVersion },
  tls: { cert: serving.certPem, key: serving.keyPem, clientCa: ca.certPem },
  authentication: createAuthenticator({
    request: [x509Authenticator()],
    tokens: [
      staticTokens(new Map([[ADMIN_TOKEN, { user: { username: 'admin', groups: ['system:masters'] } }]])),
      bootstrapTokenAuthenticator(registrySecretLookup(registry))
    ],
    apiAudiences: [],
    anonymous: false
  })
}))
const cm = startControllerManager({
  client: inProcessClient(api.registry, 'orch-controller-manager'), logger: silentLogger,
  controllers: ['csrsigning', 'csrapproving'], settings: { csrSigning: { ca } }
})
t.teardown(() => cm.stop())
const server = `https://127.0.0.1:${api.port}`
const caData = Buffer.from(ca.certPem).toString('base64')

function kubeconfigWithToken (name: string, token: string): string {
  const file = join(dir, `${name}.kubeconfig`)
  writeFileSync(file, `apiVersion: v1
kind: Config
clusters: [{ name: orch, cluster: { server: '${server}', certificate-authority-data: ${caData} } }]
users: [{ name: ${name}, user: { token: '${token}' } }]
contexts: [{ name: ${name}, context: { cluster: orch, user: ${name} } }]
current-context: ${name}
`)
  return file
}
const admin = kubeconfigWithToken('admin', ADMIN_TOKEN)
const kubectl = async (kubeconfig: string, ...args: string[]): ReturnType<typeof runKubectl> => await runKubectl(kubeconfig, join(dir, 'cache'), args)

async function csrFile (name: string, subject: CsrRequestOptions, spec: Record<string, unknown>): Promise<string> {
  const { csrPem } = await createCsr(subject)
  const file = join(dir, `${name}.json`)
  writeFileSync(file, JSON.stringify({
    apiVersion: 'certificates.k8s.io/v1', kind: 'CertificateSigningRequest', metadata: { name },
    spec: { request: Buffer.from(csrPem).toString('base64'), ...spec }
  }))
  return file
}

async function issued (name: string): Promise<X509Certificate> {
  const b64 = await until(async () => {
    const r = await kubectl(admin, 'get', 'csr', name, '-o', 'jsonpath={.status.certificate}')
    return r.code === 0 && r.stdout !== '' ? r.stdout : undefined
  })
  return new X509Certificate(Buffer.from(b64, 'base64'))
}

const lifetime = (c: X509Certificate): number => (Date.parse(c.validTo) - Date.parse(c.validFrom)) / 1000

t.test('kubectl creates a CSR, kubectl certificate approve, and csrsigning issues the certificate', async t => {
  const file = await csrFile('alice', { commonName: 'alice', organizations: ['dev'] },
    { signerName: 'orch.io/orch-apiserver-client', usages: ['client auth'], expirationSeconds: 7200, username: 'root' })
  const created = await kubectl(admin, 'create', '-f', file)
  t.equal(created.code, 0, created.stderr)
  t.match(created.stdout, 'certificatesigningrequest.certificates.k8s.io/alice created')
  const requester = await kubectl(admin, 'get', 'csr', 'alice', '-o', 'jsonpath={.spec.username} {.spec.groups}')
  t.equal(requester.stdout, 'admin ["system:masters","system:authenticated"]', 'the requester is who sent it')
  const pending = await kubectl(admin, 'get', 'csr')
  t.match(pending.stdout, /^NAME\s+AGE\s+SIGNERNAME\s+REQUESTOR\s+REQUESTEDDURATION\s+CONDITION\n/)
  t.match(pending.stdout, /alice\s+\S+\s+orch\.io\/orch-apiserver-client\s+admin\s+120m\s+Pending/)
  const approved = await kubectl(admin, 'certificate', 'approve', 'alice')
  t.equal(approved.code, 0, approved.stderr)
  t.match(approved.stdout, 'certificatesigningrequest.certificates.k8s.io/alice approved')
  const cert = await issued('alice')
  t.ok(cert.verify(new X509Certificate(ca.certPem).publicKey), 'signed by the cluster CA')
  t.same(cert.subject.split('\n').sort(), ['CN=alice', 'O=dev'])
  t.equal(lifetime(cert), 7200 + 300, 'the requested two hours, backdated 5 minutes')
  const listed = await kubectl(admin, 'get', 'csr', 'alice')
  t.match(listed.stdout, /Approved,Issued/)
  const condition = await kubectl(admin, 'get', 'csr', 'alice', '-o', 'jsonpath={.status.conditions[0].reason}')
  t.equal(condition.stdout, 'KubectlApprove')
  const described = await kubectl(admin, 'describe', 'csr', 'alice')
  t.equal(described.code, 0, described.stderr)
  for (const line of [/Requesting User:\s+admin/, /Signer:\s+orch\.io\/orch-apiserver-client/, /Requested Duration:\s+120m/, /Status:\s+Approved,Issued/, /Common Name:\s+alice/, /Organization:\s+dev/]) {
    t.match(described.stdout, line)
  }
})

t.test('invalid requests are refused with a clear Status; a signer rule breaker fails; a denied one is never signed', async t => {
  const legacy = await kubectl(admin, 'create', '-f', await csrFile('legacy', { commonName: 'x' }, { signerName: 'orch.io/legacy-unknown', usages: ['client auth'] }))
  t.not(legacy.code, 0)
  t.match(legacy.stderr, 'The CertificateSigningRequest "legacy" is invalid: spec.signerName: Invalid value: "orch.io/legacy-unknown": the legacy signerName is not allowed via this API version')
  const usage = await kubectl(admin, 'create', '-f', await csrFile('usage', { commonName: 'x' }, { signerName: 'orch.io/orch-apiserver-client', usages: ['flying'] }))
  t.not(usage.code, 0)
  t.match(usage.stderr, 'The CertificateSigningRequest "usage" is invalid: spec.usages[0]: Unsupported value: "flying": supported values:')
  const short = await kubectl(admin, 'create', '-f', await csrFile('short', { commonName: 'x' }, { signerName: 'orch.io/orch-apiserver-client', usages: ['client auth'], expirationSeconds: 60 }))
  t.match(short.stderr, 'spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 600 seconds (10 minutes)')

  t.equal((await kubectl(admin, 'create', '-f', await csrFile('server', { commonName: 'x' }, { signerName: 'orch.io/orch-apiserver-client', usages: ['server auth'] }))).code, 0)
  t.equal((await kubectl(admin, 'certificate', 'approve', 'server')).code, 0)
  const failed = await until(async () => {
    const r = await kubectl(admin, 'get', 'csr', 'server', '-o', 'jsonpath={.status.conditions[?(@.type=="Failed")].message}')
    return r.stdout !== '' ? r.stdout : undefined
  })
  t.equal(failed, 'invalid usage for client certificate: server auth')
  t.match((await kubectl(admin, 'get', 'csr', 'server')).stdout, /Approved,Failed/)

  t.equal((await kubectl(admin, 'create', '-f', await csrFile('denied', { commonName: 'x' }, { signerName: 'orch.io/orch-apiserver-client', usages: ['client auth'] }))).code, 0)
  t.equal((await kubectl(admin, 'certificate', 'deny', 'denied')).code, 0)
  const approveDenied = await kubectl(admin, 'certificate', 'approve', 'denied')
  t.not(approveDenied.code, 0, 'a denied request cannot be approved')
  t.match(approveDenied.stderr, /Approved and Denied conditions are mutually exclusive|is already Denied/)
  await new Promise(resolve => setTimeout(resolve, 300))
  t.match((await kubectl(admin, 'get', 'csr', 'denied')).stdout, /denied\s+.*Denied\n/)
})

t.test('a bootstrap token from `orch admin token create` authenticates; its orchlet CSR is approved and signed automatically', async t => {
  let out = ''
  const code = await main(['admin', 'token', 'create', '--kubeconfig', admin, '--ttl', '1h'], { out: s => { out += s }, err: s => { out += s } })
  t.equal(code, 0, out)
  const token = out.trim()
  t.match(token, /^[a-z0-9]{6}\.[a-z0-9]{16}$/)
  const bootstrap = kubeconfigWithToken('bootstrap', token)
  const node = { commonName: 'system:node:n1', organizations: ['system:nodes'] }
  const created = await kubectl(bootstrap, 'create', '-f', await csrFile('node-n1', node,
    { signerName: 'orch.io/orch-apiserver-client-orchlet', usages: ['digital signature', 'client auth'] }))
  t.equal(created.code, 0, created.stderr)
  const requester = await kubectl(admin, 'get', 'csr', 'node-n1', '-o', 'jsonpath={.spec.username} {.spec.groups}')
  t.equal(requester.stdout, `system:bootstrap:${token.slice(0, 6)} ["system:bootstrappers","system:bootstrappers:orch:default-node-token","system:authenticated"]`)
  const cert = await issued('node-n1')
  t.same(cert.subject.split('\n').sort(), ['CN=system:node:n1', 'O=system:nodes'])
  t.equal(lifetime(cert), 365 * 24 * 3600, 'the signing duration, one year')
  const reason = await kubectl(admin, 'get', 'csr', 'node-n1', '-o', 'jsonpath={.status.conditions[0].reason}')
  t.equal(reason.stdout, 'AutoApproved')
})

t.test('an expired or unknown bootstrap token is refused with 401', async t => {
  const secret = bootstrapTokenSecret('expird', '0123456789abcdef', { expiresAt: new Date(Date.now() - 1000), groups: [] })
  const file = join(dir, 'expired-secret.json')
  writeFileSync(file, JSON.stringify(secret))
  t.equal((await kubectl(admin, 'create', '-f', file)).code, 0)
  for (const token of ['expird.0123456789abcdef', 'nosuch.0123456789abcdef']) {
    const r = await kubectl(kubeconfigWithToken('refused', token), 'get', 'namespaces')
    t.not(r.code, 0)
    t.match(r.stderr, 'error: You must be logged in to the server (Unauthorized)', token)
  }
})

t.test('orch kubeconfig --user writes a kubeconfig whose client certificate names the user and groups', async t => {
  const output = join(dir, 'bob.kubeconfig')
  let err = ''
  const code = await main(['kubeconfig', '--user', 'bob', '--group', 'dev', '--group', 'ops', '--expiration', '1h', '--kubeconfig', admin, '--output', output],
    { out: () => {}, err: s => { err += s } })
  t.equal(code, 0, err)
  const doc = parseYaml(readFileSync(output, 'utf8')) as { clusters: Array<{ cluster: { server: string } }>, users: Array<{ name: string, user: Record<string, string> }>, 'current-context': string }
  t.equal(doc.clusters[0].cluster.server, server)
  t.equal(doc['current-context'], 'bob')
  t.equal(doc.users[0].name, 'bob')
  const cert = new X509Certificate(Buffer.from(doc.users[0].user['client-certificate-data'], 'base64'))
  t.same(cert.subject.split('\n').sort(), ['CN=bob', 'O=dev', 'O=ops'])
  t.equal(lifetime(cert), 3600 + 300)
  t.ok(cert.verify(new X509Certificate(ca.certPem).publicKey))
  t.match(Buffer.from(doc.users[0].user['client-key-data'], 'base64').toString(), /^-----BEGIN PRIVATE KEY-----/)
  // The new kubeconfig works: bob's requests are bob's, in his groups.
  const created = await kubectl(output, 'create', '-f', await csrFile('by-bob', { commonName: 'b' }, { signerName: 'orch.io/orch-apiserver-client', usages: ['client auth'] }))
  t.equal(created.code, 0, created.stderr)
  const requester = await kubectl(admin, 'get', 'csr', 'by-bob', '-o', 'jsonpath={.spec.username} {.spec.groups}')
  t.equal(requester.stdout, 'bob ["dev","ops","system:authenticated"]')
  const usage = await main(['kubeconfig', '--group', 'dev', '--kubeconfig', admin], { out: () => {}, err: () => {} })
  t.equal(usage, 2, 'without --user it is a usage error')
})
