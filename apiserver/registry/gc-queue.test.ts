// The garbage collector's work queue: one run per key at a time, re-runs of keys added while running, back-off.
import t from 'tap'
import { WorkQueue, type WorkOutcome } from './gc-queue.js'
import { silentLogger } from './testing.js'

t.test('a key added many times runs once; added while running, it runs again afterwards', async t => {
  const runs: string[] = []
  let release: () => void = () => {}
  const gate = new Promise<void>(resolve => { release = resolve })
  const q = new WorkQueue({
    logger: silentLogger, retryMs: 5,
    work: async key => { runs.push(key); if (runs.length === 1) await gate; return 'done' }
  })
  q.add('a'); q.add('a'); q.add('a')
  await new Promise(resolve => setImmediate(resolve))
  q.add('a')
  release()
  await q.idle()
  t.same(runs, ['a', 'a'])
  q.stop()
})

t.test('a failing key is retried with growing delays until it succeeds', async t => {
  const times: number[] = []
  const q = new WorkQueue({
    logger: silentLogger, retryMs: 10,
    work: async (): Promise<WorkOutcome> => { times.push(Date.now()); if (times.length < 4) throw new Error('conflict'); return 'done' }
  })
  q.add('k')
  await q.idle()
  t.equal(times.length, 4)
  const gaps = times.slice(1).map((x, i) => x - times[i])
  t.ok(gaps[2] >= 35, `third retry waited ${gaps[2]} ms (10, 20, 40)`)
  q.stop()
})

t.test('no more than `concurrency` keys run at once; a waiting key does not count as pending', async t => {
  let active = 0
  let peak = 0
  const q = new WorkQueue({
    logger: silentLogger, retryMs: 5, concurrency: 2, waitMs: 60_000,
    work: async (key): Promise<WorkOutcome> => {
      active++; peak = Math.max(peak, active)
      await new Promise(resolve => setTimeout(resolve, 5))
      active--
      return key === 'w' ? 'wait' : 'done'
    }
  })
  for (const k of ['a', 'b', 'c', 'd', 'w']) q.add(k)
  await q.idle()
  t.equal(peak, 2)
  t.equal(q.size, 0)
  q.stop()
})
