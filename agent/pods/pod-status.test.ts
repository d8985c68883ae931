import t from 'tap'
import { buildPodStatus, type ContainerRecord, type PodStatusInput } from './pod-status.js'
import type { Pod, PodCondition } from './pod-types.js'

const NOW = Date.parse('2026-01-01T00:00:00Z')

function pod (extra: Partial<Pod['spec']> = {}, status?: Pod['status']): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', namespace: 'default', uid: 'u1' },
    spec: { containers: [{ name: 'main', image: 'img' }], restartPolicy: 'Never', ...extra },
    ...(status ? { status } : {})
  }
}

function rec (name: string, state: ContainerRecord['state'], extra: Partial<ContainerRecord> = {}): ContainerRecord {
  return { name, runtimeName: 'wasm', state, restartCount: 0, imageRef: 'sha256:x', ready: false, started: state === 'running', startedAt: NOW, ...extra }
}

function input (p: Pod, extra: Partial<PodStatusInput> = {}): PodStatusInput {
  return { pod: p, init: [], containers: [], sandboxReady: true, hostIP: '10.0.0.2', ...extra }
}

function cond (conditions: PodCondition[] | undefined, type: string): Omit<PodCondition, 'lastProbeTime' | 'lastTransitionTime'> | undefined {
  const c = conditions?.find(x => x.type === type)
  if (c === undefined) return undefined
  const { lastProbeTime: _p, lastTransitionTime: _t, ...rest } = c
  return rest
}

t.test('a pod waiting on its init container says which ones are incomplete and which are unready', async t => {
  const p = pod({ initContainers: [{ name: 'i1', image: 'img' }, { name: 'i2', image: 'img' }], containers: [{ name: 'main', image: 'img' }, { name: 'side', image: 'img' }] })
  const s = buildPodStatus(input(p, { init: [rec('i1', 'running')] }), NOW)
  t.equal(s.phase, 'Pending')
  t.same(cond(s.conditions, 'Initialized'), { type: 'Initialized', status: 'False', reason: 'ContainersNotInitialized', message: 'containers with incomplete status: [i1 i2]' })
  t.same(cond(s.conditions, 'ContainersReady'), { type: 'ContainersReady', status: 'False', reason: 'ContainersNotReady', message: 'containers with unready status: [main side]' })
  t.same(cond(s.conditions, 'Ready'), { type: 'Ready', status: 'False', reason: 'ContainersNotReady', message: 'containers with unready status: [main side]' })
  t.same(s.conditions!.map(c => c.type), ['PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady', 'PodScheduled'], 'the kubelet\'s order')
})

t.test('a finished init container is ready and the pod is Initialized', async t => {
  const p = pod({ initContainers: [{ name: 'i1', image: 'img' }] })
  const s = buildPodStatus(input(p, { init: [rec('i1', 'exited', { exitCode: 0, finishedAt: NOW })], containers: [rec('main', 'running', { ready: true })] }), NOW)
  t.equal(s.initContainerStatuses![0]!.ready, true)
  t.same(cond(s.conditions, 'Initialized'), { type: 'Initialized', status: 'True' })
  t.same(cond(s.conditions, 'Ready'), { type: 'Ready', status: 'True' })
  t.equal(s.phase, 'Running')
})

t.test('a Succeeded pod reports PodCompleted on Initialized, Ready and ContainersReady', async t => {
  const s = buildPodStatus(input(pod(), { containers: [rec('main', 'exited', { exitCode: 0, finishedAt: NOW })], sandboxReady: false }), NOW)
  t.equal(s.phase, 'Succeeded')
  t.same(cond(s.conditions, 'Initialized'), { type: 'Initialized', status: 'True', reason: 'PodCompleted' })
  t.same(cond(s.conditions, 'Ready'), { type: 'Ready', status: 'False', reason: 'PodCompleted' })
  t.same(cond(s.conditions, 'ContainersReady'), { type: 'ContainersReady', status: 'False', reason: 'PodCompleted' })
  t.same(cond(s.conditions, 'PodReadyToStartContainers'), { type: 'PodReadyToStartContainers', status: 'False' }, 'the sandbox is stopped once the pod finished')
})

t.test('a Failed pod reports PodFailed on Ready and ContainersReady', async t => {
  const s = buildPodStatus(input(pod(), { containers: [rec('main', 'exited', { exitCode: 2, finishedAt: NOW })] }), NOW)
  t.equal(s.phase, 'Failed')
  t.same(cond(s.conditions, 'Ready'), { type: 'Ready', status: 'False', reason: 'PodFailed' })
  t.same(cond(s.conditions, 'ContainersReady'), { type: 'ContainersReady', status: 'False', reason: 'PodFailed' })
})

t.test('podIP is the sandbox IP when given, the host IP otherwise', async t => {
  const own = buildPodStatus(input(pod(), { podIP: '10.88.0.5' }), NOW)
  t.same([own.hostIP, own.podIP, own.podIPs], ['10.0.0.2', '10.88.0.5', [{ ip: '10.88.0.5' }]])
  const host = buildPodStatus(input(pod()), NOW)
  t.same([host.podIP, host.podIPs], ['10.0.0.2', [{ ip: '10.0.0.2' }]])
})

t.test('readiness gates hold Ready back and conditions owned by others are kept', async t => {
  const gated = pod({ readinessGates: [{ conditionType: 'example.com/lb' }] })
  const running = { containers: [rec('main', 'running', { ready: true })] }
  const missing = buildPodStatus(input(gated, running), NOW)
  t.same(cond(missing.conditions, 'Ready'), { type: 'Ready', status: 'False', reason: 'ReadinessGatesNotReady', message: 'corresponding condition of pod readiness gate "example.com/lb" does not exist.' })
  t.same(cond(missing.conditions, 'ContainersReady'), { type: 'ContainersReady', status: 'True' })
  const lb: PodCondition = { type: 'example.com/lb', status: 'False', lastProbeTime: null, lastTransitionTime: '2025-01-01T00:00:00Z' }
  const withGate = { ...gated, status: { phase: 'Running' as const, conditions: [lb] } }
  const waiting = buildPodStatus(input(withGate, running), NOW)
  t.equal(cond(waiting.conditions, 'Ready')?.message, 'the status of pod readiness gate "example.com/lb" is not "True", but False')
  t.same(waiting.conditions![0], lb, 'the foreign condition is kept first, unchanged')
  const ok = buildPodStatus(input({ ...gated, status: { phase: 'Running', conditions: [{ ...lb, status: 'True' }] } }, running), NOW)
  t.same(cond(ok.conditions, 'Ready'), { type: 'Ready', status: 'True' })
})

t.test('a condition keeps its transition time while its status holds', async t => {
  const first = buildPodStatus(input(pod(), { containers: [rec('main', 'running')], sandboxReady: true }), NOW)
  const second = buildPodStatus(input(pod(), { containers: [rec('main', 'running', { ready: true })], previous: first }), NOW + 5000)
  const at = (s: typeof first, type: string) => s.conditions!.find(c => c.type === type)!.lastTransitionTime
  t.equal(at(second, 'PodScheduled'), '2026-01-01T00:00:00Z')
  t.equal(at(second, 'Ready'), '2026-01-01T00:00:05Z')
})

t.test('a phase the API server shows as terminal is never left', async t => {
  const s = buildPodStatus(input(pod({}, { phase: 'Failed', reason: 'OutOfpods' }), { containers: [rec('main', 'running')] }), NOW)
  t.equal(s.phase, 'Failed')
})
