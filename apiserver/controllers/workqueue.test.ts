import t from 'tap'
import { FakeClock } from './clock.js'
import { WorkQueue } from './workqueue.js'

t.test('a key added many times is processed once, and again if added while in progress', async t => {
  const q = new WorkQueue({ clock: new FakeClock() })
  q.add('a'); q.add('a'); q.add('b')
  t.equal(q.length, 2)
  const first = await q.get()
  t.equal(first, 'a')
  q.add('a')
  t.equal(q.length, 1, 'an active key is not queued twice')
  q.done('a')
  t.equal(q.length, 2, 'the dirty key is queued again when done')
  t.equal(await q.get(), 'b')
})

t.test('failures back off exponentially per key until forgotten', async t => {
  const clock = new FakeClock()
  const q = new WorkQueue({ clock, baseDelayMs: 10 })
  q.addRateLimited('k')
  q.addRateLimited('k')
  t.equal(q.retries('k'), 2)
  clock.advance(9)
  t.equal(q.length, 0, 'not before the first delay')
  clock.advance(1)
  t.equal(q.length, 1)
  q.forget('k')
  t.equal(q.retries('k'), 0)
})

t.test('addAfter keeps the earliest pending time; shutDown wakes waiting workers', async t => {
  const clock = new FakeClock()
  const q = new WorkQueue({ clock })
  q.addAfter('x', 1000)
  q.addAfter('x', 100)
  clock.advance(100)
  t.equal(q.length, 1)
  await q.get()
  const waiting = q.get()
  q.shutDown()
  t.equal(await waiting, undefined)
})
