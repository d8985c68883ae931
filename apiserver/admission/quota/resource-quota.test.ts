import t from 'tap'
import { body, ctx } from '../../registry/testing.js'
import { admissionFixture, pod } from '../testing.js'

const quota = (name: string, hard: Record<string, string>, extra: Record<string, unknown> = {}): Record<string, unknown> =>
  ({ apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name }, spec: { hard, ...extra } })

t.test('a quota of one pod refuses the second with Kubernetes\' message and records the usage', async t => {
  const fx = await admissionFixture(['ResourceQuota'])
  t.teardown(() => fx.close())
  const r = fx.registry
  await r.handler('', 'v1', 'resourcequotas')!.create(ctx(), 'default', body(quota('q', { pods: '1' })))
  await r.handler('', 'v1', 'pods')!.create(ctx(), 'default', body(pod('a')))
  const err = await r.handler('', 'v1', 'pods')!.create(ctx(), 'default', body(pod('b'))).catch(e => e)
  t.equal(err.code, 403)
  t.equal(err.reason, 'Forbidden')
  t.equal(err.message, 'pods "b" is forbidden: exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1')
  const q = (await r.handler('', 'v1', 'resourcequotas')!.get(ctx(), 'default', 'q', {})) as { object: any }
  t.same(q.object.status.used, { pods: '1' })
})

