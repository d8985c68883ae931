// Local storage limits on fake measurements: which limit a pod is past, the kubelet's messages, and the eviction manager's round.
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { FakeClock } from '../../apiserver/controllers/clock.js'
import type { Container, Pod, Volume } from '../pods/pod-types.js'
import { createEvictionManager, type EvictionRequest, type PodStats } from './eviction-manager.js'
import { hasLocalStorageLimits, localStorageViolation, podEphemeralLimit } from './local-storage.js'

const Ki = 1024
const Mi = 1024 * Ki
const quiet = { info () {}, warn () {} }

function container (name: string, limit?: string): Container {
  return { name, image: 'img', ...(limit !== undefined ? { resources: { limits: { 'ephemeral-storage': limit } } } : {}) }
}

function pod (name: string, containers: Container[], volumes: Volume[] = [], extra: Partial<Pod['spec']> = {}): Pod {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default', uid: randomUUID() }, spec: { containers, volumes, ...extra } }
}

t.test('an emptyDir past its sizeLimit, with the kubelet\'s message', async t => {
  const p = pod('cache', [container('app')], [{ name: 'cache', emptyDir: { sizeLimit: '1Mi' } }, { name: 'free', emptyDir: {} }])
  t.ok(hasLocalStorageLimits(p))
  t.equal(localStorageViolation(p, { containers: [], volumes: [{ name: 'cache', usedBytes: Mi }] }, false), undefined, 'exactly at the limit is within it')
  t.same(localStorageViolation(p, { containers: [], volumes: [{ name: 'cache', usedBytes: Mi + 1 }, { name: 'free', usedBytes: 100 * Mi }] }, false),
    { message: 'Usage of EmptyDir volume "cache" exceeds the limit "1Mi". ', signal: 'emptydirfs.limit' })
  const written = pod('w', [container('app')], [{ name: 'data', emptyDir: { sizeLimit: '1024Ki' } }])
  t.equal(localStorageViolation(written, { containers: [], volumes: [{ name: 'data', usedBytes: 2 * Mi }] }, false)?.message,
    'Usage of EmptyDir volume "data" exceeds the limit "1Mi". ', 'the limit in its canonical form, as Quantity.String() prints it')
})

t.test('the pod total past the sum of its containers\' limits', async t => {
  const p = pod('two', [container('a', '512Ki'), container('b', '512Ki'), container('c')])
  t.same(podEphemeralLimit(p), { bytes: Mi, format: 'BinarySI' })
  t.same(localStorageViolation(p, { ephemeralStorageBytes: Mi + 1, containers: [] }, false),
    { message: 'Pod ephemeral local storage usage exceeds the total limit of containers 1Mi. ', signal: 'ephemeralpodfs.limit' })
  t.equal(localStorageViolation(p, { ephemeralStorageBytes: Mi, containers: [] }, false), undefined)
  const decimal = pod('dec', [container('a', '500k'), container('b', '500k')])
  t.equal(localStorageViolation(decimal, { ephemeralStorageBytes: 2_000_000, containers: [] }, false)?.message,
    'Pod ephemeral local storage usage exceeds the total limit of containers 1M. ', 'the sum keeps the first limit\'s format')
  const init = pod('init', [container('a', '1Mi')], [], { initContainers: [container('setup', '4Mi')] })
  t.equal(podEphemeralLimit(init)?.bytes, 4 * Mi, 'an init container\'s larger limit is the pod\'s')
  t.equal(podEphemeralLimit(pod('none', [container('a')])), undefined)
})

