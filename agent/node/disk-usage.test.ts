// du on a real directory tree: blocks on disk, hard links once, symlinks not followed, a missing path undefined; the cache's TTL.
import t from 'tap'
import { linkSync, lstatSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { cachedDiskUsage, diskUsage } from './disk-usage.js'

const Ki = 1024

t.test('the bytes a tree takes on disk, hard links counted once, symlinks not followed', async t => {
  const dir = mkdtempSync(join(tmpdir(), 'orch-du-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const blocks = (p: string): number => statSync(p).blocks * 512
  mkdirSync(join(dir, 'a', 'b'), { recursive: true })
  writeFileSync(join(dir, 'a', 'one'), Buffer.alloc(100 * Ki, 1))
  writeFileSync(join(dir, 'a', 'b', 'two'), Buffer.alloc(300 * Ki, 2))
  linkSync(join(dir, 'a', 'one'), join(dir, 'a', 'one-again'))
  const outside = mkdtempSync(join(tmpdir(), 'orch-du-outside-'))
  t.teardown(() => rmSync(outside, { recursive: true, force: true }))
  writeFileSync(join(outside, 'big'), Buffer.alloc(1024 * Ki, 3))
  symlinkSync(outside, join(dir, 'a', 'link'))
  const expected = [dir, join(dir, 'a'), join(dir, 'a', 'b'), join(dir, 'a', 'one'), join(dir, 'a', 'b', 'two')].reduce((n, p) => n + blocks(p), 0) +
    lstatSync(join(dir, 'a', 'link')).blocks * 512
  const used = await diskUsage(dir)
  t.ok(used! >= 400 * Ki, `at least the files' data (${used})`)
  t.ok(used! < 1024 * Ki, 'the symlinked directory outside is not walked')
  t.equal(used, expected, 'the directories, each file once, the link itself')
  t.equal(await diskUsage(join(dir, 'missing')), undefined)
})

t.test('the cached measure walks a path again only after its TTL', async t => {
  const dir = mkdtempSync(join(tmpdir(), 'orch-du-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  let now = 0
  const du = cachedDiskUsage(5_000, () => now)
  const first = await du(dir)
  writeFileSync(join(dir, 'f'), Buffer.alloc(64 * Ki, 1))
  t.equal(await du(dir), first, 'within the TTL: the earlier figure')
  now = 5_000
  t.ok((await du(dir))! >= first! + 64 * Ki, 'after it: measured again')
})
