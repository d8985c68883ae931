import t, { type Test } from 'tap'
import { pino } from 'pino'
import { request } from 'undici'
import { createApiServer } from '../server.js'
import { openFixture } from '../registry/testing.js'

interface Reply { status: number; headers: Record<string, string | string[] | undefined>; json: any }

const JSON_PATCH = 'application/json-patch+json'
const MERGE = 'application/merge-patch+json'
const CMS = '/api/v1/namespaces/default/configmaps'
const DEPLOYS = '/apis/apps/v1/namespaces/default/deployments'

async function start (t: Test): Promise<(method: string, path: string, body?: unknown, contentType?: string) => Promise<Reply>> {
  const fx = await openFixture()
  const server = createApiServer({ registry: fx.registry, logger: pino({ level: 'silent' }), requestTimeoutMs: 5000 })
  const { port } = await server.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(async () => { await server.close(); await fx.close() })
  return async (method, path, body, contentType = 'application/json') => {
    const text = body === undefined ? undefined : typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body)
    const r = await request(`http://127.0.0.1:${port}${path}`, {
      method: method as 'GET', body: text, headers: text === undefined ? {} : { 'content-type': contentType }
    })
    const raw = await r.body.text()
    let json: any
    try { json = JSON.parse(raw) } catch {}
    return { status: r.statusCode, headers: r.headers, json }
  }
}

const configMap = (name: string, data: Record<string, string> = { k: 'v' }): unknown =>
  ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { keep: 'yes', drop: 'me' } }, data })

const deployment = (name: string): unknown => ({
  apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name },
  spec: {
    replicas: 1, selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } }
  }
})

t.test('a merge patch merges labels, removes with null and bumps the resourceVersion', async t => {
  const call = await start(t)
  const created = await call('POST', CMS, configMap('a'))
  const r = await call('PATCH', `${CMS}/a`, { metadata: { labels: { drop: null, added: 'x' } }, data: { k2: 'v2' } }, MERGE)
  t.equal(r.status, 200)
  t.same(r.json.metadata.labels, { keep: 'yes', added: 'x' })
  t.same(r.json.data, { k: 'v', k2: 'v2' })
  t.not(r.json.metadata.resourceVersion, created.json.metadata.resourceVersion)
  t.same((await call('GET', `${CMS}/a`)).json.metadata.labels, { keep: 'yes', added: 'x' })
})

t.test('a JSON patch applies add, replace, remove and a passing test', async t => {
  const call = await start(t)
  await call('POST', CMS, configMap('a'))
  const r = await call('PATCH', `${CMS}/a`, [
    { op: 'test', path: '/data/k', value: 'v' },
    { op: 'replace', path: '/data/k', value: 'w' },
    { op: 'add', path: '/metadata/labels/a~1b', value: 'slash' },
    { op: 'remove', path: '/metadata/labels/drop' }
  ], JSON_PATCH)
  t.equal(r.status, 200)
  t.same(r.json.data, { k: 'w' })
  t.same(r.json.metadata.labels, { keep: 'yes', 'a/b': 'slash' })
})

t.test('rejects malformed and non-array patches with 400', async t => {
  const call = await start(t)
  await call('POST', CMS, configMap('a'))
  const bad = await call('PATCH', `${CMS}/a`, '[{"op":', JSON_PATCH)
  t.equal(bad.status, 400)
  t.match(bad.json.message, /^error decoding patch: /)
  const obj = await call('PATCH', `${CMS}/a`, { op: 'add', path: '/x', value: 1 }, JSON_PATCH)
  t.equal(obj.status, 400)
  t.equal(obj.json.message, 'error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp')
  const badMerge = await call('PATCH', `${CMS}/a`, '{"data":', MERGE)
  t.equal(badMerge.status, 400)
  const arrMerge = await call('PATCH', `${CMS}/a`, [1], MERGE)
  t.equal(arrMerge.status, 400)
  t.match(arrMerge.json.message, /cannot unmarshal array/)
})

