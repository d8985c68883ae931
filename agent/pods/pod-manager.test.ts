// The pod lifecycle against the real built-in WebAssembly runtime (no API server: standalone mode).
import t, { type Test } from 'tap'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomUUID } from 'node:crypto'
import { createWasmRuntime, type WasmRuntime } from '../runtime/wasm/runtime.js'
import { compileFixture } from '../runtime/wasm/fixtures/compile.js'
import { buildWasmImageLayout, writeLayoutDir } from '../runtime/oci/layout-writer.js'
import type { PodManager } from './pod-manager.js'
import { detachAll, testPodManager, waitForStatus } from './testing.js'
import type { Container, Pod, PodStatus } from './pod-types.js'
import { createEventRecorder } from '../events/recorder.js'

const IMAGE = 'localhost/orch-test/tool:1'

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
  t.match(cs.state.waiting?.message, new RegExp(`^back-off (300ms|600ms|1\\.2s) restarting failed container=main pod=crash_default\\(${p.metadata.uid}\\)$`), 'the kubelet\'s CrashLoopBackOff message')
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

t.test('admits at most --max-pods pods and records the rejection as the kubelet does', async t => {
  const { pods, events } = await setup(t, 1)
  const a = pod('a', [tool('main', 'spin')])
  const b = pod('b', [tool('main', 'spin')])
  pods.sink.set('file', [a, b])
  t.ok(pods.workers().has(a.metadata.uid))
  t.notOk(pods.workers().has(b.metadata.uid), 'the second pod was rejected')
  t.same(events.filter(e => e.object === 'Pod/default/b').map(e => [e.type, e.reason, e.message]), [
    ['Warning', 'OutOfpods', 'Node didn\'t have enough resource: pods, requested: 1, used: 1, capacity: 1']
  ])
  pods.sink.set('file', [a, b])
  t.equal(events.filter(e => e.reason === 'OutOfpods').length, 1, 'recorded once per pod')
})

t.test('a second pod with the same namespace/name from one source is dropped with FailedValidation', async t => {
  const { pods, events } = await setup(t)
  const first = pod('twin', [tool('main', 'spin')])
  const second = pod('twin', [tool('main', 'echo', 'x')])
  pods.sink.set('file', [first, second])
  t.ok(pods.workers().has(first.metadata.uid), 'the first one runs')
  t.notOk(pods.workers().has(second.metadata.uid), 'the later one is ignored')
  t.same(events.filter(e => e.reason === 'FailedValidation').map(e => [e.object, e.type, e.message]), [
    ['Pod/default/twin', 'Warning', `Error validating pod twin_default(${second.metadata.uid}) from file due to duplicate pod name "twin", ignoring`]
  ])
  pods.sink.set('file', [first, second])
  t.equal(events.filter(e => e.reason === 'FailedValidation').length, 1, 'recorded once while it stays a duplicate')
  const other = pod('twin', [tool('main', 'spin')], {})
  other.metadata.namespace = 'other'
  pods.sink.set('file', [first, other])
  t.ok(pods.workers().has(other.metadata.uid), 'the same name in another namespace is a different pod')
})

t.test('housekeeping removes runtime pods no source wants once every source has reported', async t => {
  const { wasm } = await setup(t)
  const root = mkdtempSync(join(tmpdir(), 'orch-hk-'))
  const quiet = { info () {}, warn () {} }
  const { createPodManager } = await import('./pod-manager.js')
  const { createBackoff } = await import('./backoff.js')
  const { LABEL_POD_UID } = await import('./container-config.js')
  const orphan = await wasm.runtime.runPodSandbox({ metadata: { name: 'gone', namespace: 'default', uid: 'gone-uid', attempt: 0 }, logDirectory: join(root, 'gone'), labels: { [LABEL_POD_UID]: 'gone-uid' }, annotations: {}, hostNetwork: true })
  const pods = createPodManager({
    nodeName: 'node-a', maxPods: 10, runtimeFor: () => wasm, rootDir: root, logsRoot: join(root, 'logs'), hostIP: '127.0.0.1',
    cpuCfsQuota: true, cfsPeriodUs: 100_000, backoff: createBackoff({ initialMs: 300, maxMs: 1200, now: Date.now }), now: Date.now,
    logger: quiet, relistMs: 50, recorder: createEventRecorder({ component: 'orchlet', host: 'node-a', qps: 0, burst: 0, logger: quiet }),
    runtimes: () => [wasm], expectedSources: ['file', 'http']
  })
  t.teardown(async () => { await pods.stopAll(); rmSync(root, { recursive: true, force: true }) })
  const keep = pod('keep', [tool('main', 'spin')])
  pods.sink.set('file', [keep])
  await waitForStatus(pods, keep, s => s.containerStatuses?.[0]?.state.running !== undefined)
  t.same(await pods.housekeeping(), [], 'nothing is removed before every source reported')
  t.ok((await wasm.runtime.listPodSandbox()).some(s => s.id === orphan))
  pods.sink.set('http', [])
  t.same(await pods.housekeeping(), ['gone-uid'])
  const metrics = new Map(pods.metrics().map(f => [f.name, f]))
  const gauge = (name: string) => { const f = metrics.get(name); return f !== undefined && f.type !== 'histogram' ? f.samples : undefined }
  t.same(gauge('orchlet_running_pods'), [{ value: 1 }])
  t.same(gauge('orchlet_running_containers')?.find(s => s.labels?.container_state === 'running'), { labels: { container_state: 'running' }, value: 1 })
  t.same(gauge('orchlet_desired_pods'), [{ labels: { static: '' }, value: 0 }, { labels: { static: 'true' }, value: 1 }])
  const hk = metrics.get('orchlet_housekeeping_duration_seconds')
  t.equal(hk?.type === 'histogram' ? hk.histogram.count : -1, 1, 'one housekeeping pass ran (the first was skipped: a source had not reported)')
  const left = await wasm.runtime.listPodSandbox()
  t.notOk(left.some(s => s.id === orphan), 'the orphan sandbox is gone')
  t.ok(left.some(s => s.labels[LABEL_POD_UID] === keep.metadata.uid), 'the wanted pod keeps its sandbox')
  t.equal(pods.workers().get(keep.metadata.uid)?.status()?.phase, 'Running')
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
  await new Promise(resolve => setTimeout(resolve, 1500))
  const tries = events.filter(e => e.reason === 'ErrImageNeverPull').length
  // Back-off 300ms doubling: tries at about 0s, 0.3s, 0.9s (a 50ms relist without back-off would make ~30).
  t.ok(tries >= 2 && tries <= 4, `retried after its back-off, not every relist (${tries} tries in 1.5s)`)
})

