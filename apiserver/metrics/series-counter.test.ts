// The series counter exposes exactly what prom-client's Counter exposes for the same increments.
import t from 'tap'
import { ComponentMetrics } from './component-metrics.js'
import { SeriesCounter } from './series-counter.js'

t.test('the same increments give the same exposition as prom-client\'s counter', async t => {
  const m = new ComponentMetrics({ version: '1.29', processMetrics: false })
  const ours = new SeriesCounter<'verb' | 'code'>(['verb', 'code'])
  m.collected({ name: 'ours_total', type: 'counter', stabilityLevel: 'STABLE', help: 'Requests.', read: () => ours.samples() })
  const theirs = m.counter({ name: 'theirs_total', stabilityLevel: 'STABLE', labelNames: ['verb', 'code'], help: 'Requests.' })
  const before = await m.text()
  t.match(before, '# HELP ours_total [STABLE] Requests.\n# TYPE ours_total counter\n', 'no series yet: help and type only')
  t.match(before, '# HELP theirs_total [STABLE] Requests.\n# TYPE theirs_total counter\n')
  const incs: Array<Record<'verb' | 'code', string>> = [
    { verb: 'POST', code: '201' }, { code: '200', verb: 'GET' }, { verb: 'POST', code: '201' }, { verb: 'POST', code: '409' }, { verb: 'a"b\\c\nd', code: '200' }
  ]
  for (const labels of incs) { ours.seriesFor(labels).inc(); theirs.inc(labels) }
  t.equal(ours.seriesFor({ verb: 'GET', code: '200' }), ours.seriesFor({ code: '200', verb: 'GET' }), 'one series per label set')
  const text = await m.text()
  const lines = (prefix: string): string[] => text.split('\n').filter(l => l.startsWith(prefix)).map(l => l.slice(prefix.length))
  t.same(lines('ours_total'), lines('theirs_total'))
  t.same(lines('ours_total'), ['{verb="POST",code="201"} 2', '{code="200",verb="GET"} 1', '{verb="POST",code="409"} 1', '{verb="a\\"b\\\\c\\nd",code="200"} 1'])
})
