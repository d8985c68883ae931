// The registry: served built-ins, lookup, listeners, stop.
import t from 'tap'
import { ctx, jsonEncoder, openFixture, RecordingSink } from './testing.js'

t.test('serves every built-in kind by group/version/plural and ends watches on stop', async t => {
  const fx = await openFixture()
  t.teardown(() => fx.close())
  const defs = fx.registry.definitions()
  for (const [g, v, p] of [['', 'v1', 'pods'], ['', 'v1', 'namespaces'], ['apps', 'v1', 'deployments'], ['batch', 'v1', 'jobs'],
    ['coordination.orch.io', 'v1', 'leases'], ['apiextensions.orch.io', 'v1', 'customresourcedefinitions']]) {
    t.ok(fx.registry.handler(g, v, p), `${p}.${g}`)
    t.ok(defs.some(d => d.group === g && d.plural === p))
  }
  t.equal(fx.registry.handler('', 'v1', 'nothing'), undefined)
  const sorted = [...defs].sort((a, b) => a.group.localeCompare(b.group) || a.version.localeCompare(b.version) || a.plural.localeCompare(b.plural))
  t.same(defs.map(d => d.plural), sorted.map(d => d.plural), 'stable order')
  let calls = 0
  const off = fx.registry.onDefinitionsChanged(() => { calls++ })
  off()
  const sink = new RecordingSink()
  await fx.registry.handler('', 'v1', 'pods')!.watch(ctx(), '', { resourceVersion: String(fx.store.currentRevision()) }, jsonEncoder, sink)
  await fx.registry.stop()
  t.ok(sink.ended, 'watch ended by stop')
  t.equal(calls, 0)
})
