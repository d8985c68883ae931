// Offline defragmentation: the file shrinks to its live pages, the store reopens with the same data and revisions,
// and a store some process holds open is recognised as in use.
import t from 'tap'
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { openLmdbStore } from './index.js'
import { defragStore, holders } from './defrag.js'

const repoRoot = resolve(fileURLToPath(new URL('.', import.meta.url)), '../../..')
const dirs: string[] = []
t.teardown(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }) })
function tempDir (): string {
  const d = mkdtempSync(join(tmpdir(), 'orch-defrag-'))
  dirs.push(d)
  return d
}

async function churned (path: string): Promise<{ revision: number, compacted: number }> {
  const store = await openLmdbStore({ path })
  const value = Buffer.alloc(8000, 'd')
  for (let i = 0; i < 400; i++) await store.create(`d/${i}`, () => value)
  for (let i = 0; i < 380; i++) await store.delete(`d/${i}`)
  await store.compact(store.currentRevision())
  const r = { revision: store.currentRevision(), compacted: store.compactedRevision() }
  await store.close()
  return r
}

t.test('rewrites the store compacted; it reopens with the same data and revisions', async t => {
  const path = join(tempDir(), 'store')
  const before = await churned(path)
  const r = await defragStore(path)
  t.equal(statSync(join(path, 'data.mdb')).size, r.afterBytes)
  t.ok(r.afterBytes < r.beforeBytes / 4, `${r.beforeBytes} -> ${r.afterBytes} bytes`)
  const store = await openLmdbStore({ path })
  t.teardown(() => store.close())
  t.equal(store.currentRevision(), before.revision)
  t.equal(store.compactedRevision(), before.compacted)
  const list = await store.list('d/')
  t.same(list.items.map(i => i.key), Array.from({ length: 20 }, (_, i) => `d/${380 + i}`).sort())
  t.equal(list.items[0].value.length, 8000)
  const next = await store.create('d/new', () => Buffer.from('n'))
  t.equal(next.modRevision, before.revision + 1, 'writes go on')
})

t.test('a copy left by an interrupted run is replaced; a missing store is an error', async t => {
  const dir = tempDir()
  const path = join(dir, 'store')
  await churned(path)
  rmSync(`${path}-defrag`, { recursive: true, force: true })
  writeFileSync(`${path}-defrag`, 'left over') // even a file in its way
  await defragStore(path)
  t.throws(() => statSync(`${path}-defrag`), { code: 'ENOENT' }, 'the copy is gone')
  await t.rejects(defragStore(join(dir, 'nothing')), { message: /no store at/ })
})

t.test('holders: the processes that hold the store open, from /proc/locks', async t => {
  const path = join(tempDir(), 'store')
  await churned(path)
  t.same(holders(path), [], 'none once closed')
  const st = statSync(join(path, 'lock.mdb'))
  const dev = Number(st.dev)
  const id = `${((dev >> 8) & 0xfff).toString(16).padStart(2, '0')}:${((dev & 0xff) | ((dev >> 12) & 0xfff00)).toString(16).padStart(2, '0')}:${st.ino}`
  const fake = join(tempDir(), 'locks')
  writeFileSync(fake, `1: POSIX  ADVISORY  WRITE 4242 ${id} 4242 4242\n2: POSIX  ADVISORY  READ 4242 ${id} 0 0\n3: POSIX  ADVISORY  READ 77 00:11:12 0 0\n`)
  t.same(holders(path, fake), [4242])
  t.equal(holders(path, join(fake, 'missing')), undefined, 'unknown without /proc/locks')

  if (process.platform !== 'linux') return
  const child = spawn(process.execPath, ['--input-type=module', '-e',
    `import { open } from 'lmdb'; const r = open({ path: ${JSON.stringify(path)} }); r.get('x'); console.log('open'); setTimeout(() => {}, 30000)`],
  { cwd: repoRoot, stdio: ['ignore', 'pipe', 'inherit'] })
  t.teardown(() => { child.kill('SIGKILL') })
  await new Promise(resolve => child.stdout.once('data', resolve))
  t.same(holders(path), [child.pid], 'a process with the store open')
})
