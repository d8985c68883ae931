import t from 'tap'
import { body, ctx, openFixture } from '../testing.js'
import { parseRuntimeConfig } from '../../schema/builtin/runtime-config.js'
import { builtinDefinitions, builtinGroupVersions } from '../../schema/builtin/catalog.js'

const obj = async (r: Promise<unknown>): Promise<any> => {
  const got = await r
  return Buffer.isBuffer(got) ? JSON.parse(got.toString('utf8')) : JSON.parse((got as { bytes: Buffer }).bytes.toString('utf8'))
}

t.test('an HPA written as autoscaling/v1 reads back as v2 and v1, and a v1 update keeps the v2-only metrics', async t => {
  const f = await openFixture()
  t.teardown(() => f.close())
  const v1 = f.registry.store('autoscaling', 'v1', 'horizontalpodautoscalers')!
  const v2 = f.registry.store('autoscaling', 'v2', 'horizontalpodautoscalers')!
  await v2.create(ctx(), 'default', body({
    apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: { name: 'web', namespace: 'default' },
    spec: {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, maxReplicas: 5,
      metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 60 } } },
        { type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '100Mi' } } }]
    }
  }))
  const asV1 = await obj(v1.get(ctx(), 'default', 'web', {}))
  t.equal(asV1.apiVersion, 'autoscaling/v1')
  t.equal(asV1.spec.targetCPUUtilizationPercentage, 60)
  t.equal(asV1.spec.minReplicas, 1, 'defaulted')
  t.notOk('metrics' in asV1.spec)
  t.match(JSON.parse(asV1.metadata.annotations['autoscaling.alpha.kubernetes.io/metrics']), [{ resource: { name: 'memory' } }])
  asV1.spec.maxReplicas = 7
  asV1.spec.targetCPUUtilizationPercentage = 70
  await v1.update(ctx(), 'default', 'web', body(asV1))
  const back = await obj(v2.get(ctx(), 'default', 'web', {}))
  t.equal(back.apiVersion, 'autoscaling/v2')
  t.equal(back.spec.maxReplicas, 7)
  t.same(back.spec.metrics.map((m: any) => m.resource.name), ['cpu', 'memory'])
  t.equal(back.spec.metrics[0].resource.target.averageUtilization, 70)
  t.notOk(back.metadata.annotations, 'the carrying annotations are not stored')
  const listed = await v1.list(ctx(), 'default', {})
  t.equal(JSON.parse(listed.items[0].toString()).spec.targetCPUUtilizationPercentage, 70)
})

t.test('events.k8s.io/v1 Events are core v1 Events under renamed fields', async t => {
  const f = await openFixture()
  t.teardown(() => f.close())
  const ev = f.registry.store('events.k8s.io', 'v1', 'events')!
  const core = f.registry.store('', 'v1', 'events')!
  await ev.create(ctx(), 'default', body({
    apiVersion: 'events.k8s.io/v1', kind: 'Event', metadata: { name: 'e1', namespace: 'default' },
    eventTime: '2026-01-01T00:00:00.000000Z', action: 'Pulling', reason: 'Pulling', note: 'pulling image',
    reportingController: 'orch.io/orchlet', reportingInstance: 'node-1', type: 'Normal',
    regarding: { kind: 'Pod', name: 'p', namespace: 'default' }
  }))
  const c = await obj(core.get(ctx(), 'default', 'e1', {}))
  t.match(c, { apiVersion: 'v1', message: 'pulling image', reportingComponent: 'orch.io/orchlet', involvedObject: { name: 'p' } })
  t.notOk('note' in c)
  await core.create(ctx(), 'default', body({
    apiVersion: 'v1', kind: 'Event', metadata: { name: 'e2', namespace: 'default' }, involvedObject: { kind: 'Pod', name: 'q' },
    message: 'old style', count: 3, source: { component: 'kubelet' }, reason: 'Started', type: 'Normal'
  }))
  const e = await obj(ev.get(ctx(), 'default', 'e2', {}))
  t.match(e, { apiVersion: 'events.k8s.io/v1', note: 'old style', deprecatedCount: 3, deprecatedSource: { component: 'kubelet' }, regarding: { name: 'q' } })
  e.note = 'updated through events.k8s.io'
  await ev.update(ctx(), 'default', 'e2', body(e))
  t.equal((await obj(core.get(ctx(), 'default', 'e2', {}))).message, 'updated through events.k8s.io', 'an old event updates through v1')
  const bad = await ev.create(ctx(), 'default', body({
    apiVersion: 'events.k8s.io/v1', kind: 'Event', metadata: { name: 'e3', namespace: 'default' }, type: 'Info', deprecatedCount: 2
  })).catch(err => err)
  t.equal(bad.code, 422)
  t.same(bad.toStatus().details.causes.map((c: any) => c.field), ['eventTime', 'reportingController', 'reportingInstance', 'action', 'reason', 'deprecatedCount', 'type'])
})

