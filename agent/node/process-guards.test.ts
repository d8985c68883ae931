import t from 'tap'
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { acquireLockFile, applyOomScoreAdj, checkSwap, GuardError, swapDevices } from './process-guards.js'

const dir = mkdtempSync(join(tmpdir(), 'guards-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))

const header = 'Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n'

t.test('swap on refuses to start unless --fail-swap-on=false', async t => {
  const swaps = `${header}/swapfile                               file\t\t1048572\t\t0\t\t-2\n`
  t.same(swapDevices(swaps), ['/swapfile                               file\t\t1048572\t\t0\t\t-2'])
  t.throws(() => checkSwap(true, () => swaps), { message: /^running with swap on is not supported, please disable swap! or set --fail-swap-on flag to false\. \/proc\/swaps contained: \[\/swapfile/ })
  try { checkSwap(true, () => swaps) } catch (err) { t.ok(err instanceof GuardError, 'a startup error') }
  t.doesNotThrow(() => checkSwap(false, () => swaps))
  t.doesNotThrow(() => checkSwap(true, () => header), 'only the header: no swap')
})

t.test('oom_score_adj is written; a failure is reported, not thrown', async t => {
  const f = join(dir, 'oom_score_adj')
  t.equal(applyOomScoreAdj(-999, f), undefined)
  t.equal(readFileSync(f, 'utf8'), '-999\n')
  t.match(applyOomScoreAdj(5, join(dir, 'missing', 'x')), /failed to apply oom_score_adj 5/)
})

t.test('the lock file holds our pid and is removed on release', async t => {
  const f = join(dir, 'a.lock')
  const held = await acquireLockFile(f)
  t.equal(readFileSync(f, 'utf8').trim(), String(process.pid))
  held.release()
  t.notOk(existsSync(f))
})

t.test('a stale lock file (its process gone) is taken over', async t => {
  const f = join(dir, 'stale.lock')
  const child = spawn(process.execPath, ['-e', ''])
  await new Promise(resolve => child.once('exit', resolve))
  writeFileSync(f, `${child.pid}\n`)
  const held = await acquireLockFile(f)
  t.equal(readFileSync(f, 'utf8').trim(), String(process.pid))
  held.release()
})

t.test('a contender waits for a live holder, and the holder is told (exit-on-lock-contention)', async t => {
  const f = join(dir, 'live.lock')
  // A live process that is not us holds the file.
  const holder = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'])
  t.teardown(() => holder.kill())
  writeFileSync(f, `${holder.pid}\n`)
  const waiting = acquireLockFile(f, { pollMs: 50 })
  await new Promise(resolve => setTimeout(resolve, 200))
  t.equal(readFileSync(f, 'utf8').trim(), String(holder.pid), 'still held by the other process')
  holder.kill()
  await new Promise(resolve => holder.once('exit', resolve))
  const held = await waiting
  t.equal(readFileSync(f, 'utf8').trim(), String(process.pid), 'taken once the holder is gone')
  // Now we hold it with a contention watch; a contender touching it triggers the callback.
  held.release()
  let told = false
  const ours = await acquireLockFile(f, { onContention: () => { told = true } })
  const contender = spawn(process.execPath, ['-e', `require('fs').utimesSync(${JSON.stringify(f)}, new Date(), new Date())`])
  await new Promise(resolve => contender.once('exit', resolve))
  for (let i = 0; i < 40 && !told; i++) await new Promise(resolve => setTimeout(resolve, 50))
  t.ok(told, 'the holder saw the contention')
  ours.release()
})