t.test('concurrent creates never overrun the quota: exactly the limit succeeds and usage is exact', async t => {
  const fx = await admissionFixture(['ResourceQuota'])
  t.teardown(() => fx.close())
  const r = fx.registry
  await r.handler('', 'v1', 'resourcequotas')!.create(ctx(), 'default', body(quota('q', { 'count/configmaps': '3' })))
  const results = await Promise.allSettled(Array.from({ length: 8 }, (_, i) =>
    r.handler('', 'v1', 'configmaps')!.create(ctx(), 'default', body({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm${i}` } }))))
  t.equal(results.filter(x => x.status === 'fulfilled').length, 3)
  for (const x of results) if (x.status === 'rejected') t.match(x.reason.message, /exceeded quota: q, requested: count\/configmaps=1, used: count\/configmaps=3, limited: count\/configmaps=3/)
  const q = (await r.handler('', 'v1', 'resourcequotas')!.get(ctx(), 'default', 'q', {})) as { object: any }
  t.same(q.object.status.used, { 'count/configmaps': '3' })
})

t.test('compute quotas require requests and sum them', async t => {
  const fx = await admissionFixture(['ResourceQuota'])
  t.teardown(() => fx.close())
  const r = fx.registry
  await r.handler('', 'v1', 'resourcequotas')!.create(ctx(), 'default', body(quota('cpu', { 'requests.cpu': '1', 'requests.memory': '1Gi' })))
  const pods = r.handler('', 'v1', 'pods')!
  const missing = await pods.create(ctx(), 'default', body(pod('none'))).catch(e => e)
  t.equal(missing.code, 403)
  t.match(missing.message, 'failed quota: cpu: must specify requests.cpu,requests.memory for: c')
  await pods.create(ctx(), 'default', body(pod('a', { requests: { cpu: '600m', memory: '512Mi' } })))
  const over = await pods.create(ctx(), 'default', body(pod('b', { requests: { cpu: '500m', memory: '256Mi' } }))).catch(e => e)
  t.equal(over.message, 'pods "b" is forbidden: exceeded quota: cpu, requested: requests.cpu=500m, used: requests.cpu=600m, limited: requests.cpu=1')
  await pods.create(ctx(), 'default', body(pod('c', { requests: { cpu: '400m', memory: '256Mi' } })))
  const q = (await r.handler('', 'v1', 'resourcequotas')!.get(ctx(), 'default', 'cpu', {})) as { object: any }
  t.same(q.object.status.used, { 'requests.cpu': '1', 'requests.memory': '768Mi' })
})

t.test('a dry run is checked but not charged; scoped quotas count only their pods; other namespaces are free', async t => {
  const fx = await admissionFixture(['ResourceQuota'])
  t.teardown(() => fx.close())
  const r = fx.registry
  await r.handler('', 'v1', 'resourcequotas')!.create(ctx(), 'default', body(quota('be', { pods: '1' }, { scopes: ['BestEffort'] })))
  const pods = r.handler('', 'v1', 'pods')!
  await pods.create(ctx('Strict', true), 'default', body(pod('dry')))
  await pods.create(ctx(), 'default', body(pod('a')))
  await pods.create(ctx(), 'default', body(pod('burstable', { requests: { cpu: '100m' } })))
  const err = await pods.create(ctx(), 'default', body(pod('b'))).catch(e => e)
  t.equal(err.code, 403)
  await pods.create(ctx(), 'kube-system', body(pod('b')))
  const q = (await r.handler('', 'v1', 'resourcequotas')!.get(ctx(), 'default', 'be', {})) as { object: any }
  t.same(q.object.status.used, { pods: '1' })
})

t.test('count/<resource>.<group>, services.nodeports and requests.storage are charged', async t => {
  const fx = await admissionFixture(['ResourceQuota'])
  t.teardown(() => fx.close())
  const r = fx.registry
  await r.handler('', 'v1', 'resourcequotas')!.create(ctx(), 'default', body(quota('q', {
    'count/deployments.apps': '1', 'services.nodeports': '1', 'requests.storage': '2Gi', secrets: '5'
  })))
  const deploy = (name: string): Record<string, unknown> => ({
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name },
    spec: { selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } } }
  })
  await r.handler('apps', 'v1', 'deployments')!.create(ctx(), 'default', body(deploy('a')))
  const d2 = await r.handler('apps', 'v1', 'deployments')!.create(ctx(), 'default', body(deploy('b'))).catch(e => e)
  t.equal(d2.message, 'deployments.apps "b" is forbidden: exceeded quota: q, requested: count/deployments.apps=1, used: count/deployments.apps=1, limited: count/deployments.apps=1')
  const svc = (name: string): Record<string, unknown> => ({ apiVersion: 'v1', kind: 'Service', metadata: { name }, spec: { type: 'NodePort', ports: [{ port: 80 }] } })
  await r.handler('', 'v1', 'services')!.create(ctx(), 'default', body(svc('s1')))
  const s2 = await r.handler('', 'v1', 'services')!.create(ctx(), 'default', body(svc('s2'))).catch(e => e)
  t.match(s2.message, 'exceeded quota: q, requested: services.nodeports=1, used: services.nodeports=1, limited: services.nodeports=1')
  const pvc = (name: string, storage: string): Record<string, unknown> => ({
    apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage } } }
  })
  await r.handler('', 'v1', 'persistentvolumeclaims')!.create(ctx(), 'default', body(pvc('c1', '1536Mi')))
  const c2 = await r.handler('', 'v1', 'persistentvolumeclaims')!.create(ctx(), 'default', body(pvc('c2', '1Gi'))).catch(e => e)
  t.match(c2.message, 'exceeded quota: q, requested: requests.storage=1Gi, used: requests.storage=1536Mi, limited: requests.storage=2Gi')
  const q = (await r.handler('', 'v1', 'resourcequotas')!.get(ctx(), 'default', 'q', {})) as { object: any }
  t.same(q.object.status.used, { 'count/deployments.apps': '1', 'services.nodeports': '1', 'requests.storage': '1536Mi' })
})

t.test('a quota status changed by another writer is read again and charged from the new usage', async t => {
  const fx = await admissionFixture(['ResourceQuota'])
  t.teardown(() => fx.close())
  const r = fx.registry
  const quotas = r.handler('', 'v1', 'resourcequotas')!
  await quotas.create(ctx(), 'default', body(quota('q', { configmaps: '3' })))
  const cms = r.handler('', 'v1', 'configmaps')!
  await cms.create(ctx(), 'default', body({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' } }))
  // As the quota controller does when it recounts: the status says 2 now.
  await quotas.patch(ctx(), 'default', 'q', cur => ({ ...cur, status: { hard: { configmaps: '3' }, used: { configmaps: '2' } } }), 'status')
  await cms.create(ctx(), 'default', body({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'b' } }))
  const err = await cms.create(ctx(), 'default', body({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } })).catch(e => e)
  t.match(err.message, 'exceeded quota: q, requested: configmaps=1, used: configmaps=3, limited: configmaps=3')
})
