import t, { type Test } from 'tap'
import { pino } from 'pino'
import { request } from 'undici'
import { gunzipSync } from 'node:zlib'
import { createApiServer } from '../server.js'
import { createMemoryRegistry } from '../../test/fixtures/memory-registry.js'

interface Reply { status: number; headers: Record<string, string | string[] | undefined>; text: string; json: any }

async function start (t: Test): Promise<{ call: (method: string, path: string, body?: string | Buffer, headers?: Record<string, string>) => Promise<Reply>; base: string; registry: ReturnType<typeof createMemoryRegistry> }> {
  const registry = createMemoryRegistry()
  const server = createApiServer({ registry, logger: pino({ level: 'silent' }), requestTimeoutMs: 2000 })
  const { port } = await server.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => server.close())
  const base = `http://127.0.0.1:${port}`
  const call = async (method: string, path: string, body?: string | Buffer, headers: Record<string, string> = {}): Promise<Reply> => {
    const r = await request(base + path, {
      method: method as any,
      body,
      headers: body !== undefined && headers['content-type'] === undefined ? { 'content-type': 'application/json', ...headers } : headers
    })
    const buf = Buffer.from(await r.body.arrayBuffer())
    const text = r.headers['content-encoding'] === 'gzip' ? gunzipSync(buf).toString() : buf.toString()
    let json: any
    try { json = JSON.parse(text) } catch {}
    return { status: r.statusCode, headers: r.headers, text, json }
  }
  return { call, base, registry }
}

const cm = (name: string, extra = ''): string => `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"${name}"}${extra}}`

t.test('creates, reads, lists, replaces and deletes an object', async t => {
  const { call } = await start(t)
  const created = await call('POST', '/api/v1/namespaces/default/configmaps', cm('a', ',"data":{"k":"v"}'))
  t.equal(created.status, 201)
  t.equal(created.json.metadata.namespace, 'default')
  const got = await call('GET', '/api/v1/namespaces/default/configmaps/a')
  t.equal(got.status, 200)
  t.same(got.json.data, { k: 'v' })
  const list = await call('GET', '/api/v1/namespaces/default/configmaps')
  t.equal(list.json.kind, 'ConfigMapList')
  t.equal(list.json.apiVersion, 'v1')
  t.equal(list.json.items.length, 1)
  t.type(list.json.metadata.resourceVersion, 'string')
  const body = JSON.stringify({ ...got.json, data: { k: 'w' } })
  const put = await call('PUT', '/api/v1/namespaces/default/configmaps/a', body)
  t.equal(put.status, 200)
  t.equal(put.json.data.k, 'w')
  const del = await call('DELETE', '/api/v1/namespaces/default/configmaps/a', '{"propagationPolicy":"Background"}')
  t.equal(del.status, 200)
  t.equal((await call('GET', '/api/v1/namespaces/default/configmaps/a')).status, 404)
})

