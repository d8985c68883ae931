import t from 'tap'
import { until } from './testing.js'
import { openFixture, silentLogger } from '../registry/testing.js'
import { inProcessClient } from './client/in-process.js'
import { RESOURCES, type Obj } from './client/types.js'
import { controllerEnabled, startControllerManager } from './manager.js'
import { FakeClock } from './clock.js'
import { startScheduler } from '../scheduler/run.js'


t.test('--controllers: * enables all, -name disables one, a bare name enables it', async t => {
  t.ok(controllerEnabled('job', ['*']))
  t.notOk(controllerEnabled('job', ['*', '-job']))
  t.ok(controllerEnabled('job', ['job']))
  t.notOk(controllerEnabled('cronjob', ['job']))
})

t.test('priority: a PriorityClass name resolves to its value, an unknown one is refused, a higher pod preempts', async t => {
  const fx = await openFixture()
  t.teardown(() => fx.close())
  const client = inProcessClient(fx.registry, 'orch-controller-manager')
  const cm = startControllerManager({ client, logger: silentLogger, controllers: ['serviceaccount'] })
  const sched = startScheduler({ client: inProcessClient(fx.registry, 'orch-scheduler'), logger: silentLogger, informers: cm.informers })
  t.teardown(() => { sched.stop(); cm.stop() })
  await until(async () => (await client.resource(RESOURCES.priorityClasses).get('', 'system-cluster-critical'))?.value === 2000000000)
  await client.resource(RESOURCES.priorityClasses).create('', { apiVersion: 'scheduling.orch.io/v1', kind: 'PriorityClass', metadata: { name: 'high' }, value: 1000 })
  await client.resource(RESOURCES.nodes).create('', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' }, status: { allocatable: { cpu: '2', memory: '8Gi', pods: '110' } } })
  const pod = (name: string, extra: Record<string, unknown> = {}): Obj => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' },
    spec: { containers: [{ name: 'c', image: 'i:1', resources: { requests: { cpu: '1' } } }], ...extra } })
  await t.rejects(client.resource(RESOURCES.pods).create('default', pod('x', { priorityClassName: 'nope' })), { code: 403, message: 'pods "x" is forbidden: no PriorityClass with name nope was found' })
  for (const n of ['low-1', 'low-2']) await client.resource(RESOURCES.pods).create('default', pod(n))
  await until(async () => (await client.resource(RESOURCES.pods).list('default')).items.filter(p => p.spec.nodeName === 'n1').length === 2)
  const high = await client.resource(RESOURCES.pods).create('default', pod('high', { priorityClassName: 'high' }))
  t.equal(high.spec.priority, 1000)
  t.equal(high.spec.preemptionPolicy, 'PreemptLowerPriority')
  const victim = await until(async () => (await client.resource(RESOURCES.pods).list('default')).items.find(p => p.metadata.name.startsWith('low') && p.metadata.deletionTimestamp !== undefined))
  t.ok(victim.status.conditions.some((c: Obj) => c.type === 'DisruptionTarget' && c.reason === 'PreemptionByScheduler'))
  const nominated = await client.resource(RESOURCES.pods).get('default', 'high')
  t.equal(nominated?.status?.nominatedNodeName, 'n1')
})

