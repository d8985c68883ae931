// `orch admin defrag`: output, exit codes, and the refusal of a store a running process holds.
import t from 'tap'
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { openLmdbStore } from '../storage/lmdb/index.js'
import { main } from './main.js'

const repoRoot = resolve(fileURLToPath(new URL('.', import.meta.url)), '../..')
const dir = mkdtempSync(join(tmpdir(), 'orch-admin-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))

function io (): { text: () => string, io: { out: (s: string) => void, err: (s: string) => void } } {
  const all: string[] = []
  return { text: () => all.join(''), io: { out: s => { all.push(s) }, err: s => { all.push(s) } } }
}

t.test('orch admin defrag rewrites a stopped store and reports the sizes', async t => {
  const store = await openLmdbStore({ path: join(dir, 'store') })
  for (let i = 0; i < 200; i++) await store.create(`a/${i}`, () => Buffer.alloc(8000, 'a'))
  for (let i = 0; i < 200; i++) await store.delete(`a/${i}`)
  await store.compact(store.currentRevision())
  await store.close()
  const r = io()
  t.equal(await main(['admin', 'defrag', '--data-dir', dir], r.io), 0)
  const m = new RegExp(`^defragmented ${dir}/store: (\\d+) -> (\\d+) bytes\\n$`).exec(r.text())
  t.ok(m !== null && Number(m[2]) < Number(m[1]), r.text())
})

t.test('orch admin: usage errors exit 2', async t => {
  for (const argv of [['admin'], ['admin', 'shrink'], ['admin', 'defrag', '--port', '1'], ['admin', 'defrag', 'extra']]) {
    const r = io()
    t.equal(await main(argv, r.io), 2, argv.join(' '))
    t.match(r.text(), /^orch: /)
  }
})

t.test('orch admin defrag refuses a store a process holds open', { skip: process.platform !== 'linux' && 'reads /proc/locks' }, async t => {
  const path = join(dir, 'store')
  const child = spawn(process.execPath, ['--input-type=module', '-e',
    `import { open } from 'lmdb'; const r = open({ path: ${JSON.stringify(path)} }); r.get('x'); console.log('open'); setTimeout(() => {}, 30000)`],
  { cwd: repoRoot, stdio: ['ignore', 'pipe', 'inherit'] })
  t.teardown(() => { child.kill('SIGKILL') })
  await new Promise(resolve => child.stdout.once('data', resolve))
  const r = io()
  t.equal(await main(['admin', 'defrag', '--data-dir', dir], r.io), 1)
  t.match(r.text(), new RegExp(`is in use by process ${child.pid}: stop the orch serving it first \\(defrag is offline\\)`))
})
