// The pod lifecycle against the real built-in WebAssembly runtime (no API server: standalone mode).
import t, { type Test } from 'tap'
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomUUID } from 'node:crypto'
import { createWasmRuntime, type WasmRuntime } from '../runtime/wasm/runtime.js'
import { compileFixture } from '../runtime/wasm/fixtures/compile.js'
import { buildWasmImageLayout, writeLayoutDir } from '../runtime/oci/layout-writer.js'
import type { PodManager } from './pod-manager.js'
import { testPodManager, waitForStatus } from './testing.js'
import type { Container, Pod, PodStatus } from './pod-types.js'
import { createEventRecorder } from '../events/recorder.js'

const IMAGE = 'localhost/orch-test/tool:1'
const logger = { info () {}, warn () {} }

/** One recorded event as the standalone recorder logs it. */
interface Logged { object: string; fieldPath?: string; type: string; reason: string; message: string }

async function setup (t: Test, maxPods = 10): Promise<{ pods: PodManager; root: string; wasm: WasmRuntime; events: Logged[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'orch-wasm-'))
  const wasm = await createWasmRuntime({ rootDir: join(dir, 'wasm') })
  const layout = join(dir, 'layout')
  await writeLayoutDir(layout, buildWasmImageLayout({ module: await compileFixture('tool'), refName: IMAGE }))
  await wasm.images.importImage(layout)
  t.teardown(async () => { await wasm.close(); rmSync(dir, { recursive: true, force: true }) })
  // The real recorder in standalone mode: events are logged, so the log is what the test reads.
  const events: Logged[] = []
  const recorder = createEventRecorder({ component: 'orchlet', host: 'node-a', qps: 0, burst: 0, logger: { info: (o, m) => events.push({ ...(o as { event: Omit<Logged, 'message'> }).event, message: m ?? '' }), warn () {} } })
  const { pods, root } = testPodManager(t, { runtime: wasm, maxPods, recorder })
  return { pods, root, wasm, events }
}

function reasons (events: Logged[], object: string): string[] {
  return events.filter(e => e.object === object).map(e => e.reason)
}

function tool (name: string, ...argv: string[]): Container {
  return { name, image: IMAGE, imagePullPolicy: 'IfNotPresent', command: ['tool', argv[0]!], args: argv.slice(1) }
}

function pod (name: string, containers: Container[], spec: Partial<Pod['spec']> = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', uid: randomUUID() },
    spec: { containers, runtimeClassName: 'wasm', terminationGracePeriodSeconds: 1, ...spec }
  }
}

const until = (pods: PodManager, p: Pod, check: (s: PodStatus) => boolean, timeoutMs = 8000): Promise<PodStatus> => waitForStatus(pods, p, check, timeoutMs)

t.test('runs a pod to completion and reports Succeeded with exit code 0 and its logs', async t => {
  const { pods, events } = await setup(t)
  const p = pod('hello', [tool('main', 'echo', 'hello', 'world')], { restartPolicy: 'Never' })
  pods.sink.set('file', [p])
  const st = await until(pods, p, s => s.phase === 'Succeeded')
  const cs = st.containerStatuses![0]!
  t.equal(cs.state.terminated?.exitCode, 0)
  t.equal(cs.state.terminated?.reason, 'Completed')
  t.equal(cs.restartCount, 0)
  t.equal(st.qosClass, 'BestEffort')
  const log = readFileSync(pods.view.containerLogPath('default', 'hello', 'main', false)!, 'utf8')
  t.match(log, /^\S+ stdout F hello\n\S+ stdout F world\n$/)
  t.same(events, [
    { object: 'Pod/default/hello', fieldPath: 'spec.containers{main}', type: 'Normal', reason: 'Pulled', message: `Container image "${IMAGE}" already present on machine` },
    { object: 'Pod/default/hello', fieldPath: 'spec.containers{main}', type: 'Normal', reason: 'Created', message: 'Created container main' },
    { object: 'Pod/default/hello', fieldPath: 'spec.containers{main}', type: 'Normal', reason: 'Started', message: 'Started container main' }
  ], 'the kubelet\'s container events, in order')
})

t.test('restarts a failing container under restartPolicy Always with back-off, keeping its last state', async t => {
  const { pods, events } = await setup(t)
  const p = pod('crash', [tool('main', 'exit', '3')])
  pods.sink.set('file', [p])
  const st = await until(pods, p, s => (s.containerStatuses?.[0]?.restartCount ?? 0) >= 2 && s.containerStatuses?.[0]?.state.waiting?.reason === 'CrashLoopBackOff')
  const cs = st.containerStatuses![0]!
  t.equal(st.phase, 'Running', 'a pod that keeps restarting stays Running')
  t.equal(cs.lastState.terminated?.exitCode, 3)
  t.equal(cs.lastState.terminated?.reason, 'Error')
  t.ok(pods.view.containerLogPath('default', 'crash', 'main', true), 'the previous attempt has a log')
  const backoff = events.find(e => e.reason === 'BackOff')
  t.equal(backoff?.type, 'Warning')
  t.equal(backoff?.message, `Back-off restarting failed container main in pod crash_default(${p.metadata.uid})`)
})