t.test('in process: a Deployment gets a ReplicaSet and pods, the scheduler binds them, a Job backs off on a fake clock', async t => {
  const fx = await openFixture()
  t.teardown(() => fx.close())
  const client = inProcessClient(fx.registry, 'orch-controller-manager')
  const clock = new FakeClock(Date.now())
  const cm = startControllerManager({ client, logger: silentLogger, clock, controllers: ['deployment', 'replicaset', 'job'] })
  const sched = startScheduler({ client: inProcessClient(fx.registry, 'orch-scheduler'), logger: silentLogger, clock, informers: cm.informers })
  t.teardown(() => { sched.stop(); cm.stop() })
  await client.resource(RESOURCES.nodes).create('', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' }, status: { allocatable: { cpu: '4', memory: '8Gi', pods: '110' } } })
  await client.resource(RESOURCES.deployments).create('default', {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'default' },
    spec: { replicas: 2, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'i:1' }] } } }
  })
  const pods = await until(async () => {
    const list = (await client.resource(RESOURCES.pods).list('default')).items
    return list.length === 2 && list.every(p => p.spec.nodeName === 'n1') ? list : undefined
  })
  t.equal(pods.length, 2, 'exactly the replicas asked for, no duplicates')
  const rs = (await client.resource(RESOURCES.replicaSets).list('default')).items
  t.equal(rs.length, 1)
  t.equal(pods[0].metadata.ownerReferences[0].uid, rs[0].metadata.uid)

  // A failing Job: each failed pod delays the next by the back-off (10 s, then 20 s).
  await client.resource(RESOURCES.jobs).create('default', {
    apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'fail', namespace: 'default' },
    spec: { backoffLimit: 1, template: { spec: { restartPolicy: 'Never', nodeName: 'n1', containers: [{ name: 'c', image: 'i:1' }] } } }
  })
  const jobPods = async (): Promise<Obj[]> => (await client.resource(RESOURCES.pods).list('default', { labelSelector: 'job-name=fail' })).items
  const fail = async (p: Obj): Promise<void> => {
    await client.resource(RESOURCES.pods).patch('default', p.metadata.name, { status: { phase: 'Failed' } }, 'status')
  }
  const first = await until(async () => { const l = await jobPods(); return l.length === 1 ? l[0] : undefined })
  await fail(first)
  await until(async () => (await client.resource(RESOURCES.jobs).get('default', 'fail'))?.status?.failed === 1)
  await new Promise(resolve => setTimeout(resolve, 100))
  t.equal((await jobPods()).length, 1, 'no new pod before the back-off')
  clock.advance(10_001)
  const second = await until(async () => (await jobPods()).find(p => p.metadata.uid !== first.metadata.uid))
  await fail(second)
  const job = await until(async () => {
    const j = await client.resource(RESOURCES.jobs).get('default', 'fail')
    return (j?.status?.conditions ?? []).some((c: Obj) => c.type === 'Failed') ? j : undefined
  })
  const failed = job.status.conditions.find((c: Obj) => c.type === 'Failed')
  t.equal(failed.reason, 'BackoffLimitExceeded')
  t.equal(job.status.failed, 2)
})

t.test('resource quota status counts pods, compute requests, config maps and other resources', async t => {
  const fx = await openFixture()
  t.teardown(() => fx.close())
  const client = inProcessClient(fx.registry, 'orch-controller-manager')
  const cm = startControllerManager({ client, logger: silentLogger, controllers: ['resourcequota'] })
  t.teardown(() => cm.stop())
  await client.resource(RESOURCES.resourceQuotas).create('default', { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'q', namespace: 'default' },
    spec: { hard: { pods: '10', 'requests.cpu': '4', 'limits.memory': '8Gi', configmaps: '5', 'count/deployments.apps': '3' } } })
  for (const [name, cpu] of [['a', '250m'], ['b', '1']]) {
    await client.resource(RESOURCES.pods).create('default', { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' },
      spec: { containers: [{ name: 'c', image: 'i:1', resources: { requests: { cpu }, limits: { memory: '256Mi' } } }] } })
  }
  await client.resource(RESOURCES.configMaps).create('default', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cfg', namespace: 'default' } })
  const q = await until(async () => {
    const got = await client.resource(RESOURCES.resourceQuotas).get('default', 'q')
    return got?.status?.used?.pods === '2' && got.status.used.configmaps === '1' ? got : undefined
  })
  t.same(q.status.used, { pods: '2', 'requests.cpu': '1250m', 'limits.memory': '512Mi', configmaps: '1', 'count/deployments.apps': '0' })
  t.same(q.status.hard, q.spec.hard)
})

