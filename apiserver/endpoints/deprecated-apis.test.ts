import t, { type Test } from 'tap'
import { request } from 'undici'
import { Registry as PromRegistry } from 'prom-client'
import { createApiServer } from '../server.js'
import { openFixture, silentLogger } from '../registry/testing.js'
import { DeprecatedApisGauge } from './deprecated-apis-metric.js'

async function start (t: Test) {
  const f = await openFixture()
  const metrics = new PromRegistry()
  const server = createApiServer({ registry: f.registry, logger: silentLogger, deprecatedApis: new DeprecatedApisGauge(metrics) })
  const { port } = await server.listen({ port: 0 })
  t.teardown(async () => { await server.close(); await f.close() })
  const call = async (method: 'GET' | 'POST', path: string, body?: unknown) => {
    const r = await request(`http://127.0.0.1:${port}${path}`, {
      method, headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body)
    })
    const text = await r.body.text()
    return { status: r.statusCode, warning: r.headers.warning, json: JSON.parse(text) }
  }
  return { call, metrics }
}

t.test('a deprecated built-in version answers Kubernetes\' Warning header and sets apiserver_requested_deprecated_apis', async t => {
  const { call, metrics } = await start(t)
  const list = await call('GET', '/apis/flowcontrol.apiserver.k8s.io/v1beta3/flowschemas')
  t.equal(list.status, 200)
  t.equal(list.warning, '299 - "flowcontrol.apiserver.k8s.io/v1beta3 FlowSchema is deprecated in v1.29+, unavailable in v1.32+; use flowcontrol.apiserver.k8s.io/v1 FlowSchema"')
  const orch = await call('GET', '/apis/flowcontrol.apiserver.orch.io/v1beta3/prioritylevelconfigurations')
  t.match(orch.warning, /^299 - "flowcontrol\.apiserver\.orch\.io\/v1beta3 PriorityLevelConfiguration is deprecated in v1\.29\+/)
  t.equal((await call('GET', '/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas')).warning, undefined, 'v1 is not deprecated')
  t.equal((await call('GET', '/apis/networking.k8s.io/v1/ingresses')).warning, undefined)
  const text = await metrics.metrics()
  t.match(text, /apiserver_requested_deprecated_apis\{group="flowcontrol.apiserver.k8s.io",version="v1beta3",resource="flowschemas",subresource="",removed_release="1.32"\} 1/)
  t.match(text, /apiserver_requested_deprecated_apis\{group="flowcontrol.apiserver.orch.io",version="v1beta3",resource="prioritylevelconfigurations",subresource="",removed_release="1.32"\} 1/)
  t.notMatch(text, /version="v1",/)
})

t.test('removed versions of spec §9.4 answer 404 and are not discovered; their replacements are', async t => {
  const { call } = await start(t)
  for (const path of ['/apis/batch/v1beta1/cronjobs', '/apis/autoscaling/v2beta2/horizontalpodautoscalers', '/apis/policy/v1beta1/poddisruptionbudgets',
    '/apis/flowcontrol.apiserver.k8s.io/v1beta2/flowschemas', '/apis/networking.k8s.io/v1beta1/ingresses', '/apis/extensions/v1beta1/ingresses',
    '/apis/events.k8s.io/v1beta1/events', '/apis/storage.k8s.io/v1beta1/csistoragecapacities', '/apis/rbac.authorization.k8s.io/v1beta1/roles']) {
    t.equal((await call('GET', path)).status, 404, path)
  }
  const groups = (await call('GET', '/apis')).json.groups as Array<{ name: string, versions: Array<{ version: string }> }>
  const versions = (name: string) => groups.find(g => g.name === name)?.versions.map(v => v.version)
  t.same(versions('autoscaling'), ['v2', 'v1'])
  t.same(versions('flowcontrol.apiserver.k8s.io'), ['v1', 'v1beta3'])
  t.same(versions('batch'), ['v1'])
  for (const g of ['networking.k8s.io', 'networking.orch.io', 'storage.k8s.io', 'events.k8s.io', 'apiregistration.k8s.io', 'node.k8s.io',
    'scheduling.k8s.io', 'coordination.k8s.io', 'certificates.k8s.io', 'rbac.authorization.k8s.io', 'admissionregistration.k8s.io', 'apiextensions.k8s.io']) {
    t.ok(versions(g)?.includes('v1'), `${g}/v1 is discovered`)
  }
  t.equal(versions('resource.k8s.io'), undefined, 'alpha groups are off by default')
})

t.test('kinds of the new groups are stored and validated from their schemas', async t => {
  const { call } = await start(t)
  const sc = await call('POST', '/apis/storage.k8s.io/v1/storageclasses', { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'fast' }, provisioner: 'x.io/csi' })
  t.equal(sc.status, 201)
  t.match(sc.json, { reclaimPolicy: 'Delete', volumeBindingMode: 'Immediate' })
  const bad = await call('POST', '/apis/storage.k8s.io/v1/storageclasses', { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'slow' } })
  t.equal(bad.status, 422)
  t.match(bad.json.details.causes, [{ reason: 'FieldValueRequired', field: 'provisioner' }])
  const ing = await call('POST', '/apis/networking.k8s.io/v1/namespaces/default/ingresses', {
    apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: 'web' },
    spec: { rules: [{ host: 'a.example', http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }] } }] }
  })
  t.equal(ing.status, 201)
  t.equal((await call('GET', '/apis/networking.orch.io/v1/namespaces/default/ingresses/web')).json.apiVersion, 'networking.orch.io/v1', 'one object under both names')
  const apisvc = await call('POST', '/apis/apiregistration.k8s.io/v1/apiservices', {
    apiVersion: 'apiregistration.k8s.io/v1', kind: 'APIService', metadata: { name: 'v1.example.com' }, spec: { group: 'example.com', version: 'v1', groupPriorityMinimum: 100, versionPriority: 10 }
  })
  t.equal(apisvc.status, 201)
})

t.test('a CRD version marked deprecated answers its deprecationWarning (or Kubernetes\' default wording)', async t => {
  const { call, metrics } = await start(t)
  const schema = { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } } }
  const crd = await call('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
    apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'widgets.example.com' },
    spec: {
      group: 'example.com', scope: 'Namespaced', names: { plural: 'widgets', kind: 'Widget' },
      versions: [{ name: 'v1', served: true, storage: true, schema },
        { name: 'v1beta1', served: true, storage: false, deprecated: true, schema },
        { name: 'v1alpha1', served: true, storage: false, deprecated: true, deprecationWarning: 'use example.com/v1 widgets', schema }]
    }
  })
  t.equal(crd.status, 201)
  const deadline = Date.now() + 10_000
  while ((await call('GET', '/apis/example.com/v1/namespaces/default/widgets')).status !== 200) {
    if (Date.now() > deadline) throw new Error('CRD not served')
    await new Promise(resolve => setTimeout(resolve, 50))
  }
  t.equal((await call('GET', '/apis/example.com/v1beta1/namespaces/default/widgets')).warning, '299 - "example.com/v1beta1 Widget is deprecated"')
  t.equal((await call('GET', '/apis/example.com/v1alpha1/namespaces/default/widgets')).warning, '299 - "use example.com/v1 widgets"')
  t.equal((await call('GET', '/apis/example.com/v1/namespaces/default/widgets')).warning, undefined)
  t.match(await metrics.metrics(), /apiserver_requested_deprecated_apis\{group="example.com",version="v1beta1",resource="widgets",subresource="",removed_release=""\} 1/)
})
