import t, { type Test } from 'tap'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { createServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import { pino } from 'pino'
import selfsigned from 'selfsigned'
import { Client, request } from 'undici'
import { createApiServer } from '../server.js'
import { createMemoryRegistry, definition, DEFINITIONS } from '../../test/fixtures/memory-registry.js'
import { StatusError } from '../errors/status-error.js'
import { chooseContainer, containerLogsUrl, nodeEndpoint, parsePodLogOptions } from './pod-log.js'

function statusOf (f: () => unknown): { code: number; message: string; reason: string } {
  try { f() } catch (err) {
    if (err instanceof StatusError) return { code: err.code, message: err.message, reason: err.reason }
    throw err
  }
  throw new Error('expected a StatusError')
}

t.test('parses every PodLogOptions parameter', async t => {
  const o = parsePodLogOptions(new URLSearchParams('container=c&follow=true&previous=1&timestamps=true&tailLines=3&limitBytes=10&sinceTime=2026-01-02T03:04:05.678Z&insecureSkipTLSVerifyBackend=true'), 'p')
  t.same(o, { container: 'c', follow: true, previous: true, timestamps: true, insecureSkipTLSVerifyBackend: true, tailLines: 3, limitBytes: 10, sinceSeconds: undefined, sinceTime: '2026-01-02T03:04:05Z' })
  t.same(parsePodLogOptions(new URLSearchParams(''), 'p'), { container: undefined, follow: false, previous: false, timestamps: false, insecureSkipTLSVerifyBackend: false, tailLines: undefined, limitBytes: undefined, sinceSeconds: undefined, sinceTime: undefined })
})

t.test('rejects bad parameter values naming the parameter', async t => {
  const cases: Array<[string, number, RegExp]> = [
    ['tailLines=abc', 400, /invalid value for tailLines: .*"abc"/],
    ['limitBytes=1.5', 400, /invalid value for limitBytes/],
    ['sinceSeconds=x', 400, /invalid value for sinceSeconds/],
    ['sinceTime=yesterday', 400, /invalid value for sinceTime/],
    ['follow=maybe', 400, /invalid value for follow/],
    ['previous=2', 400, /invalid value for previous/],
    ['tailLines=-1', 422, /PodLogOptions "p" is invalid: tailLines: Invalid value: -1: must be greater than or equal to 0/],
    ['limitBytes=0', 422, /limitBytes: Invalid value: 0: must be greater than 0/],
    ['sinceSeconds=0', 422, /sinceSeconds: Invalid value: 0: must be greater than 0/],
    ['sinceSeconds=5&sinceTime=2026-01-02T03:04:05Z', 422, /at most one of `sinceTime` or `sinceSeconds` may be specified/]
  ]
  for (const [q, code, message] of cases) {
    const st = statusOf(() => parsePodLogOptions(new URLSearchParams(q), 'p'))
    t.equal(st.code, code, q)
    t.match(st.message, message, q)
  }
})

t.test('chooses the container as Kubernetes does', async t => {
  const one = { metadata: { name: 'p' }, spec: { containers: [{ name: 'main' }] } }
  t.equal(chooseContainer(one, undefined), 'main')
  t.equal(chooseContainer(one, 'main'), 'main')
  const many = { metadata: { name: 'p' }, spec: { initContainers: [{ name: 'init' }], containers: [{ name: 'a' }, { name: 'b' }] } }
  t.equal(chooseContainer(many, 'init'), 'init', 'init containers have logs too')
  t.same(statusOf(() => chooseContainer(many, undefined)), { code: 400, reason: 'BadRequest', message: 'a container name must be specified for pod p, choose one of: [init a b]' })
  t.same(statusOf(() => chooseContainer(many, 'x')), { code: 400, reason: 'BadRequest', message: 'container x is not valid for pod p' })
})

t.test('finds the orchlet from the node status: InternalIP first, then Hostname', async t => {
  const status = (addresses: Array<{ type: string; address: string }>, Port?: number) => ({ metadata: { name: 'n' }, status: { addresses, daemonEndpoints: { kubeletEndpoint: { Port } } } })
  t.same(nodeEndpoint(status([{ type: 'Hostname', address: 'h' }, { type: 'InternalIP', address: '10.0.0.1' }], 10250)), { host: '10.0.0.1', port: 10250 })
  t.same(nodeEndpoint(status([{ type: 'Hostname', address: 'h' }], 1)), { host: 'h', port: 1 })
  t.match(statusOf(() => nodeEndpoint(status([], 1))).message, /node n has no InternalIP or Hostname address/)
  t.match(statusOf(() => nodeEndpoint(status([{ type: 'Hostname', address: 'h' }]))).message, /publishes no orchlet port/)
  t.equal(containerLogsUrl({ host: '::1', port: 5 }, 'ns', 'p', 'c', { follow: true, previous: false, timestamps: false, insecureSkipTLSVerifyBackend: false, tailLines: 0 }),
    'https://[::1]:5/containerLogs/ns/p/c?follow=true&tailLines=0')
  const since = { follow: false, previous: true, timestamps: false, insecureSkipTLSVerifyBackend: false, sinceTime: '2026-01-01T00:00:00Z' }
  t.equal(containerLogsUrl({ host: 'h', port: 5 }, 'ns', 'p', 'c', since, Date.parse('2026-01-01T00:01:30.500Z')),
    'https://h:5/containerLogs/ns/p/c?previous=true&sinceSeconds=91', 'sinceTime becomes whole seconds since then')
})

// A fake orchlet over HTTPS with a self-signed certificate (made once: key generation is the slow part).
const pems = await selfsigned.generate([{ name: 'commonName', value: 'node' }], { keyType: 'ec', days: 1 } as unknown as Parameters<typeof selfsigned.generate>[1])
async function fakeOrchlet (t: Test, handle: (req: IncomingMessage, res: ServerResponse) => void): Promise<number> {
  const server = createServer({ cert: pems.cert, key: pems.private }, handle)
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.closeAllConnections(); server.close() })
  return (server.address() as AddressInfo).port
}

