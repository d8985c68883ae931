import t from 'tap'
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { lastLogMessage, MAX_LOG_BYTES, MAX_MESSAGE_BYTES, terminationMessage, terminationMessageFile, terminationMessageMount } from './termination-message.js'
import type { Container } from './pod-types.js'

const dir = mkdtempSync(join(tmpdir(), 'orch-termmsg-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))
const c = (extra: Partial<Container> = {}): Container => ({ name: 'main', image: 'x', ...extra })
const criLog = (lines: string[]): string => lines.map(l => `2026-01-01T00:00:00.000000000Z stdout F ${l}\n`).join('')

t.test('creates an empty world-writable file per attempt under the pod dir and mounts it at terminationMessagePath', async t => {
  const file = terminationMessageFile(dir, 'uid-1', 'main', 3)
  t.equal(file, join(dir, 'pods', 'uid-1', 'containers', 'main', '3.termination-log'))
  t.same(terminationMessageMount(file, c()), { containerPath: '/dev/termination-log', hostPath: file, readonly: false })
  t.equal(readFileSync(file, 'utf8'), '')
  t.equal(statSync(file).mode & 0o777, 0o666)
  t.equal(terminationMessageMount(file, c({ terminationMessagePath: '/tmp/msg' })).containerPath, '/tmp/msg')
})

t.test('reads at most the last 4096 bytes of the file, after the runtime\'s own message', async t => {
  const file = join(dir, 'big')
  writeFileSync(file, 'a'.repeat(10) + 'b'.repeat(MAX_MESSAGE_BYTES))
  t.equal(terminationMessage({ container: c(), exitCode: 0, messageFile: file }), 'b'.repeat(MAX_MESSAGE_BYTES))
  writeFileSync(file, 'bye')
  t.equal(terminationMessage({ container: c(), exitCode: 137, runtimeMessage: 'killed', messageFile: file }), 'killed: bye')
  t.equal(terminationMessage({ container: c(), exitCode: 0, messageFile: join(dir, 'missing') }), undefined)
})

t.test('FallbackToLogsOnError uses the log tail only for a non-zero exit with an empty file', async t => {
  const file = join(dir, 'empty')
  writeFileSync(file, '')
  const log = join(dir, 'log')
  writeFileSync(log, criLog(['one', 'two']))
  const fallback = c({ terminationMessagePolicy: 'FallbackToLogsOnError' })
  t.equal(terminationMessage({ container: fallback, exitCode: 1, messageFile: file, logPath: log }), 'one\ntwo\n')
  t.equal(terminationMessage({ container: fallback, exitCode: 0, messageFile: file, logPath: log }), undefined, 'not on success')
  t.equal(terminationMessage({ container: c(), exitCode: 1, messageFile: file, logPath: log }), undefined, 'not under policy File')
  t.equal(terminationMessage({ container: fallback, exitCode: 128, reason: 'ContainerCannotRun', messageFile: file, logPath: log }), undefined, 'not when it never ran')
  writeFileSync(file, 'written')
  t.equal(terminationMessage({ container: fallback, exitCode: 1, messageFile: file, logPath: log }), 'written', 'the file wins')
  t.equal(terminationMessage({ container: fallback, exitCode: 1, logPath: log }), 'one\ntwo\n', 'no file at all (WebAssembly)')
})

t.test('the log tail keeps the last 80 lines and at most 2048 bytes, joining partial lines', async t => {
  const log = join(dir, 'long')
  writeFileSync(log, criLog(Array.from({ length: 100 }, (_, i) => `line ${i}`)))
  const tail = lastLogMessage(log)
  t.equal(tail.split('\n').filter(l => l !== '').length, 80)
  t.ok(tail.startsWith('line 20\n') && tail.endsWith('line 99\n'))
  writeFileSync(log, criLog(Array.from({ length: 40 }, () => 'x'.repeat(100))))
  t.equal(Buffer.byteLength(lastLogMessage(log)), MAX_LOG_BYTES)
  writeFileSync(log, '2026-01-01T00:00:00Z stdout P par\n2026-01-01T00:00:00Z stderr F tial\n')
  t.equal(lastLogMessage(log), 'partial\n')
})
