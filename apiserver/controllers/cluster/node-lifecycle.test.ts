import t from 'tap'
import { until } from '../testing.js'
import { openFixture, silentLogger } from '../../registry/testing.js'
import { inProcessClient } from '../client/in-process.js'
import { RESOURCES, type Obj } from '../client/types.js'
import { FakeClock } from '../clock.js'
import { startControllerManager } from '../manager.js'


t.test('a silent node turns Unknown, is tainted unreachable, and its pods are evicted after their toleration', async t => {
  const fx = await openFixture()
  t.teardown(() => fx.close())
  const client = inProcessClient(fx.registry, 'orch-controller-manager')
  const start = Date.now()
  const clock = new FakeClock(start)
  const cm = startControllerManager({ client, logger: silentLogger, clock, controllers: ['nodelifecycle'] })
  t.teardown(() => cm.stop())
  const beat = new Date(start).toISOString()
  await client.resource(RESOURCES.nodes).create('', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } })
  await client.resource(RESOURCES.nodes).patch('', 'n1', { status: { conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', lastHeartbeatTime: beat, lastTransitionTime: beat }] } }, 'status')
  const pod = (name: string, seconds?: number): Obj => ({
    apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' },
    spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'i:1' }], tolerations: seconds === undefined ? [] : [{ key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: seconds }] }
  })
  await client.resource(RESOURCES.pods).create('default', pod('short', 5))
  await client.resource(RESOURCES.pods).create('default', pod('long', 3600))
  await new Promise(resolve => setTimeout(resolve, 200))
  clock.advance(30_000)
  await new Promise(resolve => setTimeout(resolve, 100))
  t.equal((await client.resource(RESOURCES.nodes).get('', 'n1'))?.status.conditions[0].status, 'True', 'still Ready within the grace period')
  clock.advance(15_000)
  const node = await until(async () => {
    const n = await client.resource(RESOURCES.nodes).get('', 'n1')
    return (n?.spec?.taints ?? []).some((x: Obj) => x.key === 'node.kubernetes.io/unreachable' && x.effect === 'NoExecute') ? n : undefined
  })
  t.equal(node.status.conditions[0].status, 'Unknown')
  t.equal(node.status.conditions[0].reason, 'NodeStatusUnknown')
  t.notOk((await client.resource(RESOURCES.pods).get('default', 'short'))?.metadata.deletionTimestamp, 'not before its tolerationSeconds')
  clock.advance(6_000)
  await until(async () => (await client.resource(RESOURCES.pods).get('default', 'short'))?.metadata.deletionTimestamp !== undefined)
  t.notOk((await client.resource(RESOURCES.pods).get('default', 'long'))?.metadata.deletionTimestamp, 'a pod tolerating longer stays')
  // The node reports again: Ready, and the taints go.
  const fresh = new Date(clock.now()).toISOString()
  await client.resource(RESOURCES.nodes).patch('', 'n1', { status: { conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', lastHeartbeatTime: fresh, lastTransitionTime: fresh }] } }, 'status')
  const taints = async (): Promise<Array<{ key: string }>> => ((await client.resource(RESOURCES.nodes).get('', 'n1'))?.spec?.taints ?? []) as Array<{ key: string }>
  await until(async () => (await taints()).every(x => !x.key.startsWith('node.kubernetes.io/')))
  t.same(await taints(), [], 'taints removed once Ready')
})

t.test('a pressure condition turns into its NoSchedule taint, which goes when the condition clears', async t => {
  const fx = await openFixture()
  t.teardown(() => fx.close())
  const client = inProcessClient(fx.registry, 'orch-controller-manager')
  const clock = new FakeClock(Date.now())
  const cm = startControllerManager({ client, logger: silentLogger, clock, controllers: ['nodelifecycle'] })
  t.teardown(() => cm.stop())
  const beat = new Date(clock.now()).toISOString()
  const conditions = (memory: string, pid: string): Obj[] => [
    { type: 'MemoryPressure', status: memory, lastHeartbeatTime: beat, lastTransitionTime: beat },
    { type: 'DiskPressure', status: 'False', lastHeartbeatTime: beat, lastTransitionTime: beat },
    { type: 'PIDPressure', status: pid, lastHeartbeatTime: beat, lastTransitionTime: beat },
    { type: 'Ready', status: 'True', lastHeartbeatTime: beat, lastTransitionTime: beat }]
  await client.resource(RESOURCES.nodes).create('', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n2' }, spec: { taints: [{ key: 'own', value: 'x', effect: 'NoSchedule' }] } })
  await client.resource(RESOURCES.nodes).patch('', 'n2', { status: { conditions: conditions('True', 'True') } }, 'status')
  const taintKeys = async (): Promise<string> => ((await client.resource(RESOURCES.nodes).get('', 'n2'))?.spec?.taints ?? []).map((x: Obj) => `${String(x.key)}:${String(x.effect)}`).join(',')
  await until(async () => (await taintKeys()).includes('pid-pressure'))
  t.equal(await taintKeys(), 'own:NoSchedule,node.kubernetes.io/memory-pressure:NoSchedule,node.kubernetes.io/pid-pressure:NoSchedule')
  await client.resource(RESOURCES.nodes).patch('', 'n2', { status: { conditions: conditions('False', 'True') } }, 'status')
  await until(async () => !(await taintKeys()).includes('memory-pressure'))
  t.equal(await taintKeys(), 'own:NoSchedule,node.kubernetes.io/pid-pressure:NoSchedule', 'the node\'s own taints are kept')
})
