import t from 'tap'
import { createHistogram, renderPrometheus } from './metrics.js'

t.test('renders gauges with escaped labels and histograms with cumulative buckets ending at +Inf', async t => {
  const h = createHistogram([0.1, 1])
  h.observe(0.05)
  h.observe(0.5)
  h.observe(3)
  const text = renderPrometheus([
    { name: 'orchlet_running_containers', help: 'Number of containers currently running', type: 'gauge', samples: [{ labels: { container_state: 'running' }, value: 2 }, { labels: { container_state: 'a"b\\c' }, value: 0 }] },
    { name: 'orchlet_housekeeping_duration_seconds', help: 'Duration', type: 'histogram', histogram: h.snapshot() }
  ])
  t.equal(text, [
    '# HELP orchlet_running_containers Number of containers currently running',
    '# TYPE orchlet_running_containers gauge',
    'orchlet_running_containers{container_state="running"} 2',
    'orchlet_running_containers{container_state="a\\"b\\\\c"} 0',
    '# HELP orchlet_housekeeping_duration_seconds Duration',
    '# TYPE orchlet_housekeeping_duration_seconds histogram',
    'orchlet_housekeeping_duration_seconds_bucket{le="0.1"} 1',
    'orchlet_housekeeping_duration_seconds_bucket{le="1"} 2',
    'orchlet_housekeeping_duration_seconds_bucket{le="+Inf"} 3',
    'orchlet_housekeeping_duration_seconds_sum 3.55',
    'orchlet_housekeeping_duration_seconds_count 3',
    ''
  ].join('\n'))
})
