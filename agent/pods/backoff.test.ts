import t from 'tap'
import { createBackoff } from './backoff.js'

t.test('the delay starts at the initial value, doubles to the maximum, and starts over after a quiet spell', async t => {
  let now = 1000
  const b = createBackoff({ initialMs: 10_000, maxMs: 40_000, now: () => now })
  t.equal(b.delay('c'), 0, 'free until it fails')
  t.equal(b.failed('c'), 11_000)
  t.equal(b.delay('c'), 10_000)
  b.failed('c'); b.failed('c'); b.failed('c')
  t.equal(b.delay('c'), 40_000, 'capped')
  t.equal(b.until('c'), 41_000)
  now += 80_001
  b.failed('c')
  t.equal(b.delay('c'), 10_000, 'quiet for twice the maximum: back to the initial delay')
  b.forget('c')
  t.equal(b.until('c'), 0)
})
