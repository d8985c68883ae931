import t from 'tap'
import { rfc3339, sameContent } from './object-meta.js'

t.test('sameContent looks past metadata, apiVersion and kind, and past status when told to', async t => {
  const a = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'a', labels: { x: '1' } }, spec: { replicas: 1, paused: false }, status: { replicas: 0 } }
  const b = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'a' }, spec: { paused: false, replicas: 1 }, status: { replicas: 3 } }
  t.ok(sameContent(a, b, true), 'member order and metadata do not count')
  t.notOk(sameContent(a, b, false), 'status counts unless excluded')
  t.notOk(sameContent(a, { ...b, spec: { replicas: 2, paused: false } }, true), 'a spec change counts')
  t.notOk(sameContent(a, { ...b, extra: {} }, true), 'a new top-level member counts')
})

t.test('rfc3339 answers as the uncached formula across seconds, repeats and jumps back', async t => {
  const formula = (ms: number): string => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z')
  const times = [0, 999, 1000, 1000, 1999.5, 1_700_000_000_123, 1_700_000_000_999, 1_700_000_001_000, 1_700_000_000_500, -1, -1001, 86_400_000 * 365 * 30 + 7]
  for (let i = 0; i < 2000; i++) times.push(1_700_000_000_000 + Math.floor(Math.random() * 5000))
  t.same(times.map(rfc3339), times.map(formula))
  t.throws(() => rfc3339(NaN), RangeError)
  t.throws(() => rfc3339(NaN), RangeError)
})