t.test('a failed pull waits in ImagePullBackOff with the kubelet\'s back-off message', async t => {
  const { pods, events } = await setup(t)
  const image = '127.0.0.1:1/absent/tool:1'
  const p = pod('nopull', [{ ...tool('main', 'echo'), image, imagePullPolicy: 'Always' }])
  pods.sink.set('file', [p])
  const s = await until(pods, p, s => s.containerStatuses?.[0]?.state.waiting?.reason === 'ImagePullBackOff')
  t.equal(s.containerStatuses![0]!.state.waiting!.message, `Back-off pulling image "${image}"`)
  t.ok(events.some(e => e.reason === 'BackOff' && e.type === 'Normal' && e.message === `Back-off pulling image "${image}"`), 'the BackOff event')
  t.match(events.find(e => e.reason === 'Failed')?.message, /^Failed to pull image "127\.0\.0\.1:1\/absent\/tool:1": /)
})

t.test('containers wait with PodInitializing while an init container runs', async t => {
  const { pods } = await setup(t)
  const p = pod('initwait', [tool('main', 'echo', 'x')], { initContainers: [tool('setup', 'spin')] })
  pods.sink.set('file', [p])
  const s = await until(pods, p, s => s.initContainerStatuses?.[0]?.state.running !== undefined)
  t.same(s.containerStatuses![0]!.state, { waiting: { reason: 'PodInitializing' } })
  t.equal(s.phase, 'Pending')
  t.equal(pods.view.containerWaiting('default', 'initwait', 'main'), 'PodInitializing', 'kubectl logs says why')
})

t.test('after an orchlet restart the WebAssembly containers start again counting restarts from the log dir, keeping startTime', async t => {
  const dir = mkdtempSync(join(tmpdir(), 'orch-wasm-restart-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const layout = join(dir, 'layout')
  await writeLayoutDir(layout, buildWasmImageLayout({ module: await compileFixture('tool'), refName: IMAGE }))
  const root = join(dir, 'root')
  mkdirSync(root)
  const first = await createWasmRuntime({ rootDir: join(dir, 'wasm-1') })
  await first.images.importImage(layout)
  t.teardown(() => first.close())
  const one = testPodManager(t, { runtime: first, root }).pods
  const p = pod('counter', [tool('main', 'tick', '50')])
  one.sink.set('file', [p])
  const before = await until(one, p, s => s.containerStatuses?.[0]?.state.running !== undefined)
  t.equal(before.containerStatuses![0]!.restartCount, 0)
  const logDir = join(root, 'logs', `default_counter_${p.metadata.uid}`, 'main')
  // The WebAssembly runtime creates an attempt's log at its first output.
  const deadline = Date.now() + 5000
  while (!existsSync(join(logDir, '0.log')) && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 25))
  // The orchlet dies: its workers stop, and the in-process WebAssembly containers die with it.
  detachAll(one)
  await first.close()
  const second = await createWasmRuntime({ rootDir: join(dir, 'wasm-2') })
  await second.images.importImage(layout)
  t.teardown(() => second.close())
  const two = testPodManager(t, { runtime: second, root }).pods
  two.sink.set('file', [{ ...p, status: before }])
  const after = await until(two, p, s => s.containerStatuses?.[0]?.state.running !== undefined)
  t.equal(after.containerStatuses![0]!.restartCount, 1, 'attempt 0.log exists, so this is attempt 1')
  t.equal(after.startTime, before.startTime, 'startTime comes from the pod\'s existing status')
  t.ok(existsSync(join(logDir, '0.log')), 'the first attempt\'s log is kept')
  t.equal(two.view.containerLogPath('default', 'counter', 'main', false), join(logDir, '1.log'))
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

t.test('a new version of a static pod waits until the old one with the same name has stopped', async t => {
  const { pods } = await setup(t)
  const v1 = pod('web', [tool('main', 'spin')])
  v1.metadata.annotations = { 'orch.io/config.source': 'file' }
  pods.sink.set('file', [v1])
  await until(pods, v1, s => s.containerStatuses?.[0]?.state.running !== undefined)
  const v2 = pod('web', [tool('main', 'spin')])
  v2.metadata.annotations = { 'orch.io/config.source': 'file' }
  pods.sink.set('file', [v2])
  t.notOk(pods.workers().has(v2.metadata.uid), 'not started while the old version is still stopping')
  const running = await until(pods, v2, s => s.containerStatuses?.[0]?.state.running !== undefined)
  t.ok(running, 'started once the old version stopped')
  t.notOk(pods.workers().has(v1.metadata.uid), 'the old version is gone')
})
