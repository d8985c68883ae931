// The series histogram exposes exactly what prom-client's Histogram exposes for the same observations.
import t from 'tap'
import { ComponentMetrics } from './component-metrics.js'
import { SeriesHistogram } from './series-histogram.js'

t.test('the same observations give the same exposition as prom-client\'s histogram, and counts as a counter', async t => {
  const m = new ComponentMetrics({ version: '1.29', processMetrics: false })
  const bounds = [1024, 2048, 4096]
  const ours = new SeriesHistogram<'group' | 'kind'>(['group', 'kind'], bounds)
  m.collected({ name: 'ours_sizes', type: 'histogram', help: 'Sizes.', read: () => ours.samples() })
  m.collected({ name: 'ours_total', type: 'counter', help: 'Events.', read: () => ours.counts() })
  const theirs = m.histogram({ name: 'theirs_sizes', labelNames: ['group', 'kind'], buckets: bounds, help: 'Sizes.' })
  const observations: Array<[Record<'group' | 'kind', string>, number[]]> = [
    [{ group: '', kind: 'Pod' }, [10, 1024, 1025, 5000, 2048, 99999]],
    [{ group: 'apps', kind: 'Deployment' }, [3000]]
  ]
  for (const [labels, values] of observations) {
    const series = ours.seriesFor(labels)
    for (const v of values) { series.observe(v); theirs.observe(labels, v) }
  }
  t.equal(ours.seriesFor({ group: '', kind: 'Pod' }), ours.seriesFor({ kind: 'Pod', group: '' }), 'one series per label set')
  const text = await m.text()
  const lines = (prefix: string): string[] => text.split('\n').filter(l => l.startsWith(prefix)).map(l => l.slice(prefix.length))
  t.same(lines('ours_sizes'), lines('theirs_sizes'))
  t.equal(lines('ours_sizes').length, 2 * (bounds.length + 3))
  t.match(text, 'ours_sizes_bucket{le="2048",group="",kind="Pod"} 4\n')
  t.match(text, '# TYPE ours_total counter\nours_total{group="",kind="Pod"} 6\nours_total{group="apps",kind="Deployment"} 1\n')
})
