// The HTTP layer over the real registry and a real LMDB store (in process, real HTTP on port 0): status codes and bodies.

import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pino } from 'pino'
import { request } from 'undici'
import { createApiServer } from '../apiserver/server.js'
import { createRegistry } from '../apiserver/registry/registry.js'
import { openLmdbStore } from '../apiserver/storage/lmdb/index.js'
import { buildOpenAPIv2, buildOpenAPIv3GroupVersion } from '../apiserver/schema/openapi.js'

const dir = mkdtempSync(join(tmpdir(), 'orch-http-'))
const logger = pino({ level: 'silent' })
const store = await openLmdbStore({ path: dir })
const registry = createRegistry({ store, logger })
await registry.start()
const server = createApiServer({ registry, logger, openapi: { v2: buildOpenAPIv2, v3GroupVersion: buildOpenAPIv3GroupVersion } })
const { port } = await server.listen({ port: 0 })
t.teardown(async () => {
  await server.close()
  await registry.stop()
  await store.close()
  rmSync(dir, { recursive: true, force: true })
})

const base = `http://127.0.0.1:${port}`
async function call (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const text = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body)
  const r = await request(base + path, { method: method as any, body: text, headers: text === undefined ? headers : { 'content-type': 'application/json', ...headers } })
  const out = await r.body.text()
  let json: any
  try { json = JSON.parse(out) } catch {}
  return { status: r.statusCode, headers: r.headers, json, text: out }
}
const CM = '/api/v1/namespaces/default/configmaps'
const cm = (name: string, extra: object = {}) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, ...extra })

t.test('create answers 201, a duplicate 409 AlreadyExists, a stale update 409 Conflict', async t => {
  const a = await call('POST', CM, cm('a', { data: { k: 'v' } }))
  t.equal(a.status, 201)
  t.equal(a.json.metadata.namespace, 'default')
  const dup = await call('POST', CM, cm('a'))
  t.equal(dup.status, 409)
  t.equal(dup.json.reason, 'AlreadyExists')
  const ok = await call('PUT', `${CM}/a`, { ...a.json, data: { k: 'w' } })
  t.equal(ok.status, 200)
  const stale = await call('PUT', `${CM}/a`, { ...a.json, data: { k: 'x' } })
  t.equal(stale.status, 409)
  t.equal(stale.json.reason, 'Conflict')
})

t.test('invalid objects answer 422 with details.causes', async t => {
  const r = await call('POST', CM, cm('Bad_Name'))
  t.equal(r.status, 422)
  t.equal(r.json.reason, 'Invalid')
  t.equal(r.json.details.causes[0].field, 'metadata.name')
  const missing = await call('POST', '/api/v1/namespaces/nowhere/configmaps', cm('x'))
  t.equal(missing.status, 404)
})

t.test('unknown and duplicate fields: Warn headers by default, 400 under Strict', async t => {
  const warn = await call('POST', CM, '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"w"},"bogus":1,"data":{"a":"1","a":"2"}}')
  t.equal(warn.status, 201)
  const warnings = ([] as string[]).concat(warn.headers.warning ?? [])
  t.ok(warnings.some(w => w.startsWith('299 - ') && w.includes('bogus')), String(warnings))
  t.ok(warnings.some(w => w.includes('data.a')), String(warnings))
  const strict = await call('POST', `${CM}?fieldValidation=Strict`, cm('s', { bogus: 1 }))
  t.equal(strict.status, 400)
  t.match(strict.json.message, /bogus/)
})

t.test('malformed bodies, wrong kinds and content types are rejected before the registry', async t => {
  t.equal((await call('POST', CM, '{"kind":')).status, 400)
  t.equal((await call('POST', CM, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'x' } })).status, 400)
  t.equal((await call('POST', CM, 'kind: ConfigMap', { 'content-type': 'application/vnd.kubernetes.protobuf' })).status, 400, 'protobuf is read: these bytes are not protobuf')
  t.equal((await call('POST', CM, 'kind: ConfigMap', { 'content-type': 'application/x-unknown' })).status, 415)
  t.equal((await call('POST', `${CM}/a`, cm('a'))).status, 405)
  t.equal((await call('GET', CM, undefined, { accept: 'application/x-unknown' })).status, 406)
  t.equal((await call('GET', CM, undefined, { accept: 'application/vnd.orch.protobuf' })).headers['content-type'], 'application/vnd.orch.protobuf', 'built-in kinds answer in protobuf')
  t.equal((await call('GET', '/api/v1/namespaces/default/gadgets')).status, 404)
  t.equal((await call('GET', `${CM}/none`)).json.message, 'configmaps "none" not found')
})

t.test('delete answers 200 with the object while a finalizer holds it, and removes it once freed', async t => {
  await call('POST', CM, cm('held', { metadata: { name: 'held', finalizers: ['example.com/hold'] } }))
  const first = await call('DELETE', `${CM}/held`, { propagationPolicy: 'Background' })
  t.equal(first.status, 200)
  t.type(first.json.metadata.deletionTimestamp, 'string')
  const live = (await call('GET', `${CM}/held`)).json
  const freed = await call('PUT', `${CM}/held`, { ...live, metadata: { ...live.metadata, finalizers: [] } })
  t.equal(freed.status, 200)
  t.equal((await call('GET', `${CM}/held`)).status, 404)
  await call('POST', CM, cm('gone'))
  t.equal((await call('DELETE', `${CM}/gone?gracePeriodSeconds=0`)).status, 200)
})

t.test('deletecollection honours the label selector', async t => {
  await call('POST', CM, { ...cm('l1'), metadata: { name: 'l1', labels: { sweep: 'yes' } } })
  await call('POST', CM, { ...cm('l2'), metadata: { name: 'l2', labels: { sweep: 'no' } } })
  const r = await call('DELETE', `${CM}?labelSelector=sweep%3Dyes`)
  t.equal(r.status, 200)
  t.same(r.json.items.map((i: any) => i.metadata.name), ['l1'])
  t.equal((await call('GET', `${CM}/l2`)).status, 200)
})

t.test('a watch from a compacted resourceVersion answers 410 Expired', async t => {
  const r0 = await call('POST', CM, cm('old'))
  await call('PUT', `${CM}/old`, { ...r0.json, data: { v: '2' } })
  await store.compact(store.currentRevision())
  const w = await call('GET', `${CM}?watch=1&resourceVersion=${String(r0.json.metadata.resourceVersion)}`)
  const expired = w.status === 410 ? w.json : JSON.parse(w.text.trim().split('\n')[0]).object
  t.equal(expired.code, 410)
  t.equal(expired.reason, 'Expired')
})

t.test('status and scale subresources of a Deployment', async t => {
  const D = '/apis/apps/v1/namespaces/default/deployments'
  const body = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' }, spec: { replicas: 1, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } } } }
  t.equal((await call('POST', D, body)).status, 201)
  const scale = await call('GET', `${D}/web/scale`)
  t.equal(scale.status, 200)
  t.equal(scale.json.kind, 'Scale')
  const put = await call('PUT', `${D}/web/scale`, { ...scale.json, spec: { replicas: 3 } })
  t.equal(put.status, 200, put.text)
  t.equal((await call('GET', `${D}/web`)).json.spec.replicas, 3)
  const live = (await call('GET', `${D}/web`)).json
  const st = await call('PUT', `${D}/web/status`, { ...live, status: { replicas: 3 } })
  t.equal(st.status, 200, st.text)
  t.equal(st.json.status.replicas, 3)
})
