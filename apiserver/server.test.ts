import t, { type Test } from 'tap'
import { pino } from 'pino'
import { request } from 'undici'
import { createApiServer, type ApiServerOptions } from './server.js'
import { createMemoryRegistry, definition } from '../test/fixtures/memory-registry.js'
import { createFeatureGates } from './featuregate/featuregate.js'

async function start (t: Test, extra: Partial<ApiServerOptions> = {}) {
  const registry = createMemoryRegistry()
  const server = createApiServer({ registry, logger: pino({ level: 'silent' }), ...extra })
  const { port } = await server.listen({ port: 0 })
  t.teardown(() => server.close())
  const base = `http://127.0.0.1:${port}`
  const get = async (path: string, headers: Record<string, string> = {}) => {
    const r = await request(base + path, { headers })
    const text = await r.body.text()
    let json: any
    try { json = JSON.parse(text) } catch {}
    return { status: r.statusCode, headers: r.headers, text, json }
  }
  return { server, registry, base, port, get }
}

t.test('/version reports release 1.29', async t => {
  const { get } = await start(t)
  const v = await get('/version')
  t.equal(v.json.major, '1')
  t.equal(v.json.minor, '29')
  t.match(v.json.gitVersion, /^v1\.29\./)
  t.type(v.json.goVersion, 'string')
  t.type(v.json.platform, 'string')
})

t.test('legacy discovery documents describe groups, versions and resources', async t => {
  const { get, registry, port } = await start(t)
  const api = await get('/api')
  t.same(api.json.versions, ['v1'])
  t.equal(api.json.serverAddressByClientCIDRs[0].serverAddress, `127.0.0.1:${port}`)
  const apis = await get('/apis')
  t.equal(apis.json.kind, 'APIGroupList')
  t.same(apis.json.groups, [{ name: 'apps', versions: [{ groupVersion: 'apps/v1', version: 'v1' }], preferredVersion: { groupVersion: 'apps/v1', version: 'v1' } }])
  t.equal((await get('/apis/apps')).json.kind, 'APIGroup')
  const v1 = await get('/api/v1')
  t.equal(v1.json.kind, 'APIResourceList')
  t.equal(v1.json.groupVersion, 'v1')
  const ns = v1.json.resources.find((r: any) => r.name === 'namespaces')
  t.match(ns, { singularName: 'namespace', namespaced: false, kind: 'Namespace', shortNames: ['ns'] })
  t.ok(v1.json.resources.some((r: any) => r.name === 'namespaces/status'))
  const apps = await get('/apis/apps/v1')
  const scale = apps.json.resources.find((r: any) => r.name === 'deployments/scale')
  t.match(scale, { group: 'autoscaling', version: 'v1', kind: 'Scale', verbs: ['get', 'patch', 'update'] })
  t.same(apps.json.resources.find((r: any) => r.name === 'deployments').categories, ['all'])
  t.equal((await get('/apis/example.com/v1')).status, 404)
  registry.addDefinition(definition({ kind: 'Widget', plural: 'widgets', group: 'example.com', version: 'v1beta1' }))
  registry.addDefinition(definition({ kind: 'Widget', plural: 'widgets', group: 'example.com', version: 'v1' }))
  const group = await get('/apis/example.com')
  t.same(group.json.preferredVersion, { groupVersion: 'example.com/v1', version: 'v1' })
  t.equal((await get('/apis/example.com/v1')).json.resources[0].name, 'widgets')
})