t.test('the pod overhead\'s ephemeral-storage is added to the pod limit, and only to a limit some container sets', async t => {
  const overhead = { 'ephemeral-storage': '512Ki', memory: '64Mi' }
  const p = pod('kata', [container('a', '1Mi'), container('b')], [], { overhead })
  t.same(podEphemeralLimit(p), { bytes: Mi + 512 * Ki, format: 'BinarySI' })
  t.equal(localStorageViolation(p, { ephemeralStorageBytes: Mi + 512 * Ki, containers: [] }, false), undefined, 'usage within containers\' limit plus overhead')
  t.same(localStorageViolation(p, { ephemeralStorageBytes: Mi + 512 * Ki + 1, containers: [] }, false),
    { message: 'Pod ephemeral local storage usage exceeds the total limit of containers 1536Ki. ', signal: 'ephemeralpodfs.limit' })
  const init = pod('init', [container('a', '1Mi')], [], { initContainers: [container('setup', '4Mi')], overhead })
  t.equal(podEphemeralLimit(init)?.bytes, 4 * Mi + 512 * Ki, 'added after the init containers\' maximum')
  const decimal = pod('dec', [container('a', '1M')], [], { overhead: { 'ephemeral-storage': '500k' } })
  t.equal(localStorageViolation(decimal, { ephemeralStorageBytes: 2_000_000, containers: [] }, false)?.message,
    'Pod ephemeral local storage usage exceeds the total limit of containers 1500k. ', 'the sum keeps the containers\' format')
  t.equal(podEphemeralLimit(pod('nolimit', [container('a')], [], { overhead })), undefined, 'overhead alone sets no limit')
  t.notOk(hasLocalStorageLimits(pod('nolimit', [container('a')], [], { overhead })))
})

t.test('sidecar (restartable) init containers count with the containers; a later init container needs the sidecars\' limits too', async t => {
  const sidecar = (name: string, limit?: string): Container => ({ ...container(name, limit), restartPolicy: 'Always' })
  t.equal(podEphemeralLimit(pod('s', [container('a', '1Mi')], [], { initContainers: [sidecar('log', '2Mi')] }))?.bytes, 3 * Mi)
  const p = pod('mix', [container('a', '1Mi')], [], { initContainers: [sidecar('log', '2Mi'), container('setup', '2Mi')] })
  t.equal(podEphemeralLimit(p)?.bytes, 4 * Mi, 'setup runs beside the sidecar: 2Mi + 2Mi is more than 1Mi + 2Mi')
  t.equal(podEphemeralLimit(pod('before', [container('a', '1Mi')], [], { initContainers: [container('setup', '2Mi'), sidecar('log', '2Mi')] }))?.bytes, 3 * Mi,
    'an init container before the sidecar runs alone')
  t.same(podEphemeralLimit(pod('only', [container('a')], [], { initContainers: [sidecar('log', '500k')] })), { bytes: 500_000, format: 'DecimalSI' })
})

t.test('a container past its limit: logs, plus the writable layer unless images have a filesystem of their own', async t => {
  const p = pod('app', [container('app', '1Mi'), container('side')])
  const usage = { containers: [{ name: 'side', logsBytes: 50 * Mi }, { name: 'app', logsBytes: 600 * Ki, rootfsBytes: 600 * Ki }] }
  t.same(localStorageViolation(p, usage, false), { message: 'Container app exceeded its local ephemeral storage limit "1Mi". ', signal: 'ephemeralcontainerfs.limit' })
  t.equal(localStorageViolation(p, usage, true), undefined, 'with a dedicated image filesystem only the 600Ki of logs count')
  t.equal(localStorageViolation(p, { containers: [{ name: 'app', logsBytes: 2 * Mi }] }, true)?.signal, 'ephemeralcontainerfs.limit', 'logs alone (a WebAssembly container has no writable layer)')
})

