// The eviction manager's rounds on a fake clock: thresholds, grace periods, transition period, reclaim, ranking, messages, admission.
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { FakeClock } from '../../apiserver/controllers/clock.js'
import { createEvictionManager, type EvictionManagerDeps, type EvictionRequest, type PodStats } from './eviction-manager.js'
import { configuredThresholds, type Observations } from './thresholds.js'
import type { Pod } from '../pods/pod-types.js'

const quiet = { info () {}, warn () {} }
const Mi = 1024 * 1024

function pod (name: string, o: { memRequest?: string, priority?: number, grace?: number } = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', uid: randomUUID() },
    spec: {
      containers: [{ name: 'main', image: 'img', ...(o.memRequest !== undefined ? { resources: { requests: { memory: o.memRequest } } } : {}) }],
      ...(o.priority !== undefined ? { priority: o.priority } : {}),
      ...(o.grace !== undefined ? { terminationGracePeriodSeconds: o.grace } : {})
    }
  }
}

interface Rig {
  clock: FakeClock
  obs: Observations
  pods: Pod[]
  usage: Map<string, number>
  evicted: EvictionRequest[]
  changes: string[][]
  manager: ReturnType<typeof createEvictionManager>
}

function rig (config: Partial<Parameters<typeof configuredThresholds>[0]>, extra: Partial<EvictionManagerDeps> = {}): Rig {
  const clock = new FakeClock()
  const r = { clock, obs: {} as Observations, pods: [] as Pod[], usage: new Map<string, number>(), evicted: [] as EvictionRequest[], changes: [] as string[][] } as Rig
  r.manager = createEvictionManager({
    thresholds: configuredThresholds({ evictionHard: [], evictionSoft: [], evictionSoftGracePeriod: {}, evictionMinimumReclaim: {}, ...config }),
    pressureTransitionMs: 300_000,
    maxPodGracePeriodSeconds: 0,
    now: () => clock.now(),
    observe: async () => r.obs,
    activePods: () => r.pods.filter(p => !r.evicted.some(e => e.pod === p)),
    podStats: async () => new Map(r.pods.map(p => [p.metadata.uid, { memoryBytes: r.usage.get(p.metadata.name), containers: [{ name: 'main', memoryBytes: r.usage.get(p.metadata.name) }] } satisfies PodStats])),
    evictPod: async req => { r.evicted.push(req); return true },
    onConditionsChanged: c => r.changes.push(c),
    logger: quiet,
    ...extra
  })
  return r
}

const memory = (availableMi: number): Observations => ({ 'memory.available': { available: availableMi * Mi, capacity: 1024 * Mi } })

t.test('a hard memory threshold met sets MemoryPressure and evicts the BestEffort pod using the most, with the kubelet\'s message', async t => {
  const r = rig({ evictionHard: [{ signal: 'memory.available', value: { quantity: 100 * Mi } }] })
  const small = pod('small'); const big = pod('big'); const burstable = pod('burst', { memRequest: '500Mi' })
  r.pods.push(small, big, burstable)
  r.usage.set('small', 10 * Mi); r.usage.set('big', 300 * Mi); r.usage.set('burst', 400 * Mi)
  r.obs = memory(500)
  t.same(await r.manager.synchronize(), [], 'nothing evicted above the threshold')
  t.same(r.manager.conditions(), [])
  r.obs = memory(50)
  const evicted = await r.manager.synchronize()
  t.equal(evicted[0], big, 'the pod furthest above its request (none) goes first; the Burstable pod is within its request')
  t.same(r.manager.conditions(), ['MemoryPressure'])
  t.same(r.changes, [['MemoryPressure']])
  t.equal(r.evicted[0]!.gracePeriodSeconds, 1, 'hard thresholds give the immediate grace period')
  t.equal(r.evicted[0]!.message, 'The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi. Container main was using 300Mi, request is 0, has larger consumption of memory. ')
  t.same(r.evicted[0]!.annotations, { offending_containers: 'main', offending_containers_usage: '300Mi', starved_resource: 'memory' })
  await r.manager.synchronize()
  t.equal(r.evicted[1]!.pod, small, 'one pod per round: the next round takes the next in rank')
})

t.test('ranking: pods above their requests first, then lower priority, then usage above requests', async t => {
  const r = rig({ evictionHard: [{ signal: 'memory.available', value: { quantity: 100 * Mi } }] })
  const within = pod('within', { memRequest: '1Gi', priority: -10 })
  const highAbove = pod('high-above', { memRequest: '10Mi', priority: 100 })
  const lowAbove = pod('low-above', { memRequest: '10Mi', priority: 1 })
  const lowMoreAbove = pod('low-more-above', { memRequest: '10Mi', priority: 1 })
  const critical = pod('critical', { priority: 2_000_000_000 })
  r.pods.push(within, highAbove, lowAbove, lowMoreAbove, critical)
  for (const [n, mi] of [['within', 900], ['high-above', 800], ['low-above', 20], ['low-more-above', 50], ['critical', 1000]] as const) r.usage.set(n, mi * Mi)
  r.obs = memory(10)
  for (let i = 0; i < 5; i++) await r.manager.synchronize()
  t.same(r.evicted.map(e => e.pod.metadata.name), ['low-more-above', 'low-above', 'high-above', 'within'], 'critical pods are never evicted')
})

