import t from 'tap'
import { createHistogram } from './metrics.js'

t.test('a histogram snapshot counts each observation in its first bucket, with the sum and count of all', async t => {
  const h = createHistogram([0.1, 1])
  h.observe(0.05)
  h.observe(0.5)
  h.observe(3)
  t.same(h.snapshot(), { buckets: [0.1, 1], counts: [1, 1], sum: 3.55, count: 3 })
})
