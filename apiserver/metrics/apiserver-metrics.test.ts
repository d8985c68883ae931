// The API server's metric set: the series it keeps itself (storage and request latency, request counts) expose what prom-client's did.
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

t.test('apiserver_request_total and _duration_seconds expose what prom-client metrics of the same requests expose', async t => {
  const ours = ApiServerMetrics.create({ version: '1.29', processMetrics: false })
  const base = new ComponentMetrics({ version: '1.29', processMetrics: false })
  const req = ['verb', 'dry_run', 'group', 'version', 'resource', 'subresource', 'scope', 'component'] as const
  // The slow path the series replace: prom-client's counter and histogram, registered in the same order.
  const counter = base.counter({
    name: 'apiserver_request_total', stabilityLevel: 'STABLE', labelNames: [...req, 'code'],
    help: 'Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.'
  })
  const histogram = base.histogram({
    name: 'apiserver_request_duration_seconds', stabilityLevel: 'STABLE', labelNames: req, buckets: REQUEST_BUCKETS,
    help: 'Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.'
  })
  const labels = (verb: string, resource: string, scope: string, dryRun = ''): Record<typeof req[number], string> =>
    ({ verb, dry_run: dryRun, group: '', version: resource === '' ? '' : 'v1', resource, subresource: '', scope, component: 'apiserver' })
  const requests: Array<[Record<typeof req[number], string>, number, number]> = [
    [labels('POST', 'configmaps', 'namespace'), 201, 0.0021], [labels('GET', 'configmaps', 'resource'), 200, 0.0004],
    [labels('POST', 'configmaps', 'namespace'), 409, 0.003], [labels('GET', '', ''), 404, 0],
    [labels('POST', 'configmaps', 'namespace', 'All'), 201, 0.7], [labels('POST', 'configmaps', 'namespace'), 201, 61],
    [labels('GET', 'configmaps', 'resource'), 200, 0.025], [labels('POST', 'configmaps', 'namespace'), 201, 0.1 + 0.2]
  ]
  for (const [l, code, seconds] of requests) {
    // each request's labels are a fresh object, as requestLabels makes them
    const series = ours.requestSeries({ ...l })
    series.count(code).inc()
    series.duration.observe(seconds)
    counter.inc({ ...l, code: String(code) })
    histogram.observe(l, seconds)
  }
  t.equal(ours.requestSeries(labels('GET', 'configmaps', 'resource')), ours.requestSeries(labels('GET', 'configmaps', 'resource')), 'one series per label set')
  const section = (text: string): string[] => text.split('\n').filter(l => l.includes('apiserver_request_total') || l.includes('apiserver_request_duration_seconds'))
  const got = section(await ours.text())
  t.same(got, section(await base.text()))
  t.ok(got.includes('apiserver_request_total{verb="POST",dry_run="",group="",version="v1",resource="configmaps",subresource="",scope="namespace",component="apiserver",code="201"} 3'))
  t.ok(got.length > 4 * REQUEST_BUCKETS.length)
})