t.test('a failing test operation and a missing path answer 422 and change nothing', async t => {
  const call = await start(t)
  const created = await call('POST', CMS, configMap('a'))
  for (const patch of [
    [{ op: 'test', path: '/data/k', value: 'other' }, { op: 'replace', path: '/data/k', value: 'w' }],
    [{ op: 'replace', path: '/data/missing', value: 'w' }],
    [{ op: 'add', path: '/nope/deeper', value: 'w' }]
  ]) {
    const r = await call('PATCH', `${CMS}/a`, patch, JSON_PATCH)
    t.equal(r.status, 422, JSON.stringify(patch))
    t.equal(r.json.reason, 'Invalid')
    t.equal(r.json.message, 'the server rejected our request due to an error in our request')
  }
  const now = await call('GET', `${CMS}/a`)
  t.equal(now.json.metadata.resourceVersion, created.json.metadata.resourceVersion)
})

t.test('answers 415 listing the served patch types for types it does not serve', async t => {
  const call = await start(t)
  await call('POST', CMS, configMap('a'))
  for (const type of ['text/plain', 'application/json']) {
    const r = await call('PATCH', `${CMS}/a`, { data: { k: 'z' } }, type)
    t.equal(r.status, 415, type)
    t.equal(r.json.reason, 'UnsupportedMediaType')
    t.match(r.json.message, /^the body of the request was in an unknown format - accepted media types include: application\/json-patch\+json, application\/merge-patch\+json, application\/strategic-merge-patch\+json/)
  }
})

t.test('patching a missing object answers 404', async t => {
  const call = await start(t)
  const r = await call('PATCH', `${CMS}/ghost`, { data: { k: 'v' } }, MERGE)
  t.equal(r.status, 404)
  t.equal(r.json.message, 'configmaps "ghost" not found')
})

t.test('a resourceVersion in a merge patch is a precondition', async t => {
  const call = await start(t)
  const created = await call('POST', CMS, configMap('a'))
  const rv = created.json.metadata.resourceVersion
  const ok = await call('PATCH', `${CMS}/a`, { metadata: { resourceVersion: rv }, data: { k: 'first' } }, MERGE)
  t.equal(ok.status, 200)
  const stale = await call('PATCH', `${CMS}/a`, { metadata: { resourceVersion: rv }, data: { k: 'second' } }, MERGE)
  t.equal(stale.status, 409)
  t.equal(stale.json.reason, 'Conflict')
  t.match(stale.json.message, /the object has been modified/)
  t.equal((await call('GET', `${CMS}/a`)).json.data.k, 'first')
})

t.test('dryRun=All answers the patched object and stores nothing', async t => {
  const call = await start(t)
  const created = await call('POST', CMS, configMap('a'))
  const r = await call('PATCH', `${CMS}/a?dryRun=All`, { data: { k: 'dry' } }, MERGE)
  t.equal(r.status, 200)
  t.equal(r.json.data.k, 'dry')
  const now = await call('GET', `${CMS}/a`)
  t.equal(now.json.data.k, 'v')
  t.equal(now.json.metadata.resourceVersion, created.json.metadata.resourceVersion)
})

t.test('a status patch changes only status and a main patch leaves status alone', async t => {
  const call = await start(t)
  await call('POST', DEPLOYS, deployment('d'))
  const st = await call('PATCH', `${DEPLOYS}/d/status`, { spec: { replicas: 7 }, status: { replicas: 3 } }, MERGE)
  t.equal(st.status, 200)
  t.equal(st.json.spec.replicas, 1)
  t.equal(st.json.status.replicas, 3)
  const main = await call('PATCH', `${DEPLOYS}/d`, { spec: { replicas: 2 }, status: { replicas: 9 } }, MERGE)
  t.equal(main.status, 200)
  t.equal(main.json.spec.replicas, 2)
  t.equal(main.json.status.replicas, 3)
})

t.test('a merge patch on /scale sets the replicas, as kubectl scale sends it', async t => {
  const call = await start(t)
  await call('POST', DEPLOYS, deployment('d'))
  const r = await call('PATCH', `${DEPLOYS}/d/scale`, { spec: { replicas: 4 } }, MERGE)
  t.equal(r.status, 200)
  t.equal(r.json.kind, 'Scale')
  t.equal(r.json.spec.replicas, 4)
  t.equal((await call('GET', `${DEPLOYS}/d`)).json.spec.replicas, 4)
  const neg = await call('PATCH', `${DEPLOYS}/d/scale`, [{ op: 'replace', path: '/spec/replicas', value: -1 }], JSON_PATCH)
  t.equal(neg.status, 422)
  t.match(neg.json.message, /spec\.replicas/)
})

