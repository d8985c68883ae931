import t from 'tap'
import { body, ctx } from '../../registry/testing.js'
import { admissionFixture, pod } from '../testing.js'

t.test('AlwaysPullImages makes every container of a new pod pull Always', async t => {
  const fx = await admissionFixture(['AlwaysPullImages'])
  t.teardown(() => fx.close())
  const p = pod('a')
  ;(p.spec as any).containers[0].imagePullPolicy = 'IfNotPresent'
  ;(p.spec as any).initContainers = [{ name: 'i', image: 'busybox', imagePullPolicy: 'Never' }]
  const made = await fx.registry.handler('', 'v1', 'pods')!.create(ctx(), 'default', body(p))
  t.equal((made.object as any).spec.containers[0].imagePullPolicy, 'Always')
  t.equal((made.object as any).spec.initContainers[0].imagePullPolicy, 'Always')
})

t.test('RuntimeClass sets the overhead and scheduling of its class and refuses a missing class or another overhead', async t => {
  const fx = await admissionFixture(['RuntimeClass'])
  t.teardown(() => fx.close())
  await fx.registry.handler('node.orch.io', 'v1', 'runtimeclasses')!.create(ctx(), '', body({
    apiVersion: 'node.orch.io/v1', kind: 'RuntimeClass', metadata: { name: 'kata' }, handler: 'kata',
    overhead: { podFixed: { cpu: '250m', memory: '120Mi' } },
    scheduling: { nodeSelector: { runtime: 'kata' }, tolerations: [{ key: 'kata', operator: 'Exists', effect: 'NoSchedule' }] }
  }))
  const pods = fx.registry.handler('', 'v1', 'pods')!
  const made = await pods.create(ctx(), 'default', body(pod('a', {}, { runtimeClassName: 'kata' })))
  const spec = (made.object as any).spec
  t.same(spec.overhead, { cpu: '250m', memory: '120Mi' })
  t.same(spec.nodeSelector, { runtime: 'kata' })
  t.ok(spec.tolerations.some((x: any) => x.key === 'kata'))
  const missing = await pods.create(ctx(), 'default', body(pod('b', {}, { runtimeClassName: 'gone' }))).catch(e => e)
  t.equal(missing.message, 'pods "b" is forbidden: pod rejected: RuntimeClass "gone" not found')
  const other = await pods.create(ctx(), 'default', body(pod('c', {}, { runtimeClassName: 'kata', overhead: { cpu: '1' } }))).catch(e => e)
  t.equal(other.message, 'pods "c" is forbidden: pod rejected: Pod\'s Overhead doesn\'t match RuntimeClass\'s defined Overhead')
  const conflict = await pods.create(ctx(), 'default', body(pod('d', {}, { runtimeClassName: 'kata', nodeSelector: { runtime: 'runc' } }))).catch(e => e)
  t.equal(conflict.message, 'pods "d" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[runtime] = kata; pod.spec.nodeSelector[runtime] = runc')
})

t.test('TaintNodesByCondition taints a new node not-ready; StorageObjectInUseProtection adds the protection finalizers', async t => {
  const fx = await admissionFixture(['TaintNodesByCondition', 'StorageObjectInUseProtection'])
  t.teardown(() => fx.close())
  const node = await fx.registry.handler('', 'v1', 'nodes')!.create(ctx(), '', body({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } }))
  t.same((node.object as any).spec.taints, [{ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }])
  const pvc = await fx.registry.handler('', 'v1', 'persistentvolumeclaims')!.create(ctx(), 'default', body({
    apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'c' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } }
  }))
  t.same((pvc.object as any).metadata.finalizers, ['kubernetes.io/pvc-protection'])
  const pv = await fx.registry.handler('', 'v1', 'persistentvolumes')!.create(ctx(), '', body({
    apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: 'v' }, spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/tmp/v' } }
  }))
  t.same((pv.object as any).metadata.finalizers, ['kubernetes.io/pv-protection'])
})