t.test('discovery answers JSON to kubectl\'s aggregated-discovery Accept list', async t => {
  const { get } = await start(t)
  const r = await get('/apis', { accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json' })
  t.equal(r.headers['content-type'], 'application/json')
  t.equal(r.json.kind, 'APIGroupList')
})

t.test('health endpoints support verbose, exclude and single checks', async t => {
  let storeUp = true
  const { get, server } = await start(t, { healthChecks: [{ name: 'etcd', check: () => { if (!storeUp) throw new Error('down') } }] })
  const plain = await get('/livez')
  t.equal(plain.status, 200)
  t.equal(plain.text, 'ok')
  const verbose = await get('/readyz?verbose')
  t.equal(verbose.text, '[+]ping ok\n[+]log ok\n[+]etcd ok\n[+]shutdown ok\nreadyz check passed\n')
  const excluded = await get('/healthz?verbose&exclude=etcd')
  t.match(excluded.text, /\[\+\]etcd excluded: ok/)
  t.match(excluded.text, /healthz check passed/)
  t.equal((await get('/livez/ping')).text, 'ok')
  t.equal((await get('/livez/nope')).status, 404)
  storeUp = false
  const failed = await get('/healthz')
  t.equal(failed.status, 500)
  t.match(failed.text, /\[-\]etcd failed: reason withheld\nhealthz check failed/)
  t.notMatch(failed.text, /down/)
  t.equal((await get('/readyz/etcd')).status, 500)
  t.equal((await get('/livez?exclude=etcd')).status, 200)
  storeUp = true
  server.beginShutdown()
  t.equal((await get('/readyz')).status, 500)
  t.equal((await get('/livez')).status, 200)
})

t.test('--livez-grace-period: /livez takes unfinished post-start hooks as done until it ends; /readyz does not', async t => {
  let clock = 1_000_000
  const hook = { name: 'poststarthook/start-registry', check: () => { throw new Error('not yet') } }
  const { get } = await start(t, { healthChecks: [hook], livezGracePeriodMs: 10_000, clock: { now: () => clock } })
  t.equal((await get('/livez')).status, 200)
  t.equal((await get('/livez/poststarthook/start-registry')).status, 200)
  t.equal((await get('/readyz')).status, 500)
  clock += 10_001
  t.equal((await get('/livez')).status, 500)
  t.match((await get('/livez?verbose')).text, /\[-\]poststarthook\/start-registry failed/)
})

t.test('an informational ready check is listed failing without failing /readyz; a quiet one is not logged per request', async t => {
  let full = true
  let strict = false
  const warnings: unknown[] = []
  const logger = pino({ level: 'warn' }, { write: (line: string) => { warnings.push(line) } })
  const space = { name: 'storage-space', quiet: true, get informational () { return !strict }, check: () => { if (full) throw new Error('storage is full') } }
  const { get } = await start(t, { logger, readyChecks: [space] })
  const verbose = await get('/readyz?verbose')
  t.equal(verbose.status, 200)
  t.equal(verbose.text, '[+]ping ok\n[+]log ok\n[-]storage-space failed: reason withheld\n[+]shutdown ok\nreadyz check passed\n')
  t.equal((await get('/readyz')).text, 'ok')
  t.equal((await get('/readyz/storage-space')).status, 500, 'its own path tells the truth')
  t.notMatch((await get('/livez?verbose')).text, /storage-space/, 'a ready check only')
  strict = true // --readyz-fail-on-storage-full
  const failing = await get('/readyz?verbose')
  t.equal(failing.status, 500)
  t.match(failing.text, /\[-\]storage-space failed: reason withheld\n\[\+\]shutdown ok\nreadyz check failed/)
  t.same(warnings, [], 'nothing logged per request')
  full = false
  t.match((await get('/readyz?verbose')).text, /\[\+\]storage-space ok/)
})

t.test('watch streams newline-delimited events and ends on timeoutSeconds', async t => {
  const { base, get } = await start(t)
  const post = (name: string) => request(`${base}/api/v1/namespaces/default/configmaps`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ metadata: { name } })
  }).then(r => r.body.text())
  await post('before')
  const r = await request(`${base}/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=1`)
  t.equal(r.statusCode, 200)
  t.equal(r.headers['transfer-encoding'], 'chunked')
  t.equal(r.headers['content-type'], 'application/json')
  await post('after')
  const text = await r.body.text()
  const events = text.trim().split('\n').map(l => JSON.parse(l))
  t.same(events.map(e => [e.type, e.object.metadata.name]), [['ADDED', 'before'], ['ADDED', 'after']])
  t.equal((await get('/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=x')).status, 400)
})

t.test('watch in Table form sends one-row tables', async t => {
  const { base } = await start(t)
  await request(`${base}/api/v1/namespaces/default/configmaps`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"metadata":{"name":"t"}}'
  }).then(r => r.body.text())
  const r = await request(`${base}/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=1`, {
    headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json' }
  })
  const [event] = (await r.body.text()).trim().split('\n').map(l => JSON.parse(l))
  t.equal(event.type, 'ADDED')
  t.equal(event.object.kind, 'Table')
  t.equal(event.object.rows.length, 1)
  t.equal(event.object.rows[0].cells[0], 't')
})

t.test('close ends open watches so shutdown never hangs', async t => {
  const registry = createMemoryRegistry()
  const server = createApiServer({ registry, logger: pino({ level: 'silent' }) })
  const { port } = await server.listen({ port: 0 })
  const r = await request(`http://127.0.0.1:${port}/api/v1/namespaces/default/configmaps?watch=1`)
  const body = r.body.text()
  await server.close()
  t.equal(await body, '')
})

t.test('a watcher that does not read is cut off instead of buffering without bound', async t => {
  const { base, port } = await start(t, { maxWatchPendingBytes: 64 * 1024 })
  const net = await import('node:net')
  const sock = net.connect(port, '127.0.0.1')
  sock.write('GET /api/v1/namespaces/default/configmaps?watch=1 HTTP/1.1\r\nHost: x\r\n\r\n')
  await new Promise(resolve => sock.once('data', resolve))
  sock.pause()
  const closed = new Promise<boolean>(resolve => sock.once('close', () => resolve(true)))
  const big = 'x'.repeat(200 * 1024)
  for (let i = 0; i < 40; i++) {
    await request(`${base}/api/v1/namespaces/default/configmaps`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ metadata: { name: `b${i}` }, data: { k: big } })
    }).then(r => r.body.text())
  }
  sock.resume()
  sock.on('data', () => {})
  t.equal(await closed, true, 'slow watcher was disconnected')
})