t.test('fails a pod under restartPolicy Never when a container exits non-zero', async t => {
  const { pods } = await setup(t)
  const p = pod('fail', [tool('main', 'exit', '2')], { restartPolicy: 'Never' })
  pods.sink.set('file', [p])
  const st = await until(pods, p, s => s.phase === 'Failed')
  t.equal(st.containerStatuses![0]!.state.terminated?.exitCode, 2)
})

t.test('runs init containers in order before the containers, sharing an emptyDir', async t => {
  const { pods } = await setup(t)
  const p = pod('init', [{ ...tool('main', 'cat', '/work/greeting'), volumeMounts: [{ name: 'work', mountPath: '/work' }] }], {
    restartPolicy: 'Never',
    volumes: [{ name: 'work', emptyDir: {} }],
    initContainers: [{ ...tool('setup', 'write', '/work/greeting', 'from-init'), volumeMounts: [{ name: 'work', mountPath: '/work' }] }]
  })
  pods.sink.set('file', [p])
  const st = await until(pods, p, s => s.phase === 'Succeeded')
  t.equal(st.initContainerStatuses![0]!.state.terminated?.exitCode, 0)
  t.equal(st.conditions!.find(c => c.type === 'Initialized')?.status, 'True')
  t.match(readFileSync(pods.view.containerLogPath('default', 'init', 'main', false)!, 'utf8'), /stdout F from-init/)
})

t.test('passes env with $(VAR) expansion and mounts a hostPath volume', async t => {
  const { pods, root } = await setup(t)
  const host = join(root, 'host-data')
  mkdirSync(host)
  writeFileSync(join(host, 'note'), 'on-the-host')
  const p = pod('env', [
    { ...tool('env', 'env', 'GREETING'), env: [{ name: 'WHO', value: 'world' }, { name: 'GREETING', value: 'hello-$(WHO)' }] },
    { ...tool('files', 'cat', '/data/note'), volumeMounts: [{ name: 'data', mountPath: '/data', readOnly: true }] }
  ], { restartPolicy: 'Never', volumes: [{ name: 'data', hostPath: { path: host, type: 'Directory' } }] })
  pods.sink.set('file', [p])
  await until(pods, p, s => s.phase === 'Succeeded')
  t.match(readFileSync(pods.view.containerLogPath('default', 'env', 'env', false)!, 'utf8'), /stdout F hello-world/)
  t.match(readFileSync(pods.view.containerLogPath('default', 'env', 'files', false)!, 'utf8'), /stdout F on-the-host/)
})

t.test('reports a container that outgrows its memory limit as OOMKilled with exit code 137', async t => {
  const { pods } = await setup(t)
  const p = pod('hog', [{ ...tool('main', 'grow', '64'), resources: { limits: { memory: '16Mi' } } }], { restartPolicy: 'Never' })
  pods.sink.set('file', [p])
  const st = await until(pods, p, s => s.phase === 'Failed')
  const term = st.containerStatuses![0]!.state.terminated!
  t.equal(term.reason, 'OOMKilled')
  t.equal(term.exitCode, 137)
  t.equal(st.qosClass, 'Burstable')
})

t.test('stops a running pod when its source drops it', async t => {
  const { pods, events } = await setup(t)
  const p = pod('spinner', [tool('main', 'spin')])
  pods.sink.set('file', [p])
  await until(pods, p, s => s.containerStatuses?.[0]?.state.running !== undefined)
  t.equal(st(pods, p)?.phase, 'Running')
  pods.sink.set('file', [])
  await pods.idle()
  t.notOk(pods.workers().has(p.metadata.uid), 'the pod is gone')
  t.same(events.filter(e => e.reason === 'Killing').map(e => e.message), ['Stopping container main'])
})

function st (pods: PodManager, p: Pod): PodStatus | undefined { return pods.workers().get(p.metadata.uid)?.status() }

t.test('admits at most --max-pods pods', async t => {
  const { pods } = await setup(t, 1)
  const a = pod('a', [tool('main', 'spin')])
  const b = pod('b', [tool('main', 'spin')])
  pods.sink.set('file', [a, b])
  t.ok(pods.workers().has(a.metadata.uid))
  t.notOk(pods.workers().has(b.metadata.uid), 'the second pod was rejected')
})

t.test('waits with CreateContainerConfigError when a container mounts a missing volume', async t => {
  const { pods } = await setup(t)
  const p = pod('bad', [{ ...tool('main', 'echo', 'x'), volumeMounts: [{ name: 'nope', mountPath: '/x' }] }], { restartPolicy: 'Never' })
  pods.sink.set('file', [p])
  const s = await until(pods, p, s => s.containerStatuses?.[0]?.state.waiting?.reason === 'CreateContainerConfigError')
  t.match(s.containerStatuses![0]!.state.waiting!.message!, /volume "nope"/)
  t.equal(s.phase, 'Pending')
})

