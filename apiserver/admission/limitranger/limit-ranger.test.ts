import t from 'tap'
import { body, ctx } from '../../registry/testing.js'
import { admissionFixture, pod } from '../testing.js'

const range = (limits: unknown[]): Record<string, unknown> => ({ apiVersion: 'v1', kind: 'LimitRange', metadata: { name: 'lr' }, spec: { limits } })

t.test('containers get the default requests and limits of the LimitRange', async t => {
  const fx = await admissionFixture(['LimitRanger'])
  t.teardown(() => fx.close())
  await fx.registry.handler('', 'v1', 'limitranges')!.create(ctx(), 'default', body(range([
    { type: 'Container', default: { cpu: '500m', memory: '256Mi' }, defaultRequest: { cpu: '100m' } }
  ])))
  const made = await fx.registry.handler('', 'v1', 'pods')!.create(ctx(), 'default', body(pod('a', { limits: { memory: '128Mi' } })))
  t.same((made.object as any).spec.containers[0].resources, { limits: { memory: '128Mi', cpu: '500m' }, requests: { cpu: '100m' } })
  t.equal((made.object as any).metadata.annotations['kubernetes.io/limit-ranger'], 'LimitRanger plugin set: cpu request for container c; cpu limit for container c')
})

t.test('min, max and maxLimitRequestRatio are enforced in Kubernetes\' words', async t => {
  const fx = await admissionFixture(['LimitRanger'])
  t.teardown(() => fx.close())
  await fx.registry.handler('', 'v1', 'limitranges')!.create(ctx(), 'default', body(range([
    { type: 'Container', min: { cpu: '100m' }, max: { cpu: '1' }, maxLimitRequestRatio: { cpu: '2' } }
  ])))
  const pods = fx.registry.handler('', 'v1', 'pods')!
  const low = await pods.create(ctx(), 'default', body(pod('low', { requests: { cpu: '50m' }, limits: { cpu: '100m' } }))).catch(e => e)
  t.equal(low.code, 403)
  t.equal(low.message, 'pods "low" is forbidden: minimum cpu usage per Container is 100m, but request is 50m')
  const high = await pods.create(ctx(), 'default', body(pod('high', { requests: { cpu: '1' }, limits: { cpu: '2' } }))).catch(e => e)
  t.equal(high.message, 'pods "high" is forbidden: maximum cpu usage per Container is 1, but limit is 2')
  const ratio = await pods.create(ctx(), 'default', body(pod('ratio', { requests: { cpu: '200m' }, limits: { cpu: '800m' } }))).catch(e => e)
  t.equal(ratio.message, 'pods "ratio" is forbidden: cpu max limit to request ratio per Container is 2, but provided ratio is 4.000000')
  const none = await pods.create(ctx(), 'default', body(pod('none'))).catch(e => e)
  t.match(none.message, /^pods "none" is forbidden: \[minimum cpu usage per Container is 100m\.  No request is specified, maximum cpu usage per Container is 1\.  No limit is specified/)
  await pods.create(ctx(), 'default', body(pod('ok', { requests: { cpu: '300m' }, limits: { cpu: '500m' } })))
})

t.test('PersistentVolumeClaims are held to the storage min and max', async t => {
  const fx = await admissionFixture(['LimitRanger'])
  t.teardown(() => fx.close())
  await fx.registry.handler('', 'v1', 'limitranges')!.create(ctx(), 'default', body(range([
    { type: 'PersistentVolumeClaim', min: { storage: '1Gi' }, max: { storage: '10Gi' } }
  ])))
  const pvc = (name: string, storage: string): Record<string, unknown> => ({
    apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage } } }
  })
  const pvcs = fx.registry.handler('', 'v1', 'persistentvolumeclaims')!
  const small = await pvcs.create(ctx(), 'default', body(pvc('small', '500Mi'))).catch(e => e)
  t.equal(small.message, 'persistentvolumeclaims "small" is forbidden: minimum storage usage per PersistentVolumeClaim is 1Gi, but request is 500Mi')
  const big = await pvcs.create(ctx(), 'default', body(pvc('big', '20Gi'))).catch(e => e)
  t.equal(big.message, 'persistentvolumeclaims "big" is forbidden: maximum storage usage per PersistentVolumeClaim is 10Gi, but request is 20Gi')
  await pvcs.create(ctx(), 'default', body(pvc('fine', '5Gi')))
})

t.test('without the plugin, LimitRanges change nothing', async t => {
  const fx = await admissionFixture([])
  t.teardown(() => fx.close())
  await fx.registry.handler('', 'v1', 'limitranges')!.create(ctx(), 'default', body(range([{ type: 'Container', min: { cpu: '100m' }, default: { cpu: '1' } }])))
  const made = await fx.registry.handler('', 'v1', 'pods')!.create(ctx(), 'default', body(pod('a')))
  t.same((made.object as any).spec.containers[0].resources, {})
})