t.test('OpenAPI documents are cached, hashed and rebuilt when definitions change', async t => {
  let builds = 0
  const openapi = {
    v2: (defs: unknown[]) => { builds++; return { swagger: '2.0', count: defs.length } },
    v3GroupVersion: (defs: unknown[], group: string, version: string) => { builds++; return { openapi: '3.0.0', group, version, count: defs.length } }
  }
  const { get, registry } = await start(t, { openapi })
  const root = await get('/openapi/v3')
  t.same(Object.keys(root.json.paths), ['api/v1', 'apis/apps/v1'])
  const url = root.json.paths['apis/apps/v1'].serverRelativeURL
  t.match(url, /^\/openapi\/v3\/apis\/apps\/v1\?hash=[0-9A-F]{128}$/)
  const doc = await get(url)
  t.same(doc.json, { openapi: '3.0.0', group: 'apps', version: 'v1', count: 3 })
  t.equal(doc.headers['cache-control'], 'public, immutable')
  const etag = doc.headers.etag as string
  t.equal((await get('/openapi/v3/apis/apps/v1', { 'if-none-match': etag })).status, 304)
  const before = builds
  await get('/openapi/v3/apis/apps/v1')
  t.equal(builds, before, 'served from cache')
  t.equal((await get('/openapi/v3/apis/nope/v1')).status, 404)
  const pb = await get('/openapi/v2', { accept: 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf, application/json' })
  t.equal(pb.status, 200)
  t.equal(pb.headers['content-type'], 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf')
  t.equal((await get('/openapi/v2', { accept: 'application/json' })).json.swagger, '2.0')
  t.equal((await get('/openapi/v2', { accept: 'application/yaml' })).status, 406)
  registry.addDefinition(definition({ kind: 'Widget', plural: 'widgets', group: 'example.com', version: 'v1' }))
  t.ok((await get('/openapi/v3')).json.paths['apis/example.com/v1'])
  t.equal((await get('/openapi/v3/apis/apps/v1')).json.count, 4)
})

t.test('feature gates: APIResponseCompression=false never gzips; StorageVersionHash=false drops the discovery hash', async t => {
  const on = await start(t)
  const off = await start(t, { featureGates: createFeatureGates({ APIResponseCompression: false, StorageVersionHash: false }) })
  const big = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'big' }, data: { k: 'x'.repeat(150 * 1024) } })
  for (const s of [on, off]) {
    const r = await request(`${s.base}/api/v1/namespaces/default/configmaps`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: big })
    t.equal(r.statusCode, 201)
    await r.body.dump()
  }
  const zipped = await on.get('/api/v1/namespaces/default/configmaps/big', { 'accept-encoding': 'gzip' })
  t.equal(zipped.headers['content-encoding'], 'gzip', 'the gate on (default): gzipped')
  const plain = await off.get('/api/v1/namespaces/default/configmaps/big', { 'accept-encoding': 'gzip' })
  t.equal(plain.headers['content-encoding'], undefined, 'the gate off: plain')
  t.equal(plain.json.data.k.length, 150 * 1024)
  const hashOf = async (s: typeof on): Promise<unknown> => (await s.get('/api/v1')).json.resources.find((r: { name: string }) => r.name === 'configmaps').storageVersionHash
  t.type(await hashOf(on), 'string')
  t.equal(await hashOf(off), undefined)
})

t.test('aggregated discovery (apidiscovery.k8s.io/v2beta1) when asked, legacy otherwise or with the gate off', async t => {
  const { get } = await start(t)
  const accept = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json'
  const apis = await get('/apis', { accept })
  t.equal(apis.headers['content-type'], 'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList')
  t.equal(apis.json.kind, 'APIGroupDiscoveryList')
  const apps = apis.json.items.find((g: { metadata: { name?: string } }) => g.metadata.name === 'apps')
  t.equal(apps.versions[0].version, 'v1')
  t.equal(apps.versions[0].freshness, 'Current')
  const deployments = apps.versions[0].resources.find((r: { resource: string }) => r.resource === 'deployments')
  t.same(deployments.responseKind, { group: 'apps', version: 'v1', kind: 'Deployment' })
  t.equal(deployments.scope, 'Namespaced')
  t.equal(deployments.singularResource, 'deployment')
  t.ok(deployments.verbs.includes('list'))
  t.same(deployments.subresources.find((s: { subresource: string }) => s.subresource === 'scale')?.responseKind, { group: 'autoscaling', version: 'v1', kind: 'Scale' })
  const core = await get('/api', { accept })
  t.equal(core.json.items.length, 1)
  t.same(core.json.items[0].metadata, { creationTimestamp: null })
  t.ok(core.json.items[0].versions[0].resources.some((r: { resource: string }) => r.resource === 'configmaps'))
  t.equal((await get('/apis', { accept: 'application/json' })).json.kind, 'APIGroupList', 'plain JSON stays legacy')
  const off = await start(t, { featureGates: createFeatureGates({ AggregatedDiscoveryEndpoint: false }) })
  t.equal((await off.get('/apis', { accept })).json.kind, 'APIGroupList', 'the gate off: legacy')
})