t.test('answers YAML bodies and YAML output', async t => {
  const { call } = await start(t)
  const created = await call('POST', '/api/v1/namespaces/default/configmaps', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y\n', { 'content-type': 'application/yaml', accept: 'application/yaml' })
  t.equal(created.status, 201)
  t.equal(created.headers['content-type'], 'application/yaml')
  t.match(created.text, /name: y/)
})

t.test('rejects malformed JSON and YAML with 400', async t => {
  const { call } = await start(t)
  const bad = await call('POST', '/api/v1/namespaces/default/configmaps', '{"kind": "ConfigMap",')
  t.equal(bad.status, 400)
  t.equal(bad.json.kind, 'Status')
  t.equal(bad.json.reason, 'BadRequest')
  t.match(bad.json.message, /^couldn't get version\/kind; json parse error/)
  const yaml = await call('POST', '/api/v1/namespaces/default/configmaps', 'a: [1\n', { 'content-type': 'application/yaml' })
  t.equal(yaml.status, 400)
  const multi = await call('POST', '/api/v1/namespaces/default/configmaps', 'a: 1\n---\nb: 2\n', { 'content-type': 'application/yaml' })
  t.equal(multi.status, 400)
  const arr = await call('POST', '/api/v1/namespaces/default/configmaps', '[1,2]')
  t.equal(arr.status, 400)
  t.match(arr.json.message, /expected a JSON object/)
})

t.test('rejects a body of another kind or version with 400', async t => {
  const { call } = await start(t)
  const wrongKind = await call('POST', '/api/v1/namespaces/default/configmaps', '{"apiVersion":"v1","kind":"Secret","metadata":{"name":"x"}}')
  t.equal(wrongKind.status, 400)
  t.match(wrongKind.json.message, /must be of type ConfigMap/)
  const wrongVersion = await call('POST', '/api/v1/namespaces/default/configmaps', '{"apiVersion":"v2","kind":"ConfigMap","metadata":{"name":"x"}}')
  t.equal(wrongVersion.status, 400)
  t.match(wrongVersion.json.message, /does not match the expected API version \(v1\)/)
  const ns = await call('POST', '/api/v1/namespaces/default/configmaps', '{"metadata":{"name":"x","namespace":"other"}}')
  t.equal(ns.status, 400)
  t.match(ns.json.message, /namespace of the provided object does not match/)
  await call('POST', '/api/v1/namespaces/default/configmaps', cm('n'))
  const name = await call('PUT', '/api/v1/namespaces/default/configmaps/n', cm('m'))
  t.equal(name.status, 400)
  t.match(name.json.message, /does not match the name on the URL/)
})

t.test('answers 404 for unknown paths, resources and objects', async t => {
  const { call } = await start(t)
  for (const p of ['/nothing', '/api/v1/namespaces/default/widgets', '/apis/nope/v1/things', '/apis/nope', '/api/v2', '/api/v1/configmaps/x', '/api/v1/namespaces/default/configmaps/a/status']) {
    const r = await call('GET', p)
    t.equal(r.status, 404, p)
    t.equal(r.json.kind, 'Status', p)
    t.equal(r.json.reason, 'NotFound', p)
  }
  const obj = await call('GET', '/api/v1/namespaces/default/configmaps/missing')
  t.equal(obj.json.message, 'configmaps "missing" not found')
  t.same(obj.json.details, { name: 'missing', group: '', kind: 'configmaps' })
})

t.test('answers 405 for methods a path does not take', async t => {
  const { call } = await start(t)
  const post = await call('POST', '/api/v1/namespaces/default/configmaps/a', cm('a'))
  t.equal(post.status, 405)
  t.equal(post.json.reason, 'MethodNotAllowed')
  t.equal((await call('PUT', '/api/v1/namespaces/default/configmaps', cm('a'))).status, 405)
  t.equal((await call('DELETE', '/apis/apps/v1/namespaces/default/deployments/d/status')).status, 405)
  t.equal((await call('PATCH', '/apis/apps/v1/namespaces/default/deployments', '{}', { 'content-type': 'application/merge-patch+json' })).status, 405)
})

t.test('answers 406 when no acceptable media type is served', async t => {
  const { call } = await start(t)
  const r = await call('GET', '/api/v1/namespaces/default/configmaps', undefined, { accept: 'application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io' })
  t.equal(r.status, 406)
  t.equal(r.json.reason, 'NotAcceptable')
  const fallback = await call('GET', '/api/v1/namespaces/default/configmaps', undefined, { accept: 'application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io, application/json' })
  t.equal(fallback.status, 200)
  t.equal(fallback.headers['content-type'], 'application/json')
  t.equal((await call('GET', '/version', undefined, { accept: 'text/html' })).status, 406)
})

t.test('answers 409 for a duplicate name and a stale resourceVersion', async t => {
  const { call } = await start(t)
  await call('POST', '/api/v1/namespaces/default/configmaps', cm('c'))
  const dup = await call('POST', '/api/v1/namespaces/default/configmaps', cm('c'))
  t.equal(dup.status, 409)
  t.equal(dup.json.reason, 'AlreadyExists')
  const stale = await call('PUT', '/api/v1/namespaces/default/configmaps/c', '{"metadata":{"name":"c","resourceVersion":"999"}}')
  t.equal(stale.status, 409)
  t.equal(stale.json.reason, 'Conflict')
})

t.test('answers 410 for a too old resourceVersion on list and watch', async t => {
  const { call } = await start(t)
  t.equal((await call('GET', '/api/v1/namespaces/default/configmaps?resourceVersion=1')).status, 410)
  const w = await call('GET', '/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=1')
  t.equal(w.status, 410)
  t.equal(w.json.reason, 'Expired')
})

t.test('answers 413 for a body over 3 MiB', async t => {
  const { call } = await start(t)
  const big = Buffer.alloc(3 * 1024 * 1024 + 10, 0x20)
  const r = await call('POST', '/api/v1/namespaces/default/configmaps', big)
  t.equal(r.status, 413)
  t.equal(r.json.reason, 'RequestEntityTooLarge')
})

t.test('answers 415 for body types it does not read', async t => {
  const { call } = await start(t)
  const r = await call('POST', '/api/v1/namespaces/default/configmaps', cm('x'), { 'content-type': 'text/plain' })
  t.equal(r.status, 415)
  t.equal(r.json.reason, 'UnsupportedMediaType')
  const patch = await call('PATCH', '/api/v1/namespaces/default/configmaps/x', '{}', { 'content-type': 'application/json' })
  t.equal(patch.status, 415)
})

t.test('passes 422 with details.causes through', async t => {
  const { call } = await start(t)
  const r = await call('POST', '/api/v1/namespaces/default/configmaps', '{"metadata":{}}')
  t.equal(r.status, 422)
  t.equal(r.json.reason, 'Invalid')
  t.equal(r.json.details.causes[0].field, 'metadata.name')
})

t.test('translates an unexpected error into a 500 Status without a stack', async t => {
  const { call, registry } = await start(t)
  registry.failNext(new TypeError('boom at /secret/path.ts:12'))
  const r = await call('GET', '/api/v1/namespaces/default/configmaps')
  t.equal(r.status, 500)
  t.equal(r.json.reason, 'InternalError')
  t.notMatch(r.text, /\n\s+at /)
})

t.test('validates list parameters with 400 and write options with 422, as kube-apiserver', async t => {
  const { call } = await start(t)
  const cases: Array<[string, string, number, RegExp]> = [
    ['POST', '/api/v1/namespaces/default/configmaps?dryRun=Yes', 422, /^CreateOptions.meta.orch.io "" is invalid: dryRun: Unsupported value: "Yes": supported values: "All"$/],
    ['POST', '/api/v1/namespaces/default/configmaps?fieldValidation=Loud', 422, /^CreateOptions.meta.orch.io "" is invalid: fieldValidation: Unsupported value/],
    ['GET', '/api/v1/namespaces/default/configmaps?limit=ten', 400, /limit/],
    ['GET', '/api/v1/namespaces/default/configmaps?resourceVersionMatch=Exact', 400, /resourceVersionMatch is forbidden unless resourceVersion is provided/],
    ['GET', '/api/v1/namespaces/default/configmaps?resourceVersionMatch=Later&resourceVersion=3', 400, /resourceVersionMatch: Unsupported value/],
    ['DELETE', '/api/v1/namespaces/default/configmaps/x?propagationPolicy=Sideways', 422, /^DeleteOptions.meta.orch.io "" is invalid: propagationPolicy: Unsupported value/]
  ]
  for (const [m, p, code, msg] of cases) {
    const r = await call(m, p, m === 'POST' ? cm('q') : undefined)
    t.equal(r.status, code, p)
    t.match(r.json.message, msg, p)
  }
})

t.test('dryRun present without a value is a real request (spec 4.9.2)', async t => {
  const { call } = await start(t)
  t.equal((await call('POST', '/api/v1/namespaces/default/configmaps?dryRun', cm('real'))).status, 201)
  t.equal((await call('GET', '/api/v1/namespaces/default/configmaps/real')).status, 200, 'it was stored')
})

t.test('reports duplicate fields as Warning headers or a Strict 400', async t => {
  const { call } = await start(t)
  const dup = '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"d","labels":{"a":"1","a":"2"}}}'
  const warn = await call('POST', '/api/v1/namespaces/default/configmaps', dup)
  t.equal(warn.status, 201)
  t.same(warn.headers.warning, '299 - "duplicate field \\"metadata.labels.a\\""')
  const strict = await call('POST', '/api/v1/namespaces/default/configmaps?fieldValidation=Strict', dup.replace('"d"', '"e"'))
  t.equal(strict.status, 400)
})

t.test('dry-run create answers 201 and stores nothing', async t => {
  const { call } = await start(t)
  t.equal((await call('POST', '/api/v1/namespaces/default/configmaps?dryRun=All', cm('dry'))).status, 201)
  t.equal((await call('GET', '/api/v1/namespaces/default/configmaps/dry')).status, 404)
})

t.test('delete answers 200 with the object while finalizers keep it, 202 when orphanDependents=false', async t => {
  const { call } = await start(t)
  await call('POST', '/api/v1/namespaces/default/configmaps', '{"metadata":{"name":"f","finalizers":["x/y"]}}')
  const r = await call('DELETE', '/api/v1/namespaces/default/configmaps/f')
  t.equal(r.status, 200)
  const cascading = await call('DELETE', '/api/v1/namespaces/default/configmaps/f', '{"kind":"DeleteOptions","apiVersion":"v1","orphanDependents":false}')
  t.equal(cascading.status, 202)
  t.type(r.json.metadata.deletionTimestamp, 'string')
  const pre = await call('DELETE', '/api/v1/namespaces/default/configmaps/f', '{"kind":"DeleteOptions","apiVersion":"v1","preconditions":{"uid":"nope"}}')
  t.equal(pre.status, 409)
})

t.test('deletecollection removes the namespace\'s objects', async t => {
  const { call } = await start(t)
  await call('POST', '/api/v1/namespaces/default/configmaps', cm('a'))
  await call('POST', '/api/v1/namespaces/default/configmaps', cm('b'))
  const r = await call('DELETE', '/api/v1/namespaces/default/configmaps?labelSelector=')
  t.equal(r.status, 200)
  t.equal(r.json.kind, 'ConfigMapList')
  t.equal(r.json.items.length, 2)
  t.equal((await call('GET', '/api/v1/namespaces/default/configmaps')).json.items.length, 0)
})

t.test('serves Table form with printer columns and metadata-only row objects', async t => {
  const { call } = await start(t)
  await call('POST', '/apis/apps/v1/namespaces/default/deployments', '{"metadata":{"name":"d"},"spec":{"replicas":3},"status":{"conditions":[{"type":"Ready","status":"True"}]}}')
  const accept = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json'
  const r = await call('GET', '/apis/apps/v1/namespaces/default/deployments', undefined, { accept })
  t.equal(r.json.kind, 'Table')
  t.equal(r.json.apiVersion, 'meta.k8s.io/v1')
  t.same(r.json.columnDefinitions.map((c: any) => c.name), ['Name', 'Replicas', 'Ready', 'Age'])
  t.same(r.json.rows[0].cells.slice(0, 3), ['d', 3, 'True'])
  t.equal(r.json.rows[0].object.kind, 'PartialObjectMetadata')
  t.equal(r.json.rows[0].object.metadata.name, 'd')
  const orch = await call('GET', '/api/v1/namespaces/default/configmaps', undefined, { accept: 'application/json;as=Table;v=v1;g=meta.orch.io' })
  t.equal(orch.json.apiVersion, 'meta.orch.io/v1')
  t.same(orch.json.columnDefinitions.map((c: any) => c.name), ['Name', 'Created At'])
  const whole = await call('GET', '/apis/apps/v1/namespaces/default/deployments?includeObject=Object', undefined, { accept })
  t.equal(whole.json.rows[0].object.kind, 'Deployment', 'includeObject=Object carries the whole object (kubectl --sort-by)')
  t.equal(whole.json.rows[0].object.spec.replicas, 3)
  const none = await call('GET', '/apis/apps/v1/namespaces/default/deployments?includeObject=None', undefined, { accept })
  t.equal(none.json.rows[0].object, undefined)
  const bad = await call('GET', '/apis/apps/v1/namespaces/default/deployments?includeObject=All', undefined, { accept })
  t.equal(bad.status, 400)
})

t.test('gzips large responses when asked and pretty-prints on request', async t => {
  const { call } = await start(t)
  const data = 'x'.repeat(150 * 1024)
  await call('POST', '/api/v1/namespaces/default/configmaps', cm('big', `,"data":{"k":"${data}"}`))
  const r = await call('GET', '/api/v1/namespaces/default/configmaps/big', undefined, { 'accept-encoding': 'gzip' })
  t.equal(r.headers['content-encoding'], 'gzip')
  t.equal(r.json.data.k.length, data.length)
  const small = await call('GET', '/api/v1/namespaces/default/configmaps?pretty=true', undefined, { 'accept-encoding': 'gzip' })
  t.equal(small.headers['content-encoding'], 'gzip')
  t.match((await call('GET', '/version?pretty=true')).text, /\n {2}"major"/)
})

t.test('scale subresource reads and writes through the handler', async t => {
  const { call } = await start(t)
  await call('POST', '/apis/apps/v1/namespaces/default/deployments', '{"metadata":{"name":"s"},"spec":{"replicas":1}}')
  const r = await call('PUT', '/apis/apps/v1/namespaces/default/deployments/s/scale', '{"kind":"Scale","apiVersion":"autoscaling/v1","metadata":{"name":"s"},"spec":{"replicas":4}}')
  t.equal(r.status, 200)
  t.equal(r.json.spec.replicas, 4)
  const wrong = await call('PUT', '/apis/apps/v1/namespaces/default/deployments/s/scale', '{"kind":"Deployment","apiVersion":"apps/v1","metadata":{"name":"s"}}')
  t.equal(wrong.status, 400)
})

t.test('sets Retry-After on a 504 for a too new resourceVersion', async t => {
  const { call, registry } = await start(t)
  const { tooLargeResourceVersion } = await import('../errors/status-error.js')
  registry.failNext(tooLargeResourceVersion(99, 5, 2))
  const r = await call('GET', '/api/v1/namespaces/default/configmaps/x')
  t.equal(r.status, 504)
  t.equal(r.headers['retry-after'], '2')
  t.match(r.json.message, /Too large resource version/)
})

t.test('a request the registry never answers ends with 504 instead of hanging', async t => {
  const { call, registry } = await start(t)
  registry.hangNext()
  const r = await call('GET', '/api/v1/namespaces/default/configmaps')
  t.equal(r.status, 504)
  t.equal(r.json.reason, 'Timeout')
  t.equal(r.headers['retry-after'], '1')
})
