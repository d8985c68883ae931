import t, { type Test } from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Agent, request } from 'undici'
import selfsigned from 'selfsigned'
import { createAgentServer, type AgentView } from './agent-server.js'
import { createAuthenticator } from './authn.js'
import { createAuthorizer } from './authz.js'
import { loadServingTls } from './tls.js'
import { createApiClient } from '../../apiserver/client/rest-client.js'
import { ComponentMetrics } from '../../apiserver/metrics/component-metrics.js'
import { attributesFor } from './authz.js'
import { connect as tlsConnect } from 'node:tls'
import { X509Certificate } from 'node:crypto'
import { createCa, issueCertificate } from '../../apiserver/pki/certs.js'

const logger = { warn () {}, info () {} }

function view (logPath: string): AgentView {
  return {
    pods: () => [{ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p1', namespace: 'default' } }],
    containerLogPath: (ns, pod, c, previous) => ns === 'default' && pod === 'p1' && c === 'main' && !previous ? logPath : undefined,
    containerWaiting: (ns, pod, c) => ns === 'default' && pod === 'p1' && c === 'init' ? 'PodInitializing' : undefined,
    hasContainer: (ns, pod, c) => ns === 'default' && pod === 'p1' && (c === 'main' || c === 'init'),
    containerRunning: () => false,
    statsSummary: async () => ({ node: { nodeName: 'node-a' }, pods: [] }),
    healthChecks: () => [{ name: 'ping', ok: true }, { name: 'syncloop', ok: true }]
  }
}

/** A port that was free a moment ago: 0 means "disabled" for the read-only and healthz ports. */
async function freePort (): Promise<number> {
  const s = createServer()
  await new Promise<void>(resolve => s.listen(0, '127.0.0.1', resolve))
  const port = (s.address() as AddressInfo).port
  await new Promise<void>(resolve => s.close(() => resolve()))
  return port
}

async function body (res: { body: { text(): Promise<string> } }): Promise<string> { return await res.body.text() }

/** A stand-in API server answering TokenReview and SubjectAccessReview, counting calls. */
async function reviewServer (t: Test): Promise<{ url: string; calls: { token: number; sar: number } }> {
  const calls = { token: 0, sar: 0 }
  const server = createServer((req: IncomingMessage, res) => {
    let text = ''
    req.on('data', c => { text += c })
    req.on('end', () => {
      const review = JSON.parse(text)
      if (req.url?.includes('tokenreviews') === true) {
        calls.token++
        const ok = review.spec.token === 'good-token'
        review.status = ok ? { authenticated: true, user: { username: 'alice', groups: ['devs'] } } : { authenticated: false }
      } else {
        calls.sar++
        review.status = { allowed: review.spec.user === 'alice' && review.spec.resourceAttributes.subresource === 'proxy', reason: 'test policy' }
      }
      res.writeHead(201, { 'content-type': 'application/json' })
      res.end(JSON.stringify(review))
    })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.close() })
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, calls }
}



async function start (t: Test, opts: { anonymous: boolean; clientCa?: string; apiUrl?: string; webhookAuthz?: boolean }) {
  const dir = mkdtempSync(join(tmpdir(), 'orchlet-srv-'))
  const logPath = join(dir, 'main.log')
  writeFileSync(logPath, [
    '2026-01-01T00:00:00.000000001Z stdout F first',
    '2026-01-01T00:00:01.000000001Z stdout P sec',
    '2026-01-01T00:00:01.000000002Z stdout F ond',
    '2026-01-01T00:00:02.000000001Z stderr F third', ''
  ].join('\n'))
  const tls = await loadServingTls({ certDir: join(dir, 'pki'), tlsCipherSuites: [], nodeName: 'node-a', addresses: ['127.0.0.1'] })
  const client = opts.apiUrl !== undefined
    ? createApiClient({ connection: { server: opts.apiUrl, insecureSkipTlsVerify: false }, qps: 0, burst: 0, contentType: 'application/json', userAgent: 'test' })
    : undefined
  const now = () => Date.now()
  const server = createAgentServer({
    view: view(logPath),
    nodeName: 'node-a',
    address: '127.0.0.1',
    port: 0,
    readOnlyPort: await freePort(),
    healthzBindAddress: '127.0.0.1',
    healthzPort: await freePort(),
    enableServer: true,
    enableDebuggingHandlers: true,
    tls,
    clientCaPem: opts.clientCa !== undefined ? Buffer.from(opts.clientCa) : undefined,
    authenticate: createAuthenticator({ anonymous: opts.anonymous, clientCertificates: opts.clientCa !== undefined, tokenWebhook: client ? { client, cacheTtlMs: 60_000 } : undefined, now }),
    authorize: createAuthorizer(opts.webhookAuthz === true && client ? { mode: 'Webhook', webhook: { client, authorizedTtlMs: 60_000, unauthorizedTtlMs: 60_000 }, now } : { mode: 'AlwaysAllow', now }),
    logger,
    configz: () => ({ orchletconfig: { port: 10250 } }),
    metrics: new Map([['/metrics', async () => {
      const m = new ComponentMetrics({ version: '1.29', processMetrics: false })
      m.gauge({ name: 'kubelet_running_pods', help: 'Number of pods that have a running pod sandbox' }).set(1)
      return await m.text()
    }]])
  })
  await server.start()
  t.teardown(async () => { await server.close(); await client?.close(); rmSync(dir, { recursive: true, force: true }) })
  return { port: server.ports().port!, ports: server.ports(), ca: tls.cert.toString(), server }
}

t.test('serves the pod list over TLS to anonymous callers when anonymous auth is on', async t => {
  const s = await start(t, { anonymous: true })
  const res = await request(`https://127.0.0.1:${s.port}/pods`, { dispatcher: new Agent({ connect: { ca: s.ca, servername: 'node-a' } }) })
  t.equal(res.statusCode, 200)
  const list = JSON.parse(await body(res))
  t.equal(list.kind, 'PodList')
  t.equal(list.items[0].metadata.name, 'p1')
})

t.test('answers 401 to anonymous callers when anonymous auth is off', async t => {
  const s = await start(t, { anonymous: false })
  const res = await request(`https://127.0.0.1:${s.port}/pods`, { dispatcher: new Agent({ connect: { rejectUnauthorized: false } }) })
  t.equal(res.statusCode, 401)
  t.equal(await body(res), 'Unauthorized\n')
})

t.test('authenticates a client certificate signed by the client CA', async t => {
  const ca = await selfsigned.generate([{ name: 'commonName', value: 'test-ca' }], { keyType: 'ec', algorithm: 'sha256', extensions: [{ name: 'basicConstraints', cA: true }, { name: 'keyUsage', keyCertSign: true, digitalSignature: true }] } as never)
  const clientCert = await selfsigned.generate([{ name: 'commonName', value: 'admin' }, { name: 'organizationName', value: 'ops' }], { keyType: 'ec', algorithm: 'sha256', ca: { key: ca.private, cert: ca.cert } } as never)
  const s = await start(t, { anonymous: false, clientCa: ca.cert })
  const res = await request(`https://127.0.0.1:${s.port}/pods`, { dispatcher: new Agent({ connect: { rejectUnauthorized: false, cert: clientCert.cert, key: clientCert.private } }) })
  t.equal(res.statusCode, 200)
  await body(res)
  const anon = await request(`https://127.0.0.1:${s.port}/pods`, { dispatcher: new Agent({ connect: { rejectUnauthorized: false } }) })
  t.equal(anon.statusCode, 401)
  await body(anon)
})

t.test('updateTls serves a new certificate from the next handshake on, keeping client certificate authentication', async t => {
  const ca = await createCa('cluster-ca')
  const admin = await issueCertificate(ca, { subject: { commonName: 'admin' }, usage: 'client' })
  const s = await start(t, { anonymous: false, clientCa: ca.certPem })
  const peer = async (): Promise<string> => await new Promise((resolve, reject) => {
    const sock = tlsConnect({ host: '127.0.0.1', port: s.port, rejectUnauthorized: false }, () => { resolve(sock.getPeerCertificate().fingerprint256); sock.destroy() })
    sock.on('error', reject)
  })
  const before = await peer()
  t.equal(before, new X509Certificate(s.ca).fingerprint256, 'the self-signed pair first')
  const issued = await issueCertificate(ca, { subject: { commonName: 'system:node:node-a', organizations: ['system:nodes'] }, usage: 'server', hosts: ['node-a', '127.0.0.1'] })
  s.server.updateTls({ cert: Buffer.from(issued.certPem), key: Buffer.from(issued.keyPem) })
  t.equal(await peer(), new X509Certificate(issued.certPem).fingerprint256, 'then the issued one')
  const res = await request(`https://127.0.0.1:${s.port}/pods`, { dispatcher: new Agent({ connect: { ca: ca.certPem, servername: 'node-a', cert: admin.certPem, key: admin.keyPem } }) })
  t.equal(res.statusCode, 200, 'verified against the cluster CA; the client certificate still authenticates')
  await body(res)
})

t.test('checks bearer tokens with a cached TokenReview and authorizes with a cached SubjectAccessReview', async t => {
  const api = await reviewServer(t)
  const s = await start(t, { anonymous: false, apiUrl: api.url, webhookAuthz: true })
  const agent = new Agent({ connect: { rejectUnauthorized: false } })
  const get = async (path: string, token: string) => {
    const res = await request(`https://127.0.0.1:${s.port}${path}`, { dispatcher: agent, headers: { authorization: `Bearer ${token}` } })
    return { code: res.statusCode, text: await body(res) }
  }
  t.equal((await get('/pods', 'good-token')).code, 200)
  t.equal((await get('/pods', 'good-token')).code, 200)
  t.equal(api.calls.token, 1, 'the second token check came from the cache')
  t.equal(api.calls.sar, 1, 'the second access check came from the cache')
  const stats = await get('/stats/summary', 'good-token')
  t.equal(stats.code, 403, 'the policy allows proxy only, not stats')
  t.equal(stats.text, 'Forbidden (user=alice, verb=get, resource=nodes, subresource=stats): test policy\n')
  t.equal((await get('/pods', 'bad-token')).code, 401)
})

t.test('returns container logs with tailLines and timestamps, joining partial lines', async t => {
  const s = await start(t, { anonymous: true })
  const agent = new Agent({ connect: { rejectUnauthorized: false } })
  const all = await request(`https://127.0.0.1:${s.port}/containerLogs/default/p1/main`, { dispatcher: agent })
  t.equal(await body(all), 'first\nsecond\nthird\n')
  const tail = await request(`https://127.0.0.1:${s.port}/containerLogs/default/p1/main?tailLines=1&timestamps=true`, { dispatcher: agent })
  t.equal(await body(tail), '2026-01-01T00:00:02.000000001Z third\n')
  const missing = await request(`https://127.0.0.1:${s.port}/containerLogs/default/p1/other`, { dispatcher: agent })
  t.equal(missing.statusCode, 404)
  await body(missing)
  const waiting = await request(`https://127.0.0.1:${s.port}/containerLogs/default/p1/init`, { dispatcher: agent })
  t.equal(waiting.statusCode, 400)
  t.equal(JSON.parse(await body(waiting)).message, 'container "init" in pod "p1" is waiting to start: PodInitializing')
  const previous = await request(`https://127.0.0.1:${s.port}/containerLogs/default/p1/main?previous=true`, { dispatcher: agent })
  t.equal(previous.statusCode, 400)
  t.equal(JSON.parse(await body(previous)).message, 'previous terminated container "main" in pod "p1" not found')
})

t.test('the read-only port serves pods but not logs, and the healthz port serves health', async t => {
  const s = await start(t, { anonymous: false })
  const pods = await request(`http://127.0.0.1:${s.ports.readOnlyPort}/pods`)
  t.equal(pods.statusCode, 200)
  await body(pods)
  const logs = await request(`http://127.0.0.1:${s.ports.readOnlyPort}/containerLogs/default/p1/main`)
  t.equal(logs.statusCode, 404)
  await body(logs)
  const hz = await request(`http://127.0.0.1:${s.ports.healthzPort}/healthz?verbose`)
  t.equal(hz.statusCode, 200)
  t.equal(await body(hz), '[+]ping ok\n[+]syncloop ok\nhealthz check passed\n')
})

t.test('serves /configz on the secured port and /metrics on both, as the kubelet does', async t => {
  const s = await start(t, { anonymous: true })
  const agent = new Agent({ connect: { rejectUnauthorized: false } })
  const configz = await request(`https://127.0.0.1:${s.port}/configz`, { dispatcher: agent })
  t.equal(configz.statusCode, 200)
  t.same(JSON.parse(await body(configz)), { orchletconfig: { port: 10250 } })
  const roConfigz = await request(`http://127.0.0.1:${s.ports.readOnlyPort}/configz`)
  t.equal(roConfigz.statusCode, 404, 'not on the read-only port')
  await body(roConfigz)
  for (const url of [`https://127.0.0.1:${s.port}/metrics`, `http://127.0.0.1:${s.ports.readOnlyPort}/metrics`]) {
    const m = await request(url, { dispatcher: url.startsWith('https') ? agent : undefined })
    t.equal(m.statusCode, 200)
    t.equal(m.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8')
    t.match(await body(m), /^# HELP kubelet_running_pods \[ALPHA\] .*\n# TYPE kubelet_running_pods gauge\nkubelet_running_pods 1\n$/)
  }
})

t.test('paths map to node subresources as the kubelet 1.29 maps them', async t => {
  const table: Array<[string, string, string, string]> = [
    ['GET', '/stats/summary', 'get', 'stats'],
    ['GET', '/stats', 'get', 'stats'],
    ['GET', '/statsfoo', 'get', 'proxy'],
    ['GET', '/metrics/cadvisor', 'get', 'metrics'],
    ['GET', '/metrics', 'get', 'metrics'],
    ['GET', '/logs/syslog', 'get', 'log'],
    ['GET', '/spec/', 'get', 'spec'],
    ['POST', '/checkpoint/default/p/c', 'create', 'checkpoint'],
    ['GET', '/configz', 'get', 'proxy'],
    ['GET', '/pods', 'get', 'proxy'],
    ['GET', '/containerLogs/default/p/c', 'get', 'proxy'],
    ['HEAD', '/healthz', 'get', 'proxy'],
    ['DELETE', '/pods', 'delete', 'proxy']
  ]
  for (const [method, path, verb, subresource] of table) {
    t.same(attributesFor(method, path, 'node-a'), { verb, resource: 'nodes', subresource, name: 'node-a' }, `${method} ${path}`)
  }
})
