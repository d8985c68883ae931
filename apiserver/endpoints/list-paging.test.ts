// Paged and streamed lists over HTTP on the real registry: continue tokens, the empty string at the end (spec 2.3), one snapshot.
import t from 'tap'
import { pino } from 'pino'
import { request } from 'undici'
import { createApiServer } from '../server.js'
import { gunzipSync } from 'node:zlib'
import { body, ctx, openFixture } from '../registry/testing.js'
import { STREAM_CHUNK } from '../registry/list-stream.js'

const CMS = '/api/v1/namespaces/default/configmaps'

t.test('a paged list carries continue until its last chunk, where it is the empty string', async t => {
  const fx = await openFixture()
  const server = createApiServer({ registry: fx.registry, logger: pino({ level: 'silent' }) })
  const { port } = await server.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(async () => { await server.close(); await fx.close() })
  const call = async (method: string, path: string, body?: string): Promise<any> => {
    const r = await request(`http://127.0.0.1:${port}${path}`, { method: method as 'GET', body, headers: body === undefined ? {} : { 'content-type': 'application/json' } })
    return await r.body.json()
  }
  for (const n of ['a', 'b', 'c']) await call('POST', CMS, JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: n } }))
  const first = await call('GET', `${CMS}?limit=2`)
  t.equal(first.items.length, 2)
  t.not(first.metadata.continue, '')
  const last = await call('GET', `${CMS}?limit=2&continue=${encodeURIComponent(first.metadata.continue)}`)
  t.equal(last.items.length, 1)
  t.equal(last.metadata.continue, '')
  t.equal(last.metadata.resourceVersion, first.metadata.resourceVersion, 'one snapshot across chunks')
  const all = await call('GET', CMS)
  t.equal(all.metadata.continue, '', 'an unpaged list says so too')
})

t.test('a list larger than a stream chunk arrives whole, plain and gzipped, from one snapshot', async t => {
  const fx = await openFixture()
  const server = createApiServer({ registry: fx.registry, logger: pino({ level: 'silent' }) })
  const { port } = await server.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(async () => { await server.close(); await fx.close() })
  const cms = fx.registry.handler('', 'v1', 'configmaps')!
  const n = STREAM_CHUNK * 2 + 7
  await Promise.all(Array.from({ length: n }, async (_, i) => await cms.create(ctx(), 'default', body({ metadata: { name: `cm-${String(i).padStart(5, '0')}` }, data: { i: String(i) } }))))
  const plain = await request(`http://127.0.0.1:${port}${CMS}`)
  t.equal(plain.headers['content-length'], undefined, 'streamed: no length up front')
  const list = await plain.body.json() as { metadata: { resourceVersion: string }, items: Array<{ metadata: { name: string } }> }
  t.equal(list.items.length, n)
  t.same(list.items.map(o => o.metadata.name), Array.from({ length: n }, (_, i) => `cm-${String(i).padStart(5, '0')}`))
  t.equal(list.metadata.resourceVersion, String(fx.store.currentRevision()))
  const zipped = await request(`http://127.0.0.1:${port}${CMS}`, { headers: { 'accept-encoding': 'gzip' } })
  t.equal(zipped.headers['content-encoding'], 'gzip')
  const unzipped = JSON.parse(gunzipSync(Buffer.from(await zipped.body.arrayBuffer())).toString()) as typeof list
  t.same(unzipped, list)
})