t.test('an Indexed Job with backoffLimitPerIndex retries each index on its own and fails with the indexes that ran out', async t => {
  const fx = await openFixture()
  t.teardown(() => fx.close())
  const client = inProcessClient(fx.registry, 'orch-controller-manager')
  const cm = startControllerManager({ client, logger: silentLogger, controllers: ['job'] })
  t.teardown(() => cm.stop())
  await client.resource(RESOURCES.jobs).create('default', {
    apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'idx', namespace: 'default' },
    spec: { completionMode: 'Indexed', completions: 3, parallelism: 3, backoffLimitPerIndex: 1,
      template: { spec: { restartPolicy: 'Never', nodeName: 'n1', containers: [{ name: 'c', image: 'i:1' }] } } }
  })
  const pods = client.resource(RESOURCES.pods)
  const live = async (index: number): Promise<Obj | undefined> => (await pods.list('default', { labelSelector: 'job-name=idx' })).items
    .find(p => p.metadata.annotations['batch.orch.io/job-completion-index'] === String(index) && p.status?.phase === 'Pending')
  const finish = async (p: Obj, phase: string): Promise<void> => { await pods.patch('default', p.metadata.name, { status: { phase } }, 'status') }
  for (const i of [0, 2]) await finish(await until(async () => await live(i)), 'Succeeded')
  const first = await until(async () => await live(1))
  t.equal(first.metadata.annotations['batch.orch.io/job-index-failure-count'], '0')
  t.equal(first.spec.hostname, 'idx-1')
  await finish(first, 'Failed')
  const retry = await until(async () => { const p = await live(1); return p !== undefined && p.metadata.uid !== first.metadata.uid ? p : undefined })
  t.equal(retry.metadata.annotations['batch.orch.io/job-index-failure-count'], '1', 'the retry carries the index\'s failure count')
  await finish(retry, 'Failed')
  const job = await until(async () => {
    const j = await client.resource(RESOURCES.jobs).get('default', 'idx')
    return (j?.status?.conditions ?? []).some((c: Obj) => c.type === 'Failed') ? j : undefined
  })
  t.equal(job.status.conditions.find((c: Obj) => c.type === 'Failed').reason, 'FailedIndexes')
  t.equal(job.status.failedIndexes, '1')
  t.equal(job.status.completedIndexes, '0,2')
  t.equal(job.status.failed, 2)
})

t.test('a CronJob fires at its scheduled minute on a fake clock, and Forbid skips a run while one is active', async t => {
  const fx = await openFixture()
  t.teardown(() => fx.close())
  const client = inProcessClient(fx.registry, 'orch-controller-manager')
  const clock = new FakeClock(Date.now())
  const cm = startControllerManager({ client, logger: silentLogger, clock, controllers: ['cronjob'] })
  t.teardown(() => cm.stop())
  await client.resource(RESOURCES.cronJobs).create('default', {
    apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'tick', namespace: 'default' },
    spec: { schedule: '* * * * *', concurrencyPolicy: 'Forbid', jobTemplate: { spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'i:1' }] } } } } }
  })
  await new Promise(resolve => setTimeout(resolve, 200))
  t.equal((await client.resource(RESOURCES.jobs).list('default')).items.length, 0, 'nothing before the first scheduled minute')
  clock.advance(61_000)
  const first = await until(async () => (await client.resource(RESOURCES.jobs).list('default')).items[0])
  const minute = Math.floor(clock.now() / 60_000)
  t.equal(first.metadata.name, `tick-${minute}`, 'named after the scheduled minute')
  t.ok(first.metadata.annotations['batch.orch.io/cronjob-scheduled-timestamp'])
  const cj = await until(async () => { const c = await client.resource(RESOURCES.cronJobs).get('default', 'tick'); return c?.status?.active?.length === 1 ? c : undefined })
  t.equal(cj.status.active[0].name, first.metadata.name)
  clock.advance(60_000)
  await new Promise(resolve => setTimeout(resolve, 300))
  t.equal((await client.resource(RESOURCES.jobs).list('default')).items.length, 1, 'Forbid: no second job while the first runs')
})

t.test('the root CA publisher keeps kube-root-ca.crt in every namespace when a CA bundle is configured', async t => {
  const fx = await openFixture()
  t.teardown(() => fx.close())
  const client = inProcessClient(fx.registry, 'orch-controller-manager')
  const bundle = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n'
  const cm = startControllerManager({ client, logger: silentLogger, controllers: ['root-ca-cert-publisher'], settings: { rootCABundle: bundle } })
  t.teardown(() => cm.stop())
  const maps = client.resource(RESOURCES.configMaps)
  const first = await until(async () => await maps.get('default', 'kube-root-ca.crt'))
  t.equal(first.data['ca.crt'], bundle)
  await maps.update('default', { ...first, data: { 'ca.crt': 'tampered' } })
  await until(async () => (await maps.get('default', 'kube-root-ca.crt'))?.data['ca.crt'] === bundle)
  await maps.delete('default', 'kube-root-ca.crt')
  await until(async () => (await maps.get('default', 'kube-root-ca.crt'))?.data['ca.crt'] === bundle)
  t.ok(await maps.get('kube-system', 'kube-root-ca.crt'), 'in every namespace')
  const none = startControllerManager({ client, logger: silentLogger, controllers: ['root-ca-cert-publisher'] })
  t.equal(none.controllers.size, 0, 'without a CA bundle it does not run')
  none.stop()
})
