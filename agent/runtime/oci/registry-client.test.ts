// Pulls from a real (tiny) OCI registry over HTTP on 127.0.0.1: token dance, redirects, index, verification.
import t from 'tap'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildWasmImageLayout } from './layout-writer.js'
import { startTestRegistry } from './test-registry.js'
import { registrySource, parseChallenge } from './registry-client.js'
import { parseReference } from './reference.js'
import { fetchWasmImage } from './image-fetch.js'
import { ImageStore } from './store.js'
import { sha256Digest } from './digest.js'

const module = Buffer.from('\0asm\x01\0\0\0', 'latin1')
const dir = await mkdtemp(join(tmpdir(), 'orch-reg-'))
const registry = await startTestRegistry()
t.teardown(async () => { await registry.close(); await rm(dir, { recursive: true, force: true }) })
let n = 0
const freshStore = async (): Promise<ImageStore> => await ImageStore.open(join(dir, `store-${++n}`))

t.test('parses WWW-Authenticate challenges', async t => {
  t.same(parseChallenge('Bearer realm="https://auth.example/token",service="reg",scope="repository:a/b:pull"'), {
    scheme: 'bearer', params: { realm: 'https://auth.example/token', service: 'reg', scope: 'repository:a/b:pull' }
  })
  t.same(parseChallenge('Basic realm=registry'), { scheme: 'basic', params: { realm: 'registry' } })
})

t.test('pulls a wasm image by tag through the Bearer token dance and blob redirects', async t => {
  const layout = buildWasmImageLayout({ module })
  registry.addRepository('apps/hello', 'v1', layout)
  const ref = parseReference(`${registry.host}/apps/hello:v1`)
  const store = await freshStore()
  const before = registry.requests.length
  const rec = await fetchWasmImage(registrySource(ref), 'v1', store, `${registry.host}/apps/hello:v1`)
  const seen = registry.requests.slice(before)
  t.ok(seen.includes('GET /token'), 'fetched a token')
  t.ok(seen.some(r => r.startsWith('GET /raw/')), 'followed a blob redirect')
  t.equal(seen.filter(r => r === 'GET /token').length, 1, 'one token serves the whole pull')
  t.equal(rec.id, layout.configDigest)
  t.equal(rec.manifestDigest, layout.manifestDigest)
  t.same(rec.repoTags, [`${registry.host}/apps/hello:v1`])
  t.same(rec.repoDigests, [`${registry.host}/apps/hello@${layout.manifestDigest}`])
  t.same(await store.readBlob(rec.moduleDigest), module)
  t.equal(store.find(`${registry.host}/apps/hello@${layout.manifestDigest}`)?.id, rec.id, 'found by digest reference')
})

t.test('pulls by digest, and modules inside tar+gzip layers', async t => {
  const layout = buildWasmImageLayout({ module, layer: 'tar+gzip' })
  registry.addRepository('apps/tarred', 'latest', layout)
  const rec = await fetchWasmImage(registrySource(parseReference(`${registry.host}/apps/tarred`)), layout.manifestDigest, await freshStore())
  t.equal(rec.moduleDigest, sha256Digest(module))
})

t.test('rejects a blob whose content does not match its digest', async t => {
  const layout = buildWasmImageLayout({ module: Buffer.from('\0asm\x01\0\0\0\0\0', 'latin1') })
  registry.addRepository('apps/corrupt', 'v1', layout)
  registry.corruptBlob(layout.moduleLayerDigest, Buffer.from('\0asm\x01\0\0\0\xff\xff', 'latin1'))
  const store = await freshStore()
  await t.rejects(fetchWasmImage(registrySource(parseReference(`${registry.host}/apps/corrupt:v1`)), 'v1', store), { code: 'OCI_ERR_DIGEST_MISMATCH' })
  t.same(store.list(), [], 'nothing is recorded')
})

t.test('rejects a manifest whose content does not match the digest the registry claims', async t => {
  const layout = buildWasmImageLayout({ module, env: ['X=1'] })
  registry.addRepository('apps/badmanifest', 'v1', layout)
  const manifest = layout.files.get(`blobs/sha256/${layout.manifestDigest.slice(7)}`) as Buffer
  registry.corruptBlob(layout.manifestDigest, Buffer.from(manifest.toString().replace('"schemaVersion":2', '"schemaVersion": 2')))
  await t.rejects(fetchWasmImage(registrySource(parseReference(`${registry.host}/apps/badmanifest:v1`)), 'v1', await freshStore()), { code: 'OCI_ERR_DIGEST_MISMATCH' })
})

t.test('reports unknown repositories and tags as not found', async t => {
  await t.rejects(fetchWasmImage(registrySource(parseReference(`${registry.host}/apps/none:v1`)), 'v1', await freshStore()), { code: 'OCI_ERR_NOT_FOUND' })
})

t.test('reports an unreachable registry as a registry error', async t => {
  await t.rejects(registrySource(parseReference('127.0.0.1:1/apps/x:v1')).manifest('v1'), { code: 'OCI_ERR_REGISTRY' })
})

t.test('refuses blobs larger than the limit', async t => {
  const layout = buildWasmImageLayout({ module: Buffer.concat([module, Buffer.alloc(4096)]) })
  registry.addRepository('apps/large', 'v1', layout)
  await t.rejects(fetchWasmImage(registrySource(parseReference(`${registry.host}/apps/large:v1`), {}, { maxBlobBytes: 1024 }), 'v1', await freshStore()), { code: 'OCI_ERR_TOO_LARGE' })
})