async function apiWith (t: Test, orchletPort: number, connectTimeoutMs?: number): Promise<{ base: string; registry: ReturnType<typeof createMemoryRegistry> }> {
  const registry = createMemoryRegistry([...DEFINITIONS, definition({ kind: 'Pod', plural: 'pods' }), definition({ kind: 'Node', plural: 'nodes', namespaced: false })])
  const server = createApiServer({ registry, logger: pino({ level: 'silent' }), requestTimeoutMs: 2000, kubeletConnectTimeoutMs: connectTimeoutMs })
  const { port } = await server.listen({ port: 0 })
  t.teardown(() => server.close())
  const base = `http://127.0.0.1:${port}`
  const post = async (path: string, body: unknown): Promise<void> => {
    const r = await request(base + path, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } })
    await r.body.dump()
    if (r.statusCode !== 201) throw new Error(`create ${path}: ${r.statusCode}`)
  }
  await post('/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' }, status: { addresses: [{ type: 'InternalIP', address: '127.0.0.1' }], daemonEndpoints: { kubeletEndpoint: { Port: orchletPort } } } })
  await post('/api/v1/namespaces/default/pods', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web' }, spec: { nodeName: 'n1', containers: [{ name: 'main' }] } })
  await post('/api/v1/namespaces/default/pods', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'pending' }, spec: { containers: [{ name: 'main' }] } })
  return { base, registry }
}

t.test('streams the log from the orchlet and passes the options on', async t => {
  const asked: string[] = []
  const port = await fakeOrchlet(t, (req, res) => { asked.push(req.url ?? ''); res.writeHead(200, { 'content-type': 'text/plain' }); res.end('one\ntwo\n') })
  const { base } = await apiWith(t, port)
  const r = await request(`${base}/api/v1/namespaces/default/pods/web/log?tailLines=2&timestamps=true`)
  t.equal(r.statusCode, 200)
  t.equal(r.headers['content-type'], 'text/plain')
  t.equal(await r.body.text(), 'one\ntwo\n')
  t.same(asked, ['/containerLogs/default/web/main?timestamps=true&tailLines=2'])
})