t.test('a soft threshold waits for its grace period; its pods get at most --eviction-max-pod-grace-period', async t => {
  const r = rig({ evictionSoft: [{ signal: 'memory.available', value: { quantity: 200 * Mi } }], evictionSoftGracePeriod: { 'memory.available': 90_000 } },
    { maxPodGracePeriodSeconds: 20 })
  const p = pod('p', { grace: 60 })
  r.pods.push(p)
  r.usage.set('p', 100 * Mi)
  r.obs = memory(150)
  t.same(await r.manager.synchronize(), [])
  t.same(r.manager.conditions(), ['MemoryPressure'], 'the condition shows at once, before the grace period')
  r.clock.advance(89_000)
  t.same(await r.manager.synchronize(), [], 'not yet: 89 s of 90')
  r.clock.advance(1_000)
  t.same(await r.manager.synchronize(), [p])
  t.equal(r.evicted[0]!.gracePeriodSeconds, 20)
})

t.test('a soft threshold that clears within its grace period starts over when met again', async t => {
  const r = rig({ evictionSoft: [{ signal: 'memory.available', value: { quantity: 200 * Mi } }], evictionSoftGracePeriod: { 'memory.available': 60_000 } })
  r.pods.push(pod('p'))
  r.obs = memory(150)
  await r.manager.synchronize()
  r.clock.advance(50_000)
  r.obs = memory(500)
  await r.manager.synchronize()
  r.clock.advance(20_000)
  r.obs = memory(150)
  t.same(await r.manager.synchronize(), [], 'the clock starts again')
  r.clock.advance(60_000)
  t.equal((await r.manager.synchronize()).length, 1)
})

t.test('the pressure condition lasts the transition period after the signal recovers', async t => {
  const r = rig({ evictionHard: [{ signal: 'memory.available', value: { quantity: 100 * Mi } }] })
  r.obs = memory(50)
  await r.manager.synchronize()
  r.obs = memory(900)
  r.clock.advance(299_000)
  await r.manager.synchronize()
  t.ok(r.manager.has('MemoryPressure'), 'still under pressure 299 s after the last observation')
  r.clock.advance(1_000)
  await r.manager.synchronize()
  t.same(r.manager.conditions(), [])
  t.same(r.changes, [['MemoryPressure'], []])
})

t.test('the minimum reclaim keeps a met threshold met until that much more is free', async t => {
  const r = rig({ evictionHard: [{ signal: 'memory.available', value: { quantity: 100 * Mi } }], evictionMinimumReclaim: { 'memory.available': { quantity: 50 * Mi } } })
  r.pods.push(pod('a'), pod('b'))
  r.obs = memory(90)
  t.equal((await r.manager.synchronize()).length, 1)
  r.obs = memory(120)
  t.equal((await r.manager.synchronize()).length, 1, '120Mi free is above the threshold but below threshold plus minimum reclaim')
  r.obs = memory(160)
  t.equal((await r.manager.synchronize()).length, 0)
})

t.test('disk pressure reclaims node-level resources first and evicts nothing when that frees enough', async t => {
  const disk = (gi: number): Observations => ({ 'nodefs.available': { available: gi * 1024 * Mi, capacity: 100 * 1024 * Mi } })
  const calls: string[] = []
  const r = rig({ evictionHard: [{ signal: 'nodefs.available', value: { percent: 10 } }] }, {
    reclaimContainers: async () => { calls.push('containers') },
    reclaimImages: async () => { calls.push('images'); r.obs = disk(30) }
  })
  r.pods.push(pod('p'))
  r.obs = disk(5)
  t.same(await r.manager.synchronize(), [])
  t.same(calls, ['containers', 'images'], 'dead containers, then images')
  t.same(r.manager.conditions(), ['DiskPressure'])
  t.same(r.evicted, [])
})

t.test('disk pressure evicts when node-level reclaim is not enough', async t => {
  const disk: Observations = { 'imagefs.available': { available: 1, capacity: 100 } }
  const r = rig({ evictionHard: [{ signal: 'imagefs.available', value: { percent: 15 } }] }, { reclaimImages: async () => {} })
  r.pods.push(pod('p'))
  r.obs = disk
  t.equal((await r.manager.synchronize()).length, 1)
  t.match(r.evicted[0]!.message, /^The node was low on resource: ephemeral-storage\. Threshold quantity: 15, available: 1\. $/)
})

