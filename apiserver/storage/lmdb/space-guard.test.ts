// The space guard with a fake measurement: admission against the reserve and the quota, one transition per change.
import t from 'tap'
import { SpaceGuard, estimateWriteBytes, type SpaceUsage } from './space-guard.js'
import type { SpaceStatus } from '../store.js'

const MiB = 1024 * 1024

interface Fake { usage: SpaceUsage, logs: Array<{ level: string, msg: string }>, now: number }

function guard (usage: SpaceUsage, opts: { quotaBytes?: number, reserveBytes?: number, resumeBytes?: number } = {}): { g: SpaceGuard, fake: Fake } {
  const fake: Fake = { usage, logs: [], now: 0 }
  const g = new SpaceGuard({
    path: '/data/store',
    quotaBytes: opts.quotaBytes ?? 0,
    reserveBytes: opts.reserveBytes ?? MiB,
    resumeBytes: opts.resumeBytes ?? 256 * 1024,
    measure: () => ({ ...fake.usage }),
    now: () => fake.now,
    logger: {
      info: (_o, msg) => { fake.logs.push({ level: 'info', msg: msg ?? '' }) },
      warn: (_o, msg) => { fake.logs.push({ level: 'warn', msg: msg ?? '' }) },
      error: (_o, msg) => { fake.logs.push({ level: 'error', msg: msg ?? '' }) }
    }
  })
  return { g, fake }
}

const tick = (): Promise<void> => new Promise(resolve => setImmediate(resolve))

t.test('admits writes until they would reach the reserve, then refuses every one with NoSpace', async t => {
  // 3 MiB free, 1 MiB reserve: 2 MiB of headroom
  const { g, fake } = guard({ storeBytes: 10 * MiB, inUseBytes: 10 * MiB, freeBytes: 3 * MiB })
  const seen: SpaceStatus[] = []
  g.subscribe(s => seen.push(s))
  g.measure()
  t.equal(g.admit('a', MiB), undefined)
  t.equal(g.admit('b', 900 * 1024), undefined, 'counted within the batch')
  const refused = g.admit('c', 200 * 1024)
  t.match(refused, { code: 'NoSpace', key: 'c' })
  t.match(refused?.message, /^storage is full: store \/data\/store is 10485760 bytes \(10485760 in use\), 3145728 bytes free on its file system \(quota none, reserve 1048576\)$/)
  t.ok(g.isFull())
  t.match(g.admit('d', 1), { code: 'NoSpace' }, 'while full even a small write is refused')
  await tick()
  t.equal(seen.length, 1, 'one transition')
  t.equal(seen[0].full, true)
  t.same(fake.logs.map(l => l.level), ['warn'], 'one log line on entering')
})

t.test('stays full until the headroom is back to resumeBytes (hysteresis), then leaves once', async t => {
  const { g, fake } = guard({ storeBytes: 10 * MiB, inUseBytes: 10 * MiB, freeBytes: MiB })
  const seen: boolean[] = []
  g.subscribe(s => seen.push(s.full))
  t.ok(g.isFull(), 'no headroom at the first measurement: full')
  fake.usage = { storeBytes: 10 * MiB, inUseBytes: 10 * MiB - 100 * 1024, freeBytes: MiB } // 100 KiB of free pages
  g.measure()
  t.ok(g.isFull(), 'not enough to resume')
  fake.usage = { storeBytes: 10 * MiB, inUseBytes: 9 * MiB, freeBytes: MiB } // deletes and compaction freed 1 MiB of pages
  g.measure()
  t.notOk(g.isFull())
  t.equal(g.admit('x', 512 * 1024), undefined, 'free pages inside the store count')
  g.measure()
  g.measure()
  await tick()
  t.same(seen, [true, false], 'each transition once')
  t.same(fake.logs.map(l => l.msg), [
    'storage is full: refusing writes other than deletes until space is freed',
    'storage space recovered: accepting writes again'
  ])
})

t.test('a write larger than what is left is refused alone when the rest is still ample', async t => {
  const { g } = guard({ storeBytes: MiB, inUseBytes: MiB, freeBytes: 3 * MiB })
  const refused = g.admit('big', 5 * MiB)
  t.match(refused, { code: 'NoSpace' })
  t.match(refused?.message, /^not enough storage for a write of about 5242880 bytes: /)
  t.notOk(g.isFull(), 'not full: smaller writes go on')
  t.equal(g.admit('small', 1000), undefined)
})