t.test('follow streams lines as they come and a client disconnect aborts the orchlet request', async t => {
  let upstreamClosed!: () => void
  const closed = new Promise<boolean>(resolve => { upstreamClosed = () => resolve(true) })
  const port = await fakeOrchlet(t, (req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' })
    res.write('first\n')
    const timer = setInterval(() => res.write('tick\n'), 50)
    req.on('close', () => { clearInterval(timer); upstreamClosed() })
  })
  const { base } = await apiWith(t, port)
  const client = new Client(base)
  const r = await client.request({ method: 'GET', path: '/api/v1/namespaces/default/pods/web/log?follow=true' })
  t.equal(r.statusCode, 200)
  let text = ''
  for await (const chunk of r.body) {
    text += (chunk as Buffer).toString()
    if (text.split('\n').length > 3) break
  }
  t.match(text, /^first\ntick\n/)
  // Drop the connection, as kubectl does on Ctrl-C.
  await client.destroy()
  t.equal(await closed, true, 'the upstream request was closed')
})

t.test('maps orchlet and lookup failures to Status errors', async t => {
  const port = await fakeOrchlet(t, (_req, res) => {
    res.writeHead(404, { 'content-type': 'application/json' })
    res.end(JSON.stringify({ kind: 'Status', status: 'Failure', message: 'container "main" in pod "web" not found', reason: 'NotFound', code: 404 }))
  })
  const { base } = await apiWith(t, port)
  const get = async (path: string) => { const r = await request(base + path); return { code: r.statusCode, json: await r.body.json() as { message: string; reason: string } } }
  const upstream404 = await get('/api/v1/namespaces/default/pods/web/log')
  t.equal(upstream404.code, 404)
  t.equal(upstream404.json.message, 'container "main" in pod "web" not found')
  const missing = await get('/api/v1/namespaces/default/pods/nope/log')
  t.equal(missing.code, 404)
  t.match(missing.json.message, /"nope" not found/)
  const unscheduled = await request(base + '/api/v1/namespaces/default/pods/pending/log')
  t.equal(unscheduled.statusCode, 200, 'a pod not on a node has an empty log')
  t.equal(await unscheduled.body.text(), '')
  const badContainer = await get('/api/v1/namespaces/default/pods/web/log?container=side')
  t.equal(badContainer.code, 400)
  t.equal(badContainer.json.message, 'container side is not valid for pod web')
  const badInt = await get('/api/v1/namespaces/default/pods/web/log?tailLines=x')
  t.equal(badInt.code, 400)
  t.match(badInt.json.message, /tailLines/)
  const post = await request(`${base}/api/v1/namespaces/default/pods/web/log`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } })
  t.equal(post.statusCode, 405)
  await post.body.dump()
})

t.test('an unreachable orchlet answers 500 quickly instead of hanging', async t => {
  // Port 1 on loopback: nothing listens there, the connection is refused.
  const { base } = await apiWith(t, 1, 1000)
  const started = Date.now()
  const r = await request(`${base}/api/v1/namespaces/default/pods/web/log`)
  const body = await r.body.json() as { message: string; reason: string }
  t.equal(r.statusCode, 500)
  t.equal(body.reason, 'InternalError')
  t.match(body.message, /^Get "https:\/\/127\.0\.0\.1:1\/containerLogs\/default\/web\/main": /)
  t.ok(Date.now() - started < 2000, 'answered within the connect timeout')
})

t.test('discovery lists pods/log with the get verb', async t => {
  const { base } = await apiWith(t, 1)
  const r = await request(`${base}/api/v1`)
  const doc = await r.body.json() as { resources: Array<{ name: string; verbs: string[]; kind: string }> }
  const log = doc.resources.find(x => x.name === 'pods/log')
  t.same(log && { verbs: log.verbs, kind: log.kind }, { verbs: ['get'], kind: 'Pod' })
})
