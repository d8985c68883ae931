// The API server's metric set: etcd_request_duration_seconds, kept as a series histogram, exposes what prom-client's did.
import t from 'tap'
import { ApiServerMetrics, REQUEST_BUCKETS } from './apiserver-metrics.js'
import { ComponentMetrics } from './component-metrics.js'

t.test('etcd_request_duration_seconds exposes what a prom-client histogram of the same observations exposes', async t => {
  const ours = ApiServerMetrics.create({ version: '1.29', processMetrics: false })
  const base = new ComponentMetrics({ version: '1.29', processMetrics: false })
  const theirs = base.histogram({
    name: 'etcd_request_duration_seconds', labelNames: ['operation', 'type'], buckets: REQUEST_BUCKETS,
    help: 'Etcd request latency in seconds for each operation and object type.'
  })
  const calls: Array<[string, string, number]> = [['create', 'configmaps', 0.0012], ['get', 'namespaces', 0.005], ['list', 'resourcequotas', 0.7],
    ['create', 'configmaps', 61], ['create', 'configmaps', 0.025], ['get', 'namespaces', 0]]
  for (const [operation, type, seconds] of calls) {
    ours.storageRequests.seriesFor({ operation, type }).observe(seconds)
    theirs.observe({ operation, type }, seconds)
  }
  const section = (text: string): string[] => text.split('\n').filter(l => l.includes('etcd_request_duration_seconds'))
  const got = section(await ours.text())
  t.same(got, section(await base.text()))
  t.ok(got.length > 3 * REQUEST_BUCKETS.length)
})