t.test('admission: BestEffort pods refused under memory pressure alone, others admitted; every non-critical pod refused under disk pressure', async t => {
  const r = rig({ evictionHard: [{ signal: 'memory.available', value: { quantity: 100 * Mi } }, { signal: 'pid.available', value: { quantity: 100 } }] })
  const bestEffort = pod('be')
  const burstable = pod('bu', { memRequest: '10Mi' })
  const tolerating = pod('tol')
  ;(tolerating.spec as unknown as Record<string, unknown>).tolerations = [{ key: 'node.kubernetes.io/memory-pressure', operator: 'Exists', effect: 'NoSchedule' }]
  t.same(r.manager.admit(bestEffort), { admit: true }, 'no pressure: admitted')
  r.obs = memory(50)
  await r.manager.synchronize()
  t.same(r.manager.admit(bestEffort), { admit: false, reason: 'Evicted', message: 'The node had condition: [MemoryPressure]. ' })
  t.same(r.manager.admit(burstable), { admit: true })
  t.same(r.manager.admit(tolerating), { admit: true }, 'a BestEffort pod tolerating the memory-pressure taint is admitted')
  r.obs = { ...memory(50), 'pid.available': { available: 10, capacity: 1000 } }
  await r.manager.synchronize()
  t.same(r.manager.admit(burstable), { admit: false, reason: 'Evicted', message: 'The node had condition: [MemoryPressure PIDPressure]. ' })
  t.same(r.manager.admit(pod('crit', { priority: 2_000_000_001 })), { admit: true }, 'critical pods are always admitted')
})

t.test('percent thresholds are taken of the signal\'s capacity; an unobserved signal never meets', async t => {
  const r = rig({ evictionHard: [{ signal: 'nodefs.inodesFree', value: { percent: 5 } }, { signal: 'allocatableMemory.available', value: { quantity: 1 } }] })
  r.obs = { 'nodefs.inodesFree': { available: 49, capacity: 1000 } }
  await r.manager.synchronize()
  t.same(r.manager.conditions(), ['DiskPressure'])
  r.clock.advance(300_000)
  r.obs = { 'nodefs.inodesFree': { available: 50, capacity: 1000 } }
  await r.manager.synchronize()
  t.same(r.manager.conditions(), [], '50 of 1000 is not below 5%')
})

t.test('a kernel memcg notification starts a round at once; its thresholds are refreshed in rounds at most every 10 s', async t => {
  let onCrossed: ((m: string) => void) | undefined
  let refreshes = 0
  let watching = false
  let stopped = false
  let polled = 0
  const logs: string[] = []
  const r = rig({ evictionHard: [{ signal: 'memory.available', value: { quantity: 100 * Mi } }] }, {
    observeMemory: async () => { polled++; return r.obs },
    memoryNotifier: { start: fn => { onCrossed = fn }, refresh: () => { refreshes++ }, watching: () => watching, stop: async () => { stopped = true } },
    logger: { info: (_o, m) => { if (m !== undefined) logs.push(m) }, warn () {} }
  })
  r.obs = memory(500)
  r.manager.start(3_600_000, 5)
  t.ok(onCrossed, 'the notifier is started with the manager')
  await r.manager.synchronize()
  t.equal(refreshes, 1, 'the first round arms the notifier')
  r.clock.advance(10_000)
  await r.manager.synchronize()
  t.equal(refreshes, 1, 'not again within 10 s')
  r.clock.advance(1)
  await r.manager.synchronize()
  t.equal(refreshes, 2)

  watching = true
  await new Promise(resolve => setTimeout(resolve, 50))
  const before = polled
  await new Promise(resolve => setTimeout(resolve, 50))
  t.equal(polled, before, 'no polling while the kernel watches memory.available')

  r.pods.push(pod('hog'))
  r.usage.set('hog', 900 * Mi)
  r.obs = memory(50)
  onCrossed!('eviction manager: hard memory eviction threshold crossed')
  for (let i = 0; i < 50 && r.evicted.length === 0; i++) await new Promise(resolve => setTimeout(resolve, 10))
  t.same(r.evicted.map(e => e.pod.metadata.name), ['hog'], 'the notification\'s round evicted without waiting for the period')
  t.ok(logs.includes('eviction manager: hard memory eviction threshold crossed'), 'the kubelet\'s message is logged')

  watching = false
  const resumed = polled
  for (let i = 0; i < 50 && polled === resumed; i++) await new Promise(resolve => setTimeout(resolve, 10))
  t.ok(polled > resumed, 'polling resumes when the notifier stops watching')
  await r.manager.stop()
  t.ok(stopped, 'stop waits for the notifier')
})
