// The proxy subresources forward to a pod's IP and port, a service's ready endpoint, and a node's orchlet port.
import t, { type Test } from 'tap'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { request } from 'undici'
import { startTestApiServer } from '../../test/api-server-fixture.js'

interface Seen { method: string; url: string; headers: IncomingMessage['headers']; body: string }

async function backend (t: Test, name: string): Promise<{ port: number; seen: Seen[] }> {
  const seen: Seen[] = []
  const s: Server = createServer((req, res) => {
    let body = ''
    req.on('data', c => { body += String(c) })
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body })
      res.writeHead(201, { 'content-type': 'text/plain', 'x-backend': name })
      res.end(`${name} ${req.method} ${req.url}`)
    })
  })
  await new Promise<void>(resolve => s.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>(resolve => s.close(() => resolve())))
  return { port: (s.address() as AddressInfo).port, seen }
}

async function call (url: string, method = 'GET', body?: string, headers: Record<string, string> = {}): Promise<{ status: number; text: string; headers: Record<string, unknown> }> {
  const r = await request(url, { method: method as 'GET', body, headers })
  return { status: r.statusCode, text: await r.body.text(), headers: r.headers }
}

async function create (base: string, path: string, obj: unknown): Promise<void> {
  const r = await call(base + path, 'POST', JSON.stringify(obj), { 'content-type': 'application/json' })
  if (r.status !== 201) throw new Error(`create ${path}: ${r.status} ${r.text}`)
}

async function setPodIP (base: string, name: string, ip: string): Promise<void> {
  const r = await call(`${base}/api/v1/namespaces/default/pods/${name}/status`, 'PATCH', JSON.stringify({ status: { podIP: ip, podIPs: [{ ip }] } }), { 'content-type': 'application/merge-patch+json' })
  if (r.status !== 200) throw new Error(`patch status: ${r.status} ${r.text}`)
}

t.test('pods/proxy forwards method, path, query and body to the pod IP and a named or numbered port', async t => {
  const api = await startTestApiServer(t)
  const web = await backend(t, 'web')
  await create(api.url, '/api/v1/namespaces/default/pods', {
    apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web' },
    spec: { containers: [{ name: 'c', image: 'x', ports: [{ name: 'http', containerPort: web.port }] }] }
  })
  await setPodIP(api.url, 'web', '127.0.0.1')
  const got = await call(`${api.url}/api/v1/namespaces/default/pods/web:http/proxy/a/b%20c?x=1&y=2`)
  t.equal(got.status, 201, 'the backend status passes through')
  t.equal(got.headers['x-backend'], 'web')
  t.equal(got.text, 'web GET /a/b%20c?x=1&y=2')
  const post = await call(`${api.url}/api/v1/namespaces/default/pods/web:${web.port}/proxy/submit`, 'POST', 'hello', { authorization: 'Bearer secret', 'content-type': 'text/plain' })
  t.equal(post.text, `web POST /submit`)
  const last = web.seen.at(-1)!
  t.equal(last.body, 'hello', 'the request body is forwarded')
  t.equal(last.headers.authorization, undefined, 'the client credentials are not forwarded')
  const root = await call(`${api.url}/api/v1/namespaces/default/pods/http:web:http/proxy/`)
  t.equal(root.text, 'web GET /')
})

t.test('pods/proxy refuses a pod without an IP, an unknown port name and a bad scheme', async t => {
  const api = await startTestApiServer(t)
  await create(api.url, '/api/v1/namespaces/default/pods', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'x' }] } })
  const noIp = await call(`${api.url}/api/v1/namespaces/default/pods/p/proxy/`)
  t.equal(noIp.status, 400)
  t.match(JSON.parse(noIp.text), { kind: 'Status', reason: 'BadRequest' })
  await setPodIP(api.url, 'p', '127.0.0.1')
  t.equal((await call(`${api.url}/api/v1/namespaces/default/pods/p:nope/proxy/`)).status, 400)
  t.equal((await call(`${api.url}/api/v1/namespaces/default/pods/ftp:p:80/proxy/`)).status, 400)
  t.equal((await call(`${api.url}/api/v1/namespaces/default/pods/missing/proxy/`)).status, 404)
})

t.test('services/proxy picks a ready endpoint of the named service port', async t => {
  const api = await startTestApiServer(t)
  const web = await backend(t, 'svc')
  await create(api.url, '/api/v1/namespaces/default/services', {
    apiVersion: 'v1', kind: 'Service', metadata: { name: 'web' },
    spec: { ports: [{ name: 'http', port: 80 }, { name: 'admin', port: 81 }], selector: { app: 'web' } }
  })
  const before = await call(`${api.url}/api/v1/namespaces/default/services/web:http/proxy/x`)
  t.equal(before.status, 503, 'no endpoints yet')
  await create(api.url, '/api/v1/namespaces/default/endpoints', {
    apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'web' },
    subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ name: 'http', port: web.port }, { name: 'admin', port: 1 }] }]
  })
  t.equal((await call(`${api.url}/api/v1/namespaces/default/services/web:http/proxy/x?q=1`)).text, 'svc GET /x?q=1')
  t.equal((await call(`${api.url}/api/v1/namespaces/default/services/web:80/proxy/y`)).text, 'svc GET /y', 'by port number')
  t.equal((await call(`${api.url}/api/v1/namespaces/default/services/web:nope/proxy/y`)).status, 503)
})

t.test('nodes/proxy goes to the published orchlet port, and proxies are in discovery', async t => {
  const api = await startTestApiServer(t)
  const orchlet = await backend(t, 'orchlet')
  await create(api.url, '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } })
  const r = await call(`${api.url}/api/v1/nodes/n1/status`, 'PATCH', JSON.stringify({
    status: { addresses: [{ type: 'InternalIP', address: '127.0.0.1' }], daemonEndpoints: { kubeletEndpoint: { Port: orchlet.port } } }
  }), { 'content-type': 'application/merge-patch+json' })
  t.equal(r.status, 200)
  // The orchlet speaks HTTPS; a plain backend answers a TLS hello with garbage, which is a 503 naming the node.
  const got = await call(`${api.url}/api/v1/nodes/n1/proxy/stats/summary`)
  t.equal(got.status, 503)
  t.match(JSON.parse(got.text), { reason: 'ServiceUnavailable', message: /error trying to reach node/ })
  t.equal((await call(`${api.url}/api/v1/nodes/missing/proxy/stats/summary`)).status, 404)
  const doc = JSON.parse((await call(`${api.url}/api/v1`)).text) as { resources: Array<{ name: string; verbs: string[] }> }
  for (const name of ['nodes/proxy', 'pods/proxy', 'services/proxy']) {
    t.ok(doc.resources.find(x => x.name === name)?.verbs.includes('get'), `${name} is discovered`)
  }
})
