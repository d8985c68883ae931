// The orchlet's certificates against a real API server over TLS: bootstrap-token join, client certificate rotation, serving certificates.
import t, { type Test } from 'tap'
import { X509Certificate } from 'node:crypto'
import { readlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { connect as tlsConnect, type TLSSocket } from 'node:tls'
import type { IncomingMessage } from 'node:http'
import { openFixture, silentLogger } from '../apiserver/registry/testing.js'
import { createApiServer } from '../apiserver/server.js'
import { createAuthenticator } from '../apiserver/auth/authenticator.js'
import { x509Authenticator } from '../apiserver/auth/x509.js'
import { bootstrapTokenAuthenticator, registrySecretLookup } from '../apiserver/auth/bootstrap-tokens.js'
import { bootstrapTokenSecret, DEFAULT_TOKEN_GROUP } from '../apiserver/cli/token.js'
import { inProcessClient } from '../apiserver/controllers/client/in-process.js'
import { RESOURCES } from '../apiserver/controllers/client/types.js'
import { startControllerManager } from '../apiserver/controllers/manager.js'
import { FakeClock } from '../apiserver/controllers/clock.js'
import { createCa, issueCertificate, type CertificateAuthority } from '../apiserver/pki/certs.js'
import { createApiClient, type ApiClient, type JsonObject } from '../apiserver/client/rest-client.js'
import { loadKubeconfig, type Connection } from '../apiserver/client/kubeconfig.js'
import { createAgentServer } from '../agent/server/agent-server.js'
import { createAuthenticator as createOrchletAuthenticator } from '../agent/server/authn.js'
import { createAuthorizer } from '../agent/server/authz.js'
import { loadServingTls } from '../agent/server/tls.js'
import { setUpCertificates } from '../agent/node/certificates/orchlet-certificates.js'
import { createCsrPem, generatePrivateKey, nodeTemplate } from '../agent/node/certificates/csr.js'
import { CSR_PATH, requestCertificate } from '../agent/node/certificates/request.js'
import { loadOrchletConfig } from '../agent/config/load.js'
import { runAgent } from '../agent/agent.js'

const TOKEN = 'abcdef.0123456789abcdef'
const TEN_MINUTES = 600_000

interface Cluster { url: string; ca: CertificateAuthority; admin: ApiClient; seen: string[] }

/** An HTTPS API server (x509 and bootstrap-token authentication), csrsigning (10-minute certificates) and csrapproving. */
async function startCluster (t: Test): Promise<Cluster> {
  const fx = await openFixture()
  const ca = await createCa('orch-ca')
  const serving = await issueCertificate(ca, { subject: { commonName: 'orch-apiserver' }, usage: 'server', hosts: ['127.0.0.1'] })
  // Fingerprints of the client certificates the server authenticated, in order.
  const seen: string[] = []
  const x509 = x509Authenticator()
  const recordingX509 = {
    async authenticate (req: IncomingMessage) {
      const r = await x509.authenticate(req)
      if (r !== undefined) seen.push((req.socket as TLSSocket).getPeerCertificate().fingerprint256)
      return r
    }
  }
  const server = createApiServer({
    registry: fx.registry,
    logger: silentLogger,
    authentication: createAuthenticator({ request: [recordingX509], tokens: [bootstrapTokenAuthenticator(registrySecretLookup(fx.registry))], apiAudiences: [], anonymous: false }),
    tls: { cert: serving.certPem, key: serving.keyPem, clientCa: ca.certPem }
  })
  const { port } = await server.listen({ port: 0, host: '127.0.0.1' })
  const internal = inProcessClient(fx.registry, 'orch-controller-manager')
  const cm = startControllerManager({ client: internal, logger: silentLogger, controllers: ['csrsigning', 'csrapproving'], settings: { csrSigning: { ca, durationMs: TEN_MINUTES } } })
  await internal.resource(RESOURCES.namespaces).create('', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kube-system' } }).catch(() => {})
  await internal.resource(RESOURCES.secrets).create('kube-system', bootstrapTokenSecret('abcdef', '0123456789abcdef', { groups: [DEFAULT_TOKEN_GROUP] }))
  const url = `https://127.0.0.1:${port}`
  const adminPair = await issueCertificate(ca, { subject: { commonName: 'admin', organizations: ['system:masters'] }, usage: 'client' })
  const admin = client({ server: url, caPem: Buffer.from(ca.certPem), insecureSkipTlsVerify: false, clientCertPem: Buffer.from(adminPair.certPem), clientKeyPem: Buffer.from(adminPair.keyPem) })
  t.teardown(async () => { cm.stop(); await admin.close(); await server.close(); await fx.close() })
  return { url, ca, admin, seen }
}

function client (connection: Connection): ApiClient {
  return createApiClient({ connection, qps: 0, burst: 0, contentType: 'application/json', userAgent: 'orchlet/test' })
}

function bootstrapFile (dir: string, c: Cluster): string {
  const path = join(dir, 'bootstrap-orchlet.conf')
  writeFileSync(path, [
    'apiVersion: v1', 'kind: Config',
    `clusters: [{name: orch, cluster: {server: "${c.url}", certificate-authority-data: ${Buffer.from(c.ca.certPem).toString('base64')}}}]`,
    `users: [{name: bootstrap, user: {token: "${TOKEN}"}}]`,
    'contexts: [{name: join, context: {cluster: orch, user: bootstrap}}]', 'current-context: join', ''
  ].join('\n'))
  return path
}

const fingerprint = (pem: string | Buffer): string => new X509Certificate(pem).fingerprint256
const conditions = (csr: JsonObject): Array<{ type: string; reason?: string; message?: string }> => ((csr.status as { conditions?: [] } | undefined)?.conditions ?? [])

async function until<T> (fn: () => Promise<T | undefined>, what: string, ms = 15_000): Promise<T> {
  const end = Date.now() + ms
  for (;;) {
    const v = await fn()
    if (v !== undefined) return v
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise(resolve => setTimeout(resolve, 50))
  }
}

async function csrs (c: Cluster): Promise<JsonObject[]> { return ((await c.admin.get(CSR_PATH)).items ?? []) as JsonObject[] }

t.test('an orchlet joins with a bootstrap token, rotates its client certificate and serves an approved serving certificate', async t => {
  const c = await startCluster(t)
  const dir = t.testdir()
  const clock = new FakeClock(Date.now())
  const config = {
    orchconfig: join(dir, 'orchlet.conf'), bootstrapOrchconfig: bootstrapFile(dir, c), certDir: join(dir, 'pki'),
    rotateCertificates: true, serverTLSBootstrap: true
  }
  const certs = await setUpCertificates({ config, nodeName: 'edge-1', makeClient: client, logger: silentLogger, clock, random: () => 0.5, expirationSeconds: 600, pollMs: 2000 })
  t.teardown(async () => { certs.stop(); await certs.client.close() })

  await t.test('bootstrap: the request is made as the bootstrap token\'s user and approved automatically', async t => {
    const [join] = await csrs(c)
    t.match(join, { metadata: { name: /^node-csr-/ }, spec: { username: 'system:bootstrap:abcdef', signerName: 'orch.io/orch-apiserver-client-orchlet' } })
    t.ok((join.spec as { groups: string[] }).groups.includes('system:bootstrappers'))
    t.match(conditions(join), [{ type: 'Approved', reason: 'AutoApproved' }])
  })

  await t.test('the written --orchconfig authenticates as system:node:edge-1', async t => {
    const conn = loadKubeconfig(config.orchconfig)
    t.equal(conn.token, undefined)
    const own = client(conn)
    t.teardown(() => own.close())
    const key = await generatePrivateKey()
    const req = await requestCertificate(own, { csrPem: await createCsrPem(key, nodeTemplate('edge-1')), signerName: 'orch.io/orch-apiserver-client-orchlet', usages: ['digital signature', 'client auth'] })
    const csr = await c.admin.get(`${CSR_PATH}/${req.name}`)
    t.equal((csr.spec as { username: string }).username, 'system:node:edge-1', 'the API server took the certificate as the node')
    t.ok((csr.spec as { groups: string[] }).groups.includes('system:nodes'))
    await c.admin.delete(`${CSR_PATH}/${req.name}`)
  })

  await t.test('rotation: at 70-90% of the lifetime a renewal is requested with the node\'s certificate and the client switches to it', async t => {
    const manager = certs.clientManager!
    const first = manager.current()!
    const link = readlinkSync(join(config.certDir, 'orchlet-client-current.pem'))
    const due = manager.nextAttemptAt()!
    const life = first.notAfter - first.notBefore
    t.ok(due >= first.notBefore + 0.7 * life && due <= first.notBefore + 0.9 * life, 'deadline inside the 70-90% window')
    const done = manager.attempted()
    clock.advance(due - clock.now())
    t.equal(await done, true)
    const renewal = await until(async () => (await csrs(c)).find(x => /^csr-/.test(String((x.metadata as { name: string }).name))), 'the renewal request')
    t.match(renewal.spec, { username: 'system:node:edge-1', signerName: 'orch.io/orch-apiserver-client-orchlet', expirationSeconds: 600 })
    t.match(conditions(renewal), [{ type: 'Approved', reason: 'AutoApproved', message: 'Auto approving self orchlet client certificate after SubjectAccessReview.' }])
    const second = manager.current()!
    t.not(fingerprint(second.certPem), fingerprint(first.certPem))
    t.not(readlinkSync(join(config.certDir, 'orchlet-client-current.pem')), link, '-current points at the new file')
    t.equal(fingerprint(loadKubeconfig(config.orchconfig).clientCertPem!), fingerprint(second.certPem), '--orchconfig (through -current) now names the new pair')
    const before = c.seen.length
    await certs.client.get('/api/v1/namespaces/default')
    t.equal(c.seen.slice(before).at(-1), fingerprint(second.certPem), 'the API client presents the renewed certificate')
  })

  await t.test('serving: the request is not auto-approved; once an admin approves, the orchlet serves the issued certificate', async t => {
    const tls = await loadServingTls({ certDir: config.certDir, tlsCipherSuites: [], nodeName: 'edge-1', addresses: ['127.0.0.1'] })
    const server = createAgentServer({
      view: { pods: () => [], containerLogPath: () => undefined, containerWaiting: () => undefined, hasContainer: () => false, containerRunning: () => false, statsSummary: async () => ({}), healthChecks: () => [] },
      nodeName: 'edge-1', address: '127.0.0.1', port: 0, readOnlyPort: 0, healthzBindAddress: '127.0.0.1', healthzPort: 0, enableServer: true, enableDebuggingHandlers: false,
      tls, authenticate: createOrchletAuthenticator({ anonymous: true, clientCertificates: false, now: Date.now }), authorize: createAuthorizer({ mode: 'AlwaysAllow', now: Date.now }), logger: silentLogger
    })
    await server.start()
    t.teardown(() => server.close())
    const port = server.ports().port!
    const presented = async (): Promise<string> => await new Promise((resolve, reject) => {
      const s = tlsConnect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => { resolve(s.getPeerCertificate().fingerprint256); s.destroy() })
      s.on('error', reject)
    })
    t.equal(await presented(), fingerprint(tls.cert), 'the self-signed pair until one is issued')

    certs.serve(server, [{ type: 'InternalIP', address: '127.0.0.1' }, { type: 'Hostname', address: 'edge-1' }])
    clock.advance(0)
    const serving = await until(async () => (await csrs(c)).find(x => (x.spec as { signerName: string }).signerName === 'orch.io/orchlet-serving'), 'the serving request')
    t.match(serving.spec, { username: 'system:node:edge-1', usages: ['digital signature', 'server auth'] })
    await new Promise(resolve => setTimeout(resolve, 500))
    const name = String((serving.metadata as { name: string }).name)
    t.same(conditions(await c.admin.get(`${CSR_PATH}/${name}`)), [], 'no automatic approval for serving certificates')
    t.equal(await presented(), fingerprint(tls.cert))

    const done = certs.servingManager()!.attempted()
    const cur = await c.admin.get(`${CSR_PATH}/${name}`)
    cur.status = { conditions: [{ type: 'Approved', status: 'True', reason: 'AdminApproved', message: 'approved by the test' }] }
    await c.admin.update(`${CSR_PATH}/${name}/approval`, cur)
    t.equal(await done, true)
    const issued = certs.servingManager()!.current()!
    const verified = await new Promise<X509Certificate>((resolve, reject) => {
      const s = tlsConnect({ host: '127.0.0.1', port, ca: c.ca.certPem, servername: 'edge-1' }, () => { resolve(new X509Certificate(s.getPeerCertificate(true).raw)); s.destroy() })
      s.on('error', reject)
    })
    t.equal(verified.fingerprint256, fingerprint(issued.certPem), 'the issued certificate, verified against the cluster CA')
    t.ok(verified.checkIP('127.0.0.1') !== undefined && verified.checkHost('edge-1') !== undefined)
    t.equal(verified.subject.split('\n').sort().join(','), 'CN=system:node:edge-1,O=system:nodes')
  })
})

t.test('a client certificate that expired unrenewed is replaced through the bootstrap token', async t => {
  const c = await startCluster(t)
  const dir = t.testdir()
  const clock = new FakeClock(Date.now())
  const config = { orchconfig: join(dir, 'orchlet.conf'), bootstrapOrchconfig: bootstrapFile(dir, c), certDir: join(dir, 'pki'), rotateCertificates: true, serverTLSBootstrap: false }
  const certs = await setUpCertificates({ config, nodeName: 'edge-1', makeClient: client, logger: silentLogger, clock, random: () => 0.5, expirationSeconds: 600, pollMs: 2000 })
  t.teardown(async () => { certs.stop(); await certs.client.close() })
  const manager = certs.clientManager!
  // The renewal window passes with the orchlet down; it comes back after the certificate's end.
  manager.stop()
  clock.advance(manager.current()!.notAfter - clock.now() + 60_000)
  manager.start()
  const done = manager.attempted()
  clock.advance(0)
  t.equal(await done, true)
  const requests = await csrs(c)
  t.equal(requests.length, 2)
  t.same(requests.map(r => (r.spec as { username: string }).username), ['system:bootstrap:abcdef', 'system:bootstrap:abcdef'], 'both made with the bootstrap token')
  const replacement = requests.find(r => (r.spec as { expirationSeconds?: number }).expirationSeconds === 600)
  t.match((replacement?.metadata as { name: string }).name, /^node-csr-/, 'the replacement is a bootstrap request')
  const before = c.seen.length
  await certs.client.get('/api/v1/namespaces/default')
  t.equal(c.seen.slice(before).at(-1), fingerprint(manager.current()!.certPem), 'the client uses the new certificate')
})

t.test('the orchlet (runAgent) started with --bootstrap-orchconfig joins, registers its node and serves an approved certificate', async t => {
  const c = await startCluster(t)
  const dir = t.testdir()
  const orchconfig = join(dir, 'orchlet.conf')
  const config = await loadOrchletConfig([
    '--orchconfig', orchconfig, '--bootstrap-orchconfig', bootstrapFile(dir, c), '--cert-dir', join(dir, 'pki'), '--root-dir', join(dir, 'root'),
    '--hostname-override', 'edge-2', '--address', '127.0.0.1', '--node-ip', '127.0.0.1', '--port', '0', '--read-only-port', '0', '--healthz-port', '0',
    '--container-runtime-endpoint', `unix://${join(dir, 'no-runtime.sock')}`, '--rotate-certificates', '--rotate-server-certificates'
  ], {}, { logger: { warn () {} } })
  const agent = await runAgent(config, { logger: silentLogger })
  t.teardown(() => agent.stop())
  t.match(new X509Certificate(loadKubeconfig(orchconfig).clientCertPem!).subject, 'CN=system:node:edge-2', '--orchconfig written by the bootstrap')
  const node = await until(async () => await c.admin.get('/api/v1/nodes/edge-2').catch(() => undefined), 'the node object')
  t.equal((node.metadata as { name: string }).name, 'edge-2', 'registered with the bootstrapped certificate')
  const serving = await until(async () => (await csrs(c)).find(x => (x.spec as { signerName: string }).signerName === 'orch.io/orchlet-serving'), 'the serving request')
  t.match(serving.spec, { username: 'system:node:edge-2' })
  const name = String((serving.metadata as { name: string }).name)
  const cur = await c.admin.get(`${CSR_PATH}/${name}`)
  cur.status = { conditions: [{ type: 'Approved', status: 'True', reason: 'AdminApproved', message: 'approved by the test' }] }
  await c.admin.update(`${CSR_PATH}/${name}/approval`, cur)
  const port = agent.ports().port!
  const presented = await until(async () => await new Promise<X509Certificate | undefined>(resolve => {
    const s = tlsConnect({ host: '127.0.0.1', port, ca: c.ca.certPem, servername: 'edge-2' }, () => { resolve(new X509Certificate(s.getPeerCertificate(true).raw)); s.destroy() })
    s.on('error', () => resolve(undefined))
  }), 'the issued serving certificate')
  t.equal(presented.subject.split('\n').sort().join(','), 'CN=system:node:edge-2,O=system:nodes', 'the orchlet port presents the issued certificate')
})
