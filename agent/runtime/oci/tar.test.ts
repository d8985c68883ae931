import t from 'tap'
import { gzipSync } from 'node:zlib'
import { execFileSync } from 'node:child_process'
import { mkdtemp, mkdir, writeFile, rm, readFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { readTar, writeTar } from './tar.js'

t.test('reads back what it writes, plain and gzipped', async t => {
  const files = [{ name: 'a.txt', data: Buffer.from('hello') }, { name: 'dir/b.bin', data: Buffer.alloc(1500, 7) }]
  for (const archive of [writeTar(files), gzipSync(writeTar(files))]) {
    const entries = readTar(archive)
    t.same(entries.map(e => [e.name, e.type, e.data.length]), [['a.txt', 'file', 5], ['dir/b.bin', 'file', 1500]])
    t.equal(entries[0].data.toString(), 'hello')
  }
})

t.test('reads archives made by GNU tar, including long pax names and directories', async t => {
  const dir = await mkdtemp(join(tmpdir(), 'orch-tar-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const long = 'x'.repeat(120)
  await mkdir(join(dir, 'src', 'sub'), { recursive: true })
  await writeFile(join(dir, 'src', 'sub', `${long}.wasm`), 'module')
  execFileSync('tar', ['--format=pax', '-C', join(dir, 'src'), '-czf', join(dir, 'out.tgz'), '.'])
  const entries = readTar(await readFile(join(dir, 'out.tgz')))
  const file = entries.find(e => e.type === 'file')
  t.equal(file?.name, `sub/${long}.wasm`)
  t.equal(file?.data.toString(), 'module')
  t.ok(entries.some(e => e.type === 'dir' && e.name === 'sub'))
})

t.test('rejects corrupt and escaping archives', async t => {
  const good = writeTar([{ name: 'a', data: Buffer.from('x') }])
  const corrupt = Buffer.from(good)
  corrupt[10] ^= 0xff
  t.throws(() => readTar(corrupt), { code: 'OCI_ERR_BAD_CONTENT' })
  t.throws(() => readTar(writeTar([{ name: 'big', data: Buffer.alloc(1000) }]).subarray(0, 700)), { code: 'OCI_ERR_BAD_CONTENT' })
  t.throws(() => readTar(writeTar([{ name: '../etc/passwd', data: Buffer.from('x') }])), { code: 'OCI_ERR_BAD_CONTENT' })
})
