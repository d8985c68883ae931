import t from 'tap'
import { ComponentMetrics, isHidden, validateShowHidden } from './component-metrics.js'

t.test('help text carries the stability level and the deprecation note', async t => {
  const m = new ComponentMetrics({ version: '1.29', processMetrics: false })
  m.counter({ name: 'stable_total', help: 'A stable counter.', stabilityLevel: 'STABLE' }).inc()
  m.gauge({ name: 'alpha_gauge', help: 'An alpha gauge.' }).set(3)
  m.histogram({ name: 'old_seconds', help: 'Deprecated this release.', deprecatedVersion: '1.29', buckets: [1] }).observe(0.5)
  const text = await m.text()
  t.match(text, '# HELP stable_total [STABLE] A stable counter.\n# TYPE stable_total counter\nstable_total 1\n')
  t.match(text, '# HELP alpha_gauge [ALPHA] An alpha gauge.\n')
  t.match(text, '# HELP old_seconds [ALPHA] (Deprecated from 1.29) Deprecated this release.\n')
  t.match(text, 'old_seconds_bucket{le="1"} 1\n')
})

t.test('a metric deprecated in the previous release is hidden unless --show-hidden-metrics-for-version names it', async t => {
  const hidden = new ComponentMetrics({ version: '1.29', processMetrics: false })
  const g = hidden.gauge({ name: 'older_bytes', help: 'Deprecated last release.', deprecatedVersion: '1.28' })
  g.set(5) // still usable by its owner
  t.notMatch(await hidden.text(), 'older_bytes')
  const shown = new ComponentMetrics({ version: '1.29', processMetrics: false, showHiddenMetricsForVersion: '1.28' })
  shown.gauge({ name: 'older_bytes', help: 'Deprecated last release.', deprecatedVersion: '1.28' }).set(5)
  t.match(await shown.text(), '# HELP older_bytes [ALPHA] (Deprecated from 1.28) Deprecated last release.\n# TYPE older_bytes gauge\nolder_bytes 5\n')
})

t.test('only the previous minor release is accepted by --show-hidden-metrics-for-version', async t => {
  t.equal(validateShowHidden(undefined, '1.29'), undefined)
  t.equal(validateShowHidden('1.28', '1.29'), undefined)
  t.equal(validateShowHidden('1.27', '1.29'), "--show-hidden-metrics-for-version must be omitted or have the value '1.28'. Only the previous minor version is allowed")
  t.match(validateShowHidden('x', '1.29'), /Only the previous minor version/)
  t.throws(() => new ComponentMetrics({ version: '1.29', showHiddenMetricsForVersion: '1.29' }), /have the value '1\.28'/)
  t.equal(isHidden('1.28', '1.29'), true)
  t.equal(isHidden('1.29', '1.29'), false)
  t.equal(isHidden('1.30', '2.0'), true)
})

t.test('each component has its own registry, with process and Node.js metrics', async t => {
  const a = new ComponentMetrics({ version: '1.29' })
  const b = new ComponentMetrics({ version: '1.29' })
  a.counter({ name: 'only_in_a_total', help: 'x' }).inc()
  t.match(await a.text(), /^only_in_a_total 1$/m)
  t.notMatch(await b.text(), 'only_in_a_total')
  for (const name of ['process_cpu_seconds_total', 'process_resident_memory_bytes', 'nodejs_heap_size_used_bytes', 'nodejs_eventloop_lag_seconds']) {
    t.match(await b.text(), new RegExp(`^${name} `, 'm'), name)
  }
})

t.test('the shared process metrics give the text a registry of its own default collectors gave', async t => {
  const { Registry, collectDefaultMetrics } = await import('prom-client')
  const own = new Registry()
  collectDefaultMetrics({ register: own })
  const m = new ComponentMetrics({ version: '1.29' })
  m.counter({ name: 'mine_total', help: 'x' }).inc()
  const names = (text: string): string[] => [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map(x => `${x[1]} ${x[2]}`)
  const text = await m.text()
  t.same(names(text), [...names(await own.metrics()), 'mine_total counter'], 'same metrics, process metrics first')
  t.ok(text.endsWith('mine_total 1\n'))
  t.notOk(/\n\n\n/.test(text), 'one blank line between metrics')
  // One set for the process: a second component does not start a second set of collectors.
  const { processMetrics } = await import('./process-metrics.js')
  t.equal(processMetrics(), processMetrics())
  t.equal(names(await new ComponentMetrics({ version: '1.29' }).text()).length, names(await own.metrics()).length)
})