t.test('the checks run in the kubelet\'s order: emptyDir, then the pod total, then containers', async t => {
  const p = pod('all', [container('app', '1Mi')], [{ name: 'cache', emptyDir: { sizeLimit: '1Mi' } }])
  const over = { ephemeralStorageBytes: 10 * Mi, containers: [{ name: 'app', logsBytes: 5 * Mi }], volumes: [{ name: 'cache', usedBytes: 5 * Mi }] }
  t.equal(localStorageViolation(p, over, false)?.signal, 'emptydirfs.limit')
  t.equal(localStorageViolation(p, { ...over, volumes: [] }, false)?.signal, 'ephemeralpodfs.limit')
  t.equal(localStorageViolation(p, { ...over, volumes: [], ephemeralStorageBytes: 0 }, false)?.signal, 'ephemeralcontainerfs.limit')
  t.notOk(hasLocalStorageLimits(pod('plain', [container('a')], [{ name: 'v', emptyDir: {} }])), 'a pod without limits is not measured')
})

function rig (pods: Pod[], stats: Map<string, PodStats>, localStorage: boolean): { evicted: EvictionRequest[], statsAsked: () => number, manager: ReturnType<typeof createEvictionManager> } {
  const evicted: EvictionRequest[] = []
  let asked = 0
  const clock = new FakeClock()
  const manager = createEvictionManager({
    thresholds: [],
    pressureTransitionMs: 300_000,
    maxPodGracePeriodSeconds: 0,
    now: () => clock.now(),
    observe: async () => ({}),
    activePods: () => pods.filter(p => !evicted.some(e => e.pod === p)),
    podStats: async () => { asked++; return stats },
    evictPod: async req => { evicted.push(req); return true },
    ...(localStorage ? { localStorage: { dedicatedImageFs: () => false } } : {}),
    logger: quiet
  })
  return { evicted, statsAsked: () => asked, manager }
}

t.test('the eviction manager evicts every pod past a limit in one round, at once, without a DisruptionTarget condition', async t => {
  const logs = pod('logs', [container('app', '1Mi')])
  const cache = pod('cache', [container('app')], [{ name: 'cache', emptyDir: { sizeLimit: '1Mi' } }])
  const fine = pod('fine', [container('app', '1Gi')])
  const critical = pod('critical', [container('app', '1Mi')], [], { priority: 2_000_000_000 })
  const stats = new Map<string, PodStats>([
    [logs.metadata.uid, { containers: [{ name: 'app', logsBytes: 2 * Mi }] }],
    [cache.metadata.uid, { containers: [], volumes: [{ name: 'cache', usedBytes: 3 * Mi }] }],
    [fine.metadata.uid, { containers: [{ name: 'app', logsBytes: 2 * Mi }] }],
    [critical.metadata.uid, { containers: [{ name: 'app', logsBytes: 2 * Mi }] }]
  ])
  const r = rig([logs, cache, fine, critical], stats, true)
  t.same(await r.manager.synchronize(), [logs, cache], 'no threshold met, yet both pods past their limits go in the same round; critical pods never')
  t.same(r.evicted.map(e => [e.pod.metadata.name, e.gracePeriodSeconds, e.signal, e.disruptionCondition, e.message]), [
    ['logs', 0, 'ephemeralcontainerfs.limit', false, 'Container app exceeded its local ephemeral storage limit "1Mi". '],
    ['cache', 0, 'emptydirfs.limit', false, 'Usage of EmptyDir volume "cache" exceeds the limit "1Mi". ']
  ])
  t.same(r.manager.conditions(), [], 'a pod past its own limit is no node pressure')
  t.same(await r.manager.synchronize(), [], 'the next round finds nothing more')
})

t.test('with localStorageCapacityIsolation off, or no pod with a limit, nothing is measured or evicted', async t => {
  const logs = pod('logs', [container('app', '1Mi')])
  const stats = new Map<string, PodStats>([[logs.metadata.uid, { containers: [{ name: 'app', logsBytes: 2 * Mi }] }]])
  const off = rig([logs], stats, false)
  t.same(await off.manager.synchronize(), [])
  t.equal(off.statsAsked(), 0)
  const none = rig([pod('plain', [container('app')])], stats, true)
  t.same(await none.manager.synchronize(), [])
  t.equal(none.statsAsked(), 0, 'the pods\' stats are not even asked for')
})
