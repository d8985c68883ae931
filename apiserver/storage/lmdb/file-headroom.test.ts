// Writing the data file ahead: zeros past the end only, when the pages in use come near it; the store still reads back.
import t from 'tap'
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { FileHeadroom } from './file-headroom.js'
import { openLmdbStore } from './index.js'

const KiB = 1024
const MiB = 1024 * KiB
const silent = { info () {}, warn () {}, error () {} }
const dir = mkdtempSync(join(tmpdir(), 'orch-headroom-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))

t.test('extends with zeros past the end when the pages in use come within lowBytes of it, and only then', async t => {
  const file = join(dir, 'f')
  writeFileSync(file, Buffer.alloc(100 * KiB, 7))
  const h = new FileHeadroom({ file, chunkBytes: 3 * MiB + 5, lowBytes: 64 * KiB, logger: silent })
  h.ensure(10 * KiB)
  t.equal(statSync(file).size, 100 * KiB, 'far from the end: nothing written')
  h.ensure(40 * KiB)
  const after = readFileSync(file)
  t.equal(after.length, 100 * KiB + 3 * MiB + 5, 'one chunk written ahead')
  t.ok(after.subarray(0, 100 * KiB).every(b => b === 7), 'the bytes before the old end are untouched')
  t.ok(after.subarray(100 * KiB).every(b => b === 0), 'zeros past it')
  h.ensure(3 * MiB)
  t.equal(statSync(file).size, after.length, 'room left: nothing more')
})

t.test('a store writes its data file ahead, and reopens with every write', async t => {
  const path = join(dir, 'store')
  const store = await openLmdbStore({ path })
  const value = Buffer.alloc(1400, 120)
  for (let i = 0; i < 50; i++) await store.create(`k/${i}`, () => value)
  t.ok(statSync(join(path, 'data.mdb')).size >= 8 * MiB, 'the data file is written ahead of its pages')
  await store.close()
  const again = await openLmdbStore({ path })
  t.equal((await again.list('k/')).items.length, 50)
  t.same((await again.get('k/49'))?.value, value)
  await again.close()
})
