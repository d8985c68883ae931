// Audit log rotation as lumberjack does it: size limit, timestamped backups, maxbackup and maxage.
import t, { type Test } from 'tap'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gunzipSync, gzipSync } from 'node:zlib'
import { backupTimestamp, parseBackupTimestamp, RotatingFile } from './rotating-file.js'

const MB = 1024 * 1024
const T0 = Date.parse('2026-11-25T09:00:00.000Z')

function setup (t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'orch-rotate-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

t.test('backup names carry the UTC time as lumberjack writes it', async t => {
  t.equal(backupTimestamp(T0), '2026-11-25T09-00-00.000')
  t.equal(parseBackupTimestamp('2026-11-25T09-00-00.000'), T0)
  t.equal(parseBackupTimestamp('2026-11-25'), undefined)
})

t.test('a write that would pass maxsize moves the file to a timestamped backup and starts a new one', async t => {
  const dir = setup(t)
  let now = T0
  const f = new RotatingFile(join(dir, 'audit.log'), { maxSizeMB: 1, maxBackups: 0, maxAgeDays: 0 }, () => now)
  await f.ensure()
  t.equal(statSync(join(dir, 'audit.log')).mode & 0o777, 0o600)
  await f.write(Buffer.alloc(MB - 10, 'a'))
  await f.write(Buffer.from('0123456789'))
  t.same(readdirSync(dir), ['audit.log'], 'exactly maxsize still fits')
  now += 1500
  await f.write(Buffer.from('next\n'))
  await f.close()
  t.same(readdirSync(dir).sort(), ['audit-2026-11-25T09-00-01.500.log', 'audit.log'])
  t.equal(readFileSync(join(dir, 'audit.log'), 'utf8'), 'next\n')
  t.equal(statSync(join(dir, 'audit-2026-11-25T09-00-01.500.log')).size, MB)
})

t.test('an existing file is appended to, or rotated first when the write would not fit', async t => {
  const dir = setup(t)
  const path = join(dir, 'audit.log')
  writeFileSync(path, 'old\n')
  const f = new RotatingFile(path, { maxSizeMB: 1, maxBackups: 0, maxAgeDays: 0 }, () => T0)
  await f.write(Buffer.from('new\n'))
  await f.close()
  t.equal(readFileSync(path, 'utf8'), 'old\nnew\n')
  writeFileSync(path, Buffer.alloc(MB, 'x'))
  const g = new RotatingFile(path, { maxSizeMB: 1, maxBackups: 0, maxAgeDays: 0 }, () => T0)
  await g.write(Buffer.from('fresh\n'))
  await g.close()
  t.equal(readFileSync(path, 'utf8'), 'fresh\n')
  t.ok(readdirSync(dir).includes('audit-2026-11-25T09-00-00.000.log'))
})

t.test('a single write larger than maxsize is refused', async t => {
  const dir = setup(t)
  const f = new RotatingFile(join(dir, 'a.log'), { maxSizeMB: 1, maxBackups: 0, maxAgeDays: 0 })
  await t.rejects(f.write(Buffer.alloc(MB + 1)), { message: /write length 1048577 exceeds maximum file size 1048576/ })
})

t.test('maxbackup keeps the newest backups; other files are left alone', async t => {
  const dir = setup(t)
  for (const h of ['01', '02', '03']) writeFileSync(join(dir, `audit-2026-11-25T${h}-00-00.000.log`), h)
  writeFileSync(join(dir, 'audit-notes.log'), 'mine')
  writeFileSync(join(dir, 'other-2026-11-25T01-00-00.000.log'), 'theirs')
  writeFileSync(join(dir, 'audit.log'), Buffer.alloc(MB, 'x'))
  const f = new RotatingFile(join(dir, 'audit.log'), { maxSizeMB: 1, maxBackups: 2, maxAgeDays: 0 }, () => T0)
  await f.write(Buffer.from('x'))
  await f.close()
  t.same(readdirSync(dir).sort(), ['audit-2026-11-25T03-00-00.000.log', 'audit-2026-11-25T09-00-00.000.log', 'audit-notes.log', 'audit.log', 'other-2026-11-25T01-00-00.000.log'])
})

t.test('maxage removes backups older than its days by the time in their names, at start too', async t => {
  const dir = setup(t)
  writeFileSync(join(dir, 'audit-2026-11-20T09-00-00.000.log'), 'old')
  writeFileSync(join(dir, 'audit-2026-11-23T09-00-00.000.log'), 'recent')
  const f = new RotatingFile(join(dir, 'audit.log'), { maxSizeMB: 1, maxBackups: 0, maxAgeDays: 3 }, () => T0)
  await f.write(Buffer.from('x'))
  await f.close()
  t.same(readdirSync(dir).sort(), ['audit-2026-11-23T09-00-00.000.log', 'audit.log'])
})

t.test('backups are kept without limits when none are set', async t => {
  const dir = setup(t)
  let now = T0
  const f = new RotatingFile(join(dir, 'audit.log'), { maxSizeMB: 1, maxBackups: 0, maxAgeDays: 0 }, () => now)
  for (let i = 0; i < 3; i++) { await f.write(Buffer.alloc(MB)); now += 1000 }
  await f.close()
  t.equal(readdirSync(dir).length, 3)
})

t.test('compress gzips backups (old ones too) and counts a backup once, plain or gzipped', async t => {
  const dir = setup(t)
  writeFileSync(join(dir, 'audit-2026-11-25T01-00-00.000.log'), 'one\n')
  writeFileSync(join(dir, 'audit-2026-11-25T02-00-00.000.log.gz'), gzipSync('two\n'))
  writeFileSync(join(dir, 'audit-2026-11-25T03-00-00.000.log.gz'), gzipSync('three\n'))
  writeFileSync(join(dir, 'audit.log'), Buffer.alloc(MB, 'x'))
  const f = new RotatingFile(join(dir, 'audit.log'), { maxSizeMB: 1, maxBackups: 2, maxAgeDays: 0, compress: true }, () => T0)
  await f.write(Buffer.from('x'))
  await f.close()
  t.same(readdirSync(dir).sort(), ['audit-2026-11-25T03-00-00.000.log.gz', 'audit-2026-11-25T09-00-00.000.log.gz', 'audit.log'])
  t.equal(gunzipSync(readFileSync(join(dir, 'audit-2026-11-25T09-00-00.000.log.gz'))).length, MB)
  t.equal(statSync(join(dir, 'audit-2026-11-25T09-00-00.000.log.gz')).mode & 0o777, 0o600)
})

t.test('a failing clean-up is reported and never fails a write', async t => {
  const dir = setup(t)
  // A directory named like a backup cannot be compressed.
  mkdirSync(join(dir, 'audit-2026-11-25T01-00-00.000.log'))
  const errors: unknown[] = []
  const f = new RotatingFile(join(dir, 'audit.log'), { maxSizeMB: 1, maxBackups: 0, maxAgeDays: 0, compress: true }, () => T0, err => errors.push(err))
  await f.write(Buffer.from('x'))
  await f.close()
  t.equal(readFileSync(join(dir, 'audit.log'), 'utf8'), 'x')
  t.match(errors, [{ code: 'EISDIR' }])
})