t.test('flowcontrol v1beta3 defaults zero shares to 30 unless preserved; v1 keeps an explicit 0', async t => {
  const f = await openFixture()
  t.teardown(() => f.close())
  const beta = f.registry.store('flowcontrol.apiserver.k8s.io', 'v1beta3', 'prioritylevelconfigurations')!
  const v1 = f.registry.store('flowcontrol.apiserver.orch.io', 'v1', 'prioritylevelconfigurations')!
  const plc = (name: string, shares: number | undefined, apiVersion: string) => ({
    apiVersion, kind: 'PriorityLevelConfiguration', metadata: { name },
    spec: { type: 'Limited', limited: { ...(shares === undefined ? {} : { nominalConcurrencyShares: shares }), limitResponse: { type: 'Reject' } } }
  })
  await beta.create(ctx(), '', body(plc('zero-beta', 0, 'flowcontrol.apiserver.k8s.io/v1beta3')))
  t.equal((await obj(v1.get(ctx(), '', 'zero-beta', {}))).spec.limited.nominalConcurrencyShares, 30)
  await v1.create(ctx(), '', body(plc('zero-v1', 0, 'flowcontrol.apiserver.orch.io/v1')))
  await v1.create(ctx(), '', body(plc('unset-v1', undefined, 'flowcontrol.apiserver.orch.io/v1')))
  t.equal((await obj(v1.get(ctx(), '', 'zero-v1', {}))).spec.limited.nominalConcurrencyShares, 0)
  t.equal((await obj(v1.get(ctx(), '', 'unset-v1', {}))).spec.limited.nominalConcurrencyShares, 30)
  const read = await obj(beta.get(ctx(), '', 'zero-v1', {}))
  t.equal(read.spec.limited.nominalConcurrencyShares, 0)
  t.ok('flowcontrol.orch.io/v1beta3-preserve-zero-concurrency-shares' in read.metadata.annotations)
  read.metadata.labels = { touched: 'yes' }
  await beta.update(ctx(), '', 'zero-v1', body(read))
  const after = await obj(v1.get(ctx(), '', 'zero-v1', {}))
  t.equal(after.spec.limited.nominalConcurrencyShares, 0, 'a v1beta3 round trip keeps the explicit 0')
  t.same(after.metadata.annotations, undefined)
  t.equal(beta.definition.deprecated?.warning,
    'flowcontrol.apiserver.k8s.io/v1beta3 PriorityLevelConfiguration is deprecated in v1.29+, unavailable in v1.32+; use flowcontrol.apiserver.k8s.io/v1 PriorityLevelConfiguration')
})

t.test('--runtime-config turns alpha group versions on and resources off, under either spelling', async t => {
  const known = builtinGroupVersions()
  const plurals = (rc: string) => new Set(builtinDefinitions(parseRuntimeConfig(rc, known)).map(d => `${d.group}/${d.version}/${d.plural}`))
  const none = plurals('')
  t.notOk(none.has('resource.orch.io/v1alpha2/resourceclaims'), 'alpha is off by default')
  t.ok(none.has('networking.orch.io/v1/ingresses'))
  t.ok(plurals('resource.k8s.io/v1alpha2=true').has('resource.orch.io/v1alpha2/resourceclaims'))
  t.ok(plurals('api/alpha').has('storage.orch.io/v1alpha1/volumeattributesclasses'))
  const off = plurals('networking.k8s.io/v1/networkpolicies=false,batch/v1=false')
  t.notOk(off.has('networking.orch.io/v1/networkpolicies'))
  t.ok(off.has('networking.orch.io/v1/ingresses'))
  t.notOk(off.has('batch/v1/jobs'))
  t.ok(plurals('api/all=false,v1=true').has('/v1/pods'))
  t.notOk(plurals('api/all=false,v1=true').has('apps/v1/deployments'))
  t.throws(() => parseRuntimeConfig('batch/v1beta1=true', known), /unknown api groups batch\/v1beta1/)
  t.throws(() => parseRuntimeConfig('batch/v1=maybe', known), /invalid value of batch\/v1/)
})