t.test('fieldValidation applies to fields the patch introduces', async t => {
  const call = await start(t)
  await call('POST', CMS, configMap('a'))
  const strict = await call('PATCH', `${CMS}/a?fieldValidation=Strict`, { bogus: 1 }, MERGE)
  t.equal(strict.status, 400)
  t.match(strict.json.message, /strict decoding error: unknown field "bogus"$/)
  const warn = await call('PATCH', `${CMS}/a?fieldValidation=Warn`, { bogus: 1, data: { k: 'w' } }, MERGE)
  t.equal(warn.status, 200)
  t.match(String(warn.headers.warning), /unknown field \\"bogus\\"/)
  t.equal(warn.json.bogus, undefined)
  const dup = await call('PATCH', `${CMS}/a?fieldValidation=Strict`, '{"data":{"k":"1","k":"2"}}', MERGE)
  t.equal(dup.status, 400)
  t.match(dup.json.message, /strict decoding error: duplicate field "data.k"$/)
})

t.test('a patch that makes the object invalid answers 422 from validation', async t => {
  const call = await start(t)
  await call('POST', DEPLOYS, deployment('d'))
  const r = await call('PATCH', `${DEPLOYS}/d`, [{ op: 'replace', path: '/spec/replicas', value: -3 }], JSON_PATCH)
  t.equal(r.status, 422)
  t.match(r.json.message, /spec\.replicas/)
})

t.test('force is only for apply patches: 422 as PatchOptions validation', async t => {
  const call = await start(t)
  await call('POST', CMS, configMap('a'))
  const r = await call('PATCH', `${CMS}/a?force=true`, { data: { k: 'w' } }, MERGE)
  t.equal(r.status, 422)
  t.equal(r.json.message, 'PatchOptions.meta.orch.io "" is invalid: force: Forbidden: may not be specified for non-apply patch')
})

t.test('a patch body over 3 MiB answers 413', async t => {
  const call = await start(t)
  await call('POST', CMS, configMap('a'))
  const r = await call('PATCH', `${CMS}/a`, JSON.stringify({ data: { big: 'x'.repeat(3 * 1024 * 1024) } }), MERGE)
  t.equal(r.status, 413)
})

t.test('delete answers a Status for kinds whose store does not return the object, the object for the others', async t => {
  const call = await start(t)
  const d = await call('POST', DEPLOYS, deployment('d'))
  const del = await call('DELETE', `${DEPLOYS}/d`)
  t.equal(del.status, 200)
  t.same(del.json, {
    kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success',
    details: { name: 'd', group: 'apps', kind: 'deployments', uid: d.json.metadata.uid }
  })
  const cm = await call('POST', CMS, configMap('c'))
  const cmDel = await call('DELETE', `${CMS}/c`)
  t.same(cmDel.json.details, { name: 'c', kind: 'configmaps', uid: cm.json.metadata.uid })
  await call('POST', '/api/v1/namespaces/default/serviceaccounts', { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 's' } })
  const sa = await call('DELETE', '/api/v1/namespaces/default/serviceaccounts/s')
  t.equal(sa.status, 200)
  t.equal(sa.json.kind, 'ServiceAccount')
  const fin = await call('POST', CMS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'f', finalizers: ['example.com/hold'] } })
  t.equal(fin.status, 201)
  const kept = await call('DELETE', `${CMS}/f`)
  t.equal(kept.json.kind, 'ConfigMap')
  t.type(kept.json.metadata.deletionTimestamp, 'string')
})

t.test('removing the last label leaves no labels map, as kube-apiserver encodes ObjectMeta', async t => {
  const call = await start(t)
  await call('POST', CMS, configMap('a'))
  const r = await call('PATCH', `${CMS}/a`, { metadata: { labels: { keep: null, drop: null } } }, MERGE)
  t.equal(r.status, 200)
  t.equal(r.json.metadata.labels, undefined)
  t.notOk('labels' in (await call('GET', `${CMS}/a`)).json.metadata)
})

t.test('a patch may not rename the object or move it to another namespace', async t => {
  const call = await start(t)
  await call('POST', CMS, configMap('a'))
  const renamed = await call('PATCH', `${CMS}/a`, { metadata: { name: 'b' } }, MERGE)
  t.equal(renamed.status, 400)
  t.equal(renamed.json.message, 'the name of the object (b) does not match the name on the URL (a)')
  const moved = await call('PATCH', `${CMS}/a`, [{ op: 'replace', path: '/metadata/namespace', value: 'other' }], JSON_PATCH)
  t.equal(moved.status, 400)
})
