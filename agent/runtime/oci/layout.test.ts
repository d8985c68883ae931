// Offline import of OCI image layouts: directories and tar / tar.gz archives, verified like a pull.
import t from 'tap'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { buildWasmImageLayout, layoutTar, writeLayoutDir } from './layout-writer.js'
import { openLayout } from './layout.js'
import { fetchWasmImage } from './image-fetch.js'
import { ImageStore } from './store.js'
import { writeTar } from './tar.js'

const module = Buffer.from('\0asm\x01\0\0\0', 'latin1')
const dir = await mkdtemp(join(tmpdir(), 'orch-layout-'))
t.teardown(() => rm(dir, { recursive: true, force: true }))

t.test('imports from a directory, a tar and a tar.gz archive', async t => {
  const layout = buildWasmImageLayout({ module, refName: 'example.com/app:1' })
  await writeLayoutDir(join(dir, 'd'), layout)
  await writeFile(join(dir, 'a.tar'), layoutTar(layout))
  await writeFile(join(dir, 'a.tar.gz'), gzipSync(layoutTar(layout)))
  for (const p of ['d', 'a.tar', 'a.tar.gz']) {
    const { images, source } = await openLayout(join(dir, p))
    t.same(images.map(i => i.name), ['example.com/app:1'], `${p}: names the image`)
    const store = await ImageStore.open(join(dir, `store-${p}`))
    const rec = await fetchWasmImage(source, images[0].descriptor.digest, store, images[0].name)
    t.same(rec.repoTags, ['example.com/app:1'])
    t.same(await store.readBlob(rec.moduleDigest), module)
  }
})

t.test('rejects a layout whose blob was tampered with', async t => {
  const layout = buildWasmImageLayout({ module })
  const key = `blobs/sha256/${layout.moduleLayerDigest.slice(7)}`
  layout.files.set(key, Buffer.from('\0asm\x01\0\0\x01', 'latin1'))
  await writeFile(join(dir, 'tampered.tar'), layoutTar(layout))
  const { images, source } = await openLayout(join(dir, 'tampered.tar'))
  await t.rejects(fetchWasmImage(source, images[0].descriptor.digest, await ImageStore.open(join(dir, 'store-t'))), { code: 'OCI_ERR_DIGEST_MISMATCH' })
})

t.test('rejects what is not an image layout', async t => {
  await writeFile(join(dir, 'plain.tar'), writeTar([{ name: 'hello.txt', data: Buffer.from('hi') }]))
  await t.rejects(openLayout(join(dir, 'plain.tar')), { code: 'OCI_ERR_BAD_CONTENT' })
  await t.rejects(openLayout(join(dir, 'missing')), { code: 'OCI_ERR_NOT_FOUND' })
  await writeFile(join(dir, 'v2.tar'), writeTar([{ name: 'oci-layout', data: Buffer.from('{"imageLayoutVersion":"2.0.0"}') }, { name: 'index.json', data: Buffer.from('{}') }]))
  await t.rejects(openLayout(join(dir, 'v2.tar')), { code: 'OCI_ERR_UNSUPPORTED' })
})

t.test('the store survives reopening and removal deletes unshared blobs', async t => {
  const layout = buildWasmImageLayout({ module, refName: 'example.com/keep:1' })
  await writeLayoutDir(join(dir, 'keep'), layout)
  const { images, source } = await openLayout(join(dir, 'keep'))
  const root = join(dir, 'store-keep')
  const rec = await fetchWasmImage(source, images[0].descriptor.digest, await ImageStore.open(root), images[0].name)
  const reopened = await ImageStore.open(root)
  t.equal(reopened.find('example.com/keep:1')?.id, rec.id)
  t.equal(reopened.find(rec.id.slice(7, 19))?.id, rec.id, 'found by a short id')
  t.ok(await reopened.removeImage(rec.id))
  t.equal(reopened.find('example.com/keep:1'), undefined)
  await t.rejects(reopened.readBlob(rec.moduleDigest), { code: 'OCI_ERR_NOT_FOUND' })
})
