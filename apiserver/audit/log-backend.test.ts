// The audit log backend: JSON lines in order, batched writes, full disks and full buffers logged once.
import t from 'tap'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { pino, type Logger } from 'pino'
import { LogBackend, openLogBackend, stdoutWriter } from './log-backend.js'
import { RotatingFile } from './rotating-file.js'
import type { AuditEvent } from './event.js'

const event = (auditID: string): AuditEvent => ({
  kind: 'Event', apiVersion: 'audit.orch.io/v1', level: 'Metadata', auditID, stage: 'ResponseComplete', requestURI: '/api', verb: 'get',
  user: { username: 'u' }, requestReceivedTimestamp: '2026-11-25T09:00:00.000000Z', stageTimestamp: '2026-11-25T09:00:00.000001Z'
})

/** A pino logger whose records are kept in `lines`. */
function capturedLogger (): { logger: Logger; lines: any[] } {
  const lines: any[] = []
  const out = new Writable({ write (chunk, _e, cb) { lines.push(JSON.parse(String(chunk))); cb() } })
  return { logger: pino({ level: 'info' }, out), lines }
}

t.test('events are written as JSON lines, in order, after write returns', async t => {
  const dir = mkdtempSync(join(tmpdir(), 'orch-auditlog-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const path = join(dir, 'sub', 'audit.log')
  const b = await openLogBackend(path, { maxSizeMB: 0, maxBackups: 0, maxAgeDays: 0 }, pino({ level: 'silent' }))
  t.equal(readFileSync(path, 'utf8'), '', 'the file exists from the start')
  for (let i = 0; i < 500; i++) b.write(event(`id-${i}`))
  t.equal(readFileSync(path, 'utf8'), '', 'nothing is written on the caller\'s turn')
  await b.close()
  const lines = readFileSync(path, 'utf8').trimEnd().split('\n').map(l => JSON.parse(l))
  t.equal(lines.length, 500)
  t.same(lines.map(l => l.auditID), Array.from({ length: 500 }, (_, i) => `id-${i}`))
  t.same(Object.keys(lines[0]), ['kind', 'apiVersion', 'level', 'auditID', 'stage', 'requestURI', 'verb', 'user', 'requestReceivedTimestamp', 'stageTimestamp'])
})

t.test('writes are batched: many events, few writes', async t => {
  const writes: number[] = []
  const out = new Writable({ write (chunk: Buffer, _e, cb) { writes.push(chunk.toString().split('\n').length - 1); setImmediate(cb) } })
  const b = new LogBackend({ writer: stdoutWriter(out), logger: pino({ level: 'silent' }) })
  for (let i = 0; i < 1000; i++) b.write(event(String(i)))
  await b.close()
  t.equal(writes.reduce((a, n) => a + n, 0), 1000)
  t.ok(writes.length <= 2, `${writes.length} writes`)
})

t.test('a full disk is logged once and never thrown', async t => {
  const { logger, lines } = capturedLogger()
  // /dev/full answers every write with ENOSPC, as a full file system does.
  const full = new RotatingFile('/dev/full', { maxSizeMB: 100, maxBackups: 0, maxAgeDays: 0 })
  const b = new LogBackend({ writer: full, logger })
  for (let round = 0; round < 3; round++) {
    b.write(event(`lost-${round}`))
    await new Promise(resolve => setTimeout(resolve, 20))
  }
  await b.close()
  const errors = lines.filter(l => l.level === 50)
  t.equal(errors.length, 1)
  t.match(errors[0], { msg: /cannot write the audit log/, err: { code: 'ENOSPC' } })
})

t.test('after a failure, writing resumes when the output accepts again (logged once each way)', async t => {
  const { logger, lines } = capturedLogger()
  let full = true
  const got: string[] = []
  const writer = {
    async write (data: Buffer) { if (full) throw Object.assign(new Error('no space left on device'), { code: 'ENOSPC' }); got.push(String(data)) },
    async close () {}
  }
  const b = new LogBackend({ writer, logger })
  b.write(event('lost'))
  await new Promise(resolve => setTimeout(resolve, 20))
  full = false
  b.write(event('kept'))
  await b.close()
  t.same(got.join('').trimEnd().split('\n').map(l => JSON.parse(l).auditID), ['kept'])
  t.same(lines.map(l => l.msg), ['cannot write the audit log; audit events are lost until writes succeed again', 'audit log writes succeed again'])
})

t.test('past the buffer, events are dropped and that is logged once', async t => {
  const { logger, lines } = capturedLogger()
  const out = new Writable({ write (_c, _e, cb) { setTimeout(cb, 5) } })
  const b = new LogBackend({ writer: stdoutWriter(out), logger, bufferEvents: 10 })
  for (let i = 0; i < 50; i++) b.write(event(String(i)))
  await b.close()
  t.equal(lines.filter(l => /buffer is full/.test(l.msg)).length, 1)
})

t.test('a standard output that fails (closed pipe) is logged, not an unhandled error', async t => {
  const { logger, lines } = capturedLogger()
  const out = new Writable({ write (_c, _e, cb) { cb(new Error('EPIPE')) } })
  const b = new LogBackend({ writer: stdoutWriter(out), logger })
  b.write(event('a'))
  await b.close()
  t.equal(lines.filter(l => l.level === 50).length, 1)
})

t.test('events after close are ignored', async t => {
  const chunks: string[] = []
  const out = new Writable({ write (c, _e, cb) { chunks.push(String(c)); cb() } })
  const b = new LogBackend({ writer: stdoutWriter(out), logger: pino({ level: 'silent' }) })
  b.write(event('a'))
  await b.close()
  b.write(event('b'))
  await new Promise(resolve => setTimeout(resolve, 10))
  t.equal(chunks.join('').split('\n').filter(Boolean).length, 1)
})