t.test('the quota limits the bytes in use, whatever the disk has', async t => {
  const { g, fake } = guard({ storeBytes: 40 * MiB, inUseBytes: 31 * MiB, freeBytes: 100 * 1024 * MiB }, { quotaBytes: 32 * MiB })
  t.equal(g.admit('a', 900 * 1024), undefined)
  t.match(g.admit('b', 200 * 1024), { code: 'NoSpace' })
  t.ok(g.isFull())
  t.match(g.status().message, /^storage is full: store \/data\/store is 41943040 bytes \(32505856 in use\), 107374182400 bytes free on its file system \(quota 33554432, reserve 1048576\)$/)
  fake.usage = { ...fake.usage, inUseBytes: 30 * MiB }
  fake.now += 1000
  t.equal(g.status().full, false, 'status() measures again when a second old')
})

t.test('status() reuses a measurement younger than a second', async t => {
  let calls = 0
  const g = new SpaceGuard({
    path: '/s', quotaBytes: 0, reserveBytes: 0, resumeBytes: 1, now: () => 0,
    measure: () => { calls++; return { storeBytes: 0, inUseBytes: 0, freeBytes: MiB } },
    logger: { info () {}, warn () {}, error () {} }
  })
  g.status()
  g.status()
  t.equal(calls, 1)
})

t.test('a commit that failed for want of space enters the full state; another failure does not', async t => {
  const { g, fake } = guard({ storeBytes: MiB, inUseBytes: MiB, freeBytes: 10 * MiB })
  t.equal(g.commitFailed(false, false), undefined, 'not a space error')
  t.equal(g.commitFailed(false, true), undefined, 'EIO with plenty free is a real I/O error')
  t.notOk(g.isFull())
  t.match(g.commitFailed(true, false), { code: 'NoSpace' }, 'ENOSPC / MDB_MAP_FULL')
  t.ok(g.isFull())
  fake.usage = { ...fake.usage, freeBytes: 10 * MiB + 100 * 1024 }
  g.measure()
  t.ok(g.isFull(), 'the headroom the failure disproved does not count: it needs resumeBytes more than at the failure')
  fake.usage = { ...fake.usage, freeBytes: 10 * MiB + 300 * 1024 }
  g.measure()
  t.notOk(g.isFull())

  const io = guard({ storeBytes: MiB, inUseBytes: MiB, freeBytes: 0 }, { reserveBytes: 0 })
  io.g.measure()
  t.match(io.g.commitFailed(false, true), { code: 'NoSpace' }, 'EIO (LMDB\'s short page write) with the disk full')
})

t.test('a failing measurement keeps the last one and is logged once', async t => {
  let fail = false
  const logs: string[] = []
  const g = new SpaceGuard({
    path: '/s', quotaBytes: 0, reserveBytes: 0, resumeBytes: 1, now: () => 0,
    measure: () => { if (fail) throw new Error('statfs failed'); return { storeBytes: 0, inUseBytes: 0, freeBytes: MiB } },
    logger: { info () {}, warn: (_o, m) => { logs.push(m ?? '') }, error () {} }
  })
  fail = true
  g.measure()
  g.measure()
  t.equal(g.status().freeBytes, MiB)
  t.same(logs, ['measuring the storage space failed'])
})

t.test('the write estimate counts the live and the log copy, in whole pages once a value overflows', async t => {
  t.equal(estimateWriteBytes(20, 100), 2 * 184 + 52)
  t.equal(estimateWriteBytes(30, 16_000), 2 * 4 * 4096 + 62)
})

t.test('a batch measures again when the last look is 250 ms old or half its headroom is spent', async t => {
  let calls = 0
  let now = 0
  const g = new SpaceGuard({
    path: '/s', quotaBytes: 0, reserveBytes: MiB, resumeBytes: 1, now: () => now,
    measure: () => { calls++; return { storeBytes: 0, inUseBytes: 0, freeBytes: 5 * MiB } },
    logger: { info () {}, warn () {}, error () {} }
  })
  calls = 0
  g.beginBatch()
  t.equal(calls, 0, 'recent and unspent: no measurement')
  t.equal(g.admit('a', MiB), undefined)
  g.endBatch()
  g.beginBatch()
  t.equal(calls, 0, '1 of 4 MiB spent')
  t.equal(g.admit('b', MiB), undefined)
  g.endBatch()
  g.beginBatch()
  t.equal(calls, 1, 'half spent: measured')
  t.equal(g.admit('c', 3 * MiB), undefined, 'the fresh measurement counts from zero')
  // a look from elsewhere while the batch commits keeps what the batch admitted
  g.measure()
  t.match(g.admit('d', 1.5 * MiB), { code: 'NoSpace' }, 'the in-flight 3 MiB still count')
  g.endBatch()
  now += 250
  g.beginBatch()
  t.equal(calls, 3, 'stale: measured')
})
