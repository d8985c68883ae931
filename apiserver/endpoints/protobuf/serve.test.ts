// The protobuf media type over HTTP: requests and responses of built-in kinds, lists, Status, watch frames, fallbacks,
// and 406/415 for custom resources.
import t, { type Test } from 'tap'
import { pino } from 'pino'
import { request } from 'undici'
import { createApiServer } from '../../server.js'
import { DEFINITIONS, createMemoryRegistry } from '../../../test/fixtures/memory-registry.js'
import type { ResourceDefinition } from '../../schema/types.js'
import { decodeEnvelope } from './decode.js'
import { encodeEnvelope } from './encode.js'
import { ENVELOPE_PREFIX, Messages } from './messages.js'
import protobuf from 'protobufjs/minimal.js'

const PB = 'application/vnd.kubernetes.protobuf'
const messages = new Messages()
const widget: ResourceDefinition = {
  ...DEFINITIONS[1], group: 'example.com', version: 'v1', kind: 'Widget', listKind: 'WidgetList', plural: 'widgets', singular: 'widget',
  shortNames: [], custom: { crdName: 'widgets.example.com', preserveUnknownFieldsAtRoot: true }
}

async function start (t: Test): Promise<{ call: (method: string, path: string, body?: Buffer | string, headers?: Record<string, string>) => Promise<{ status: number; type: string; body: Buffer }>; base: string }> {
  const registry = createMemoryRegistry([...DEFINITIONS, widget])
  const server = createApiServer({ registry, logger: pino({ level: 'silent' }), requestTimeoutMs: 2000 })
  const { port } = await server.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => server.close())
  const base = `http://127.0.0.1:${port}`
  return {
    base,
    async call (method, path, body, headers = {}) {
      const r = await request(base + path, { method: method as 'GET', body, headers })
      return { status: r.statusCode, type: String(r.headers['content-type']), body: Buffer.from(await r.body.arrayBuffer()) }
    }
  }
}

const configMap = (name: string): Record<string, unknown> => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { app: 'web' } }, data: { mode: 'fast' } })

t.test('a built-in kind is created, read, listed and deleted in protobuf', async t => {
  const { call } = await start(t)
  const created = await call('POST', '/api/v1/namespaces/default/configmaps', encodeEnvelope(configMap('a'), messages), { 'content-type': 'application/vnd.orch.protobuf', accept: PB })
  t.equal(created.status, 201)
  t.equal(created.type, PB)
  t.same(created.body.subarray(0, 4), ENVELOPE_PREFIX)
  t.match(decodeEnvelope(created.body, messages), { kind: 'ConfigMap', metadata: { name: 'a', namespace: 'default' }, data: { mode: 'fast' } })
  const json = await call('GET', '/api/v1/namespaces/default/configmaps/a', undefined, { accept: 'application/json' })
  t.equal(json.type, 'application/json', 'request and response types are independent')
  t.equal((await call('GET', '/api/v1/namespaces/default/configmaps/a', undefined, { accept: 'application/vnd.orch.protobuf' })).type, 'application/vnd.orch.protobuf', 'orch\'s name is answered as asked')
  const got = await call('GET', '/api/v1/namespaces/default/configmaps/a', undefined, { accept: PB })
  t.strictSame(decodeEnvelope(got.body, messages), JSON.parse(json.body.toString()))
  const list = decodeEnvelope((await call('GET', '/api/v1/namespaces/default/configmaps', undefined, { accept: PB })).body, messages)
  t.match(list, { apiVersion: 'v1', kind: 'ConfigMapList', items: [{ kind: 'ConfigMap', metadata: { name: 'a' } }] })
  const del = await call('DELETE', '/api/v1/namespaces/default/configmaps/a', encodeEnvelope({ apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: 'Background' }, messages), { 'content-type': PB, accept: PB })
  t.equal(del.status, 200)
  t.match(decodeEnvelope(del.body, messages), { kind: 'Status', status: 'Success' })
})