t.test('waits with ErrImageNeverPull when the image is absent and the policy is Never', async t => {
  const { pods, events } = await setup(t)
  const p = pod('noimg', [{ ...tool('main', 'echo'), image: 'localhost/absent:1', imagePullPolicy: 'Never' }])
  pods.sink.set('file', [p])
  const s = await until(pods, p, s => s.containerStatuses?.[0]?.state.waiting?.reason === 'ErrImageNeverPull')
  t.match(s.containerStatuses![0]!.state.waiting!.message!, /not present with pull policy of Never/)
  t.same(events.slice(0, 2).map(e => [e.type, e.reason, e.message]), [
    ['Warning', 'ErrImageNeverPull', 'Container image "localhost/absent:1" is not present with pull policy of Never'],
    ['Warning', 'Failed', 'Error: ErrImageNeverPull']
  ])
  t.same(reasons(events, 'Pod/default/noimg').filter(r => r === 'Created'), [], 'no container was created')
})

t.test('a readiness probe gates the Ready condition', async t => {
  const { pods } = await setup(t)
  let code = 500
  const { createServer } = await import('node:http')
  const server = createServer((_req, res) => { res.writeHead(code); res.end() })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => server.close())
  const port = (server.address() as { port: number }).port
  const p = pod('ready', [{ ...tool('main', 'spin'), readinessProbe: { httpGet: { port }, periodSeconds: 1 } }])
  pods.sink.set('file', [p])
  const notReady = await until(pods, p, s => s.containerStatuses?.[0]?.state.running !== undefined)
  t.equal(notReady.conditions!.find(c => c.type === 'Ready')?.status, 'False')
  code = 200
  const ready = await until(pods, p, s => s.conditions!.find(c => c.type === 'Ready')?.status === 'True')
  t.equal(ready.containerStatuses![0]!.ready, true)
})

t.test('a failing liveness probe restarts the container', async t => {
  const { pods, events } = await setup(t)
  const p = pod('live', [{ ...tool('main', 'spin'), livenessProbe: { tcpSocket: { port: 1 }, periodSeconds: 1, failureThreshold: 1 } }])
  pods.sink.set('file', [p])
  const st = await until(pods, p, s => (s.containerStatuses?.[0]?.restartCount ?? 0) >= 1, 15_000)
  t.ok(st.containerStatuses![0]!.lastState.terminated, 'the killed attempt is the last state')
  const unhealthy = events.find(e => e.reason === 'Unhealthy')
  t.equal(unhealthy?.type, 'Warning')
  t.match(unhealthy?.message, /^Liveness probe failed: dial tcp 127\.0\.0\.1:1: /)
  t.ok(events.some(e => e.reason === 'Killing' && e.message === 'Container main failed liveness probe, will be restarted'), 'the kill is recorded')
})

t.test('a volume that cannot be set up records FailedMount and keeps the pod Pending', async t => {
  const { pods, events } = await setup(t)
  const p = pod('nomount', [{ ...tool('main', 'echo', 'x'), volumeMounts: [{ name: 'data', mountPath: '/data' }] }], {
    restartPolicy: 'Never', volumes: [{ name: 'data', hostPath: { path: '/nonexistent/orch-test-dir', type: 'Directory' } }]
  })
  pods.sink.set('file', [p])
  await until(pods, p, s => s.message !== undefined)
  t.same(events.filter(e => e.reason === 'FailedMount').map(e => [e.object, e.fieldPath, e.type, e.message]), [
    ['Pod/default/nomount', undefined, 'Warning', 'MountVolume.SetUp failed for volume "data" : hostPath type check failed: /nonexistent/orch-test-dir is not a directory']
  ], 'recorded once while the error stays the same')
  t.equal(st(pods, p)?.phase, 'Pending')
})

t.test('a container printing periodically (tool tick) logs lines as time passes and stops on delete', async t => {
  const { pods } = await setup(t)
  const p = pod('ticker', [tool('main', 'tick', '100')])
  pods.sink.set('file', [p])
  await until(pods, p, s => s.containerStatuses?.[0]?.state.running !== undefined)
  const lines = async (): Promise<string[]> => {
    const path = pods.view.containerLogPath('default', 'ticker', 'main', false)!
    try { return readFileSync(path, 'utf8').split('\n').filter(l => l !== '').map(l => l.replace(/^\S+ stdout F /, '')) } catch { return [] }
  }
  const deadline = Date.now() + 8000
  while ((await lines()).length < 3 && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 50))
  t.same((await lines()).slice(0, 3), ['tick 1', 'tick 2', 'tick 3'])
  pods.sink.set('file', [])
  await pods.idle()
  t.notOk(pods.workers().has(p.metadata.uid), 'the sleeping container stopped')
})