t.test('Accept lists with fallbacks pick protobuf for built-ins and JSON for custom resources', async t => {
  const { call } = await start(t)
  const both = `${PB}, application/json`
  t.equal((await call('GET', '/api/v1/namespaces/default/configmaps', undefined, { accept: both })).type, PB)
  t.equal((await call('GET', '/api/v1/namespaces/default/configmaps', undefined, { accept: `application/json;q=0.9, ${PB}` })).type, PB)
  t.equal((await call('GET', '/apis/example.com/v1/namespaces/default/widgets', undefined, { accept: both })).type, 'application/json')
  const only = await call('GET', '/apis/example.com/v1/namespaces/default/widgets', undefined, { accept: 'application/vnd.orch.protobuf' })
  t.equal(only.status, 406)
  t.match(JSON.parse(only.body.toString()), { reason: 'NotAcceptable' })
  const body = encodeEnvelope(configMap('w'), messages)
  const post = await call('POST', '/apis/example.com/v1/namespaces/default/widgets', body, { 'content-type': PB })
  t.equal(post.status, 415)
  t.match(JSON.parse(post.body.toString()), { reason: 'UnsupportedMediaType' })
})

t.test('errors of a request that negotiated protobuf are a protobuf Status', async t => {
  const { call } = await start(t)
  const missing = await call('GET', '/api/v1/namespaces/default/configmaps/none', undefined, { accept: `${PB}, application/json` })
  t.equal(missing.status, 404)
  t.equal(missing.type, PB)
  t.match(decodeEnvelope(missing.body, messages), { apiVersion: 'v1', kind: 'Status', status: 'Failure', reason: 'NotFound', code: 404, details: { name: 'none', kind: 'configmaps' } })
  const body = encodeEnvelope(configMap('twice'), messages)
  await call('POST', '/api/v1/namespaces/default/configmaps', body, { 'content-type': PB })
  const dup = await call('POST', '/api/v1/namespaces/default/configmaps', body, { 'content-type': PB, accept: PB })
  t.equal(dup.status, 409)
  t.match(decodeEnvelope(dup.body, messages), { kind: 'Status', reason: 'AlreadyExists' })
  const json = await call('GET', '/api/v1/namespaces/default/configmaps/none', undefined, { accept: 'application/json' })
  t.equal(json.type, 'application/json', 'a JSON request still gets JSON errors')
})

t.test('a bad protobuf body answers 400 with a Status', async t => {
  const { call } = await start(t)
  const r = await call('POST', '/api/v1/namespaces/default/configmaps', Buffer.from('{"kind":"ConfigMap"}'), { 'content-type': PB })
  t.equal(r.status, 400)
  t.match(JSON.parse(r.body.toString()), { reason: 'BadRequest', message: /expected prefix \[107 56 115 0\]/ })
})

/** Reads `count` length-prefixed WatchEvent frames from a protobuf watch, as a raw decoder. */
async function readFrames (body: AsyncIterable<Buffer>, count: number): Promise<Array<{ type: string; object: Record<string, unknown> }>> {
  const out: Array<{ type: string; object: Record<string, unknown> }> = []
  let buf = Buffer.alloc(0)
  for await (const chunk of body) {
    buf = Buffer.concat([buf, chunk])
    while (buf.length >= 4 && buf.length >= 4 + buf.readUInt32BE(0)) {
      const event = protobuf.Reader.create(buf.subarray(4, 4 + buf.readUInt32BE(0)))
      buf = buf.subarray(4 + buf.readUInt32BE(0))
      let type = ''
      let object: Record<string, unknown> = {}
      while (event.pos < event.len) {
        const tag = event.uint32()
        if (tag === 10) type = event.string()
        else if (tag === 18) {
          const ext = protobuf.Reader.create(event.bytes())
          if (ext.uint32() === 10) object = decodeEnvelope(ext.bytes(), messages)
        } else event.skipType(tag & 7)
      }
      out.push({ type, object })
      if (out.length === count) return out
    }
  }
  return out
}

t.test('a protobuf watch is length-prefixed WatchEvent frames', async t => {
  const { call, base } = await start(t)
  await call('POST', '/api/v1/namespaces/default/configmaps', JSON.stringify(configMap('before')), { 'content-type': 'application/json' })
  const ac = new AbortController()
  t.teardown(() => ac.abort())
  const r = await request(`${base}/api/v1/namespaces/default/configmaps?watch=1`, { headers: { accept: `${PB}, application/json` }, signal: ac.signal })
  t.equal(r.headers['content-type'], `${PB};stream=watch`)
  const frames = readFrames(r.body, 2)
  await call('POST', '/api/v1/namespaces/default/configmaps', JSON.stringify(configMap('after')), { 'content-type': 'application/json' })
  const events = await frames
  t.same(events.map(e => [e.type, (e.object.metadata as { name: string }).name]), [['ADDED', 'before'], ['ADDED', 'after']])
  t.match(events[1].object, { apiVersion: 'v1', kind: 'ConfigMap', data: { mode: 'fast' } })
})
