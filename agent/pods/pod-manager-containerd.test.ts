// The pod lifecycle through the CRI client against real containerd (started by .ci/containerd.sh).
import t, { type Test } from 'tap'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomUUID } from 'node:crypto'
import { createCriRuntime } from '../runtime/cri/cri-runtime.js'
import { busyboxImage, ensureContainerd } from '../runtime/cri/containerd-for-tests.js'
import type { ContainerRuntime } from '../runtime/runtime.js'
import type { PodManager } from './pod-manager.js'
import { detachAll, testPodManager, waitForStatus } from './testing.js'
import { removeOrphanedPods } from './adoption.js'
import { createEventRecorder } from '../events/recorder.js'
import type { Pod, PodStatus } from './pod-types.js'

const env = await ensureContainerd()

/** One recorded event as the standalone recorder logs it, with when it was recorded. */
interface Logged { reason: string; type: string; message: string; at: number }

function criRuntime (t: Test, endpoint: string): ContainerRuntime {
  const runtime = createCriRuntime({ runtimeEndpoint: endpoint, requestTimeoutMs: 30_000, name: 'containerd' })
  t.teardown(async () => { await runtime.close() })
  return runtime
}

function eventLog (): { events: Logged[]; recorder: ReturnType<typeof createEventRecorder> } {
  const events: Logged[] = []
  const recorder = createEventRecorder({ component: 'orchlet', host: 'node-a', qps: 0, burst: 0, logger: { info: (o, m) => events.push({ ...(o as { event: Omit<Logged, 'message' | 'at'> }).event, message: m ?? '', at: Date.now() }), warn () {} } })
  return { events, recorder }
}

async function setup (t: Test, endpoint: string): Promise<{ pods: PodManager; runtime: ContainerRuntime; events: Logged[] }> {
  const runtime = criRuntime(t, endpoint)
  const { events, recorder } = eventLog()
  return { pods: testPodManager(t, { runtime, relistMs: 100, recorder }).pods, runtime, events }
}

function busybox (name: string, script: string, restartPolicy: 'Never' | 'Always' = 'Never'): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', uid: randomUUID() },
    spec: {
      hostNetwork: true,
      restartPolicy,
      terminationGracePeriodSeconds: 1,
      containers: [{ name: 'main', image: busyboxImage, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', script] }]
    }
  }
}

const until = (pods: PodManager, p: Pod, check: (s: PodStatus) => boolean, timeoutMs = 20_000): Promise<PodStatus> => waitForStatus(pods, p, check, timeoutMs)

if (!env.ok) {
  if (!env.skippable) t.fail(`containerd is required (as root or with CI=true): ${env.reason}`)
  else t.comment(`skipping: ${env.reason}`)
} else {
  const endpoint = env.endpoint

  t.test('runs a host-network busybox pod on containerd and reports its exit code and logs', async t => {
    const { pods } = await setup(t, endpoint)
    const p = busybox('exits', 'echo hello from busybox; exit 3')
    pods.sink.set('file', [p])
    const st = await until(pods, p, s => s.phase === 'Failed')
    const term = st.containerStatuses![0]!.state.terminated!
    t.equal(term.exitCode, 3)
    t.match(term.containerID, /^containerd:\/\/[0-9a-f]+$/)
    const log = readFileSync(pods.view.containerLogPath('default', 'exits', 'main', false)!, 'utf8')
    t.match(log, /stdout F hello from busybox/)
  })

  t.test('an exec liveness probe restarts a container whose check starts failing', async t => {
    const { pods, events } = await setup(t, endpoint)
    const p = busybox('probed', 'touch /healthy; sleep 2; rm /healthy; sleep 3600', 'Always')
    p.spec.containers[0]!.livenessProbe = { exec: { command: ['cat', '/healthy'] }, periodSeconds: 1, failureThreshold: 1 }
    p.spec.containers[0]!.readinessProbe = { exec: { command: ['true'] }, periodSeconds: 1 }
    pods.sink.set('file', [p])
    const ready = await until(pods, p, s => s.containerStatuses?.[0]?.ready === true)
    t.equal(ready.containerStatuses![0]!.restartCount, 0, 'ready through an exec readiness probe')
    const restarted = await until(pods, p, s => (s.containerStatuses?.[0]?.restartCount ?? 0) >= 1, 30_000)
    t.ok(restarted.containerStatuses![0]!.lastState.terminated, 'the killed attempt is the last state')
    t.equal(events.find(e => e.reason === 'Unhealthy')?.message, 'Liveness probe failed: cat: can\'t open \'/healthy\': No such file or directory\n', 'the command\'s output')
  })

  t.test('removes the sandbox and containers of a deleted pod from containerd', async t => {
    const { pods, runtime } = await setup(t, endpoint)
    const p = busybox('sleeper', 'trap "exit 0" TERM; sleep 3600 & wait', 'Always')
    pods.sink.set('file', [p])
    await until(pods, p, s => s.containerStatuses?.[0]?.state.running !== undefined)
    const before = await runtime.runtime.listPodSandbox({ labelSelector: { 'io.orch.pod.uid': p.metadata.uid } })
    t.equal(before.length, 1, 'one sandbox while it runs')
    pods.sink.set('file', [])
    await pods.idle()
    const after = await runtime.runtime.listPodSandbox({ labelSelector: { 'io.orch.pod.uid': p.metadata.uid } })
    t.equal(after.length, 0, 'the sandbox is gone')
    const containers = await runtime.runtime.listContainers({ labelSelector: { 'io.orch.pod.uid': p.metadata.uid } })
    t.equal(containers.length, 0, 'the containers are gone')
  })

  const sleeper = 'trap "exit 0" TERM; sleep 3600 & wait'
  const uidLabel = (p: Pod) => ({ labelSelector: { 'io.orch.pod.uid': p.metadata.uid } })

  t.test('a restarted orchlet adopts the running pod, and removeOrphanedPods removes the pods nobody wants', async t => {
    const runtime = criRuntime(t, endpoint)
    const root = mkdtempSync(join(tmpdir(), 'orch-adopt-'))
    t.teardown(() => rmSync(root, { recursive: true, force: true }))
    const one = testPodManager(t, { runtime, root, relistMs: 100 }).pods
    const kept = busybox('kept', sleeper, 'Always')
    const orphan = busybox('orphan', sleeper, 'Always')
    one.sink.set('file', [kept, orphan])
    const before = await until(one, kept, s => s.containerStatuses?.[0]?.state.running !== undefined)
    await until(one, orphan, s => s.containerStatuses?.[0]?.state.running !== undefined)
    detachAll(one) // the orchlet dies; containerd keeps the pods running
    const two = testPodManager(t, { runtime, root, relistMs: 100 }).pods
    two.sink.set('file', [{ ...kept, status: before }])
    const after = await until(two, kept, s => s.containerStatuses?.[0]?.ready === true)
    const cs = after.containerStatuses![0]!
    t.equal(cs.containerID, before.containerStatuses![0]!.containerID, 'the same container')
    t.equal(cs.restartCount, 0)
    t.same(cs.state.running, before.containerStatuses![0]!.state.running, 'running since it first started')
    t.equal(after.startTime, before.startTime)
    t.equal(after.phase, 'Running')
    t.equal((await runtime.runtime.listPodSandbox(uidLabel(kept))).length, 1, 'no new sandbox')
    t.match(readFileSync(two.view.containerLogPath('default', 'kept', 'main', false)!, 'utf8'), '', 'the adopted attempt\'s log path is known')
    // Sandboxes other runs left in the shared containerd are orphans too: only this test's two pods are checked.
    const removed = await removeOrphanedPods(runtime.runtime, new Set([kept.metadata.uid]))
    t.same(removed.filter(uid => uid === orphan.metadata.uid || uid === kept.metadata.uid), [orphan.metadata.uid])
    t.equal((await runtime.runtime.listPodSandbox(uidLabel(orphan))).length, 0, 'the orphan\'s sandbox is gone')
    t.equal((await runtime.runtime.listContainers(uidLabel(orphan))).length, 0, 'the orphan\'s containers are gone')
    t.equal((await runtime.runtime.listContainers(uidLabel(kept))).length, 1, 'the wanted pod is untouched')
    await new Promise(resolve => setTimeout(resolve, 300))
    t.equal(two.workers().get(kept.metadata.uid)?.status()?.containerStatuses?.[0]?.containerID, cs.containerID, 'still the same container')
  })

  t.test('a sandbox that cannot be created records FailedCreatePodSandBox and is retried with back-off', async t => {
    const { pods, runtime, events } = await setup(t, endpoint)
    const p = busybox('nonet', sleeper, 'Always')
    // A runtime handler containerd does not know fails RunPodSandbox (CNI cannot serve: the orchlet configures it).
    p.spec.runtimeClassName = 'no-such-handler'
    pods.sink.set('file', [p])
    const deadline = Date.now() + 15_000
    while (events.filter(e => e.reason === 'FailedCreatePodSandBox').length < 3 && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 50))
    const failed = events.filter(e => e.reason === 'FailedCreatePodSandBox')
    t.ok(failed.length >= 3, 'retried')
    t.equal(failed[0]!.type, 'Warning')
    t.match(failed[0]!.message, /^Failed to create pod sandbox: .*no-such-handler/)
    t.notOk(failed.some(e => /reserved/.test(e.message)), 'each try uses a fresh sandbox name')
    // Back-off 300ms doubling (the relist is 100ms): 300ms, then 600ms between tries.
    t.ok(failed[1]!.at - failed[0]!.at >= 250, `second try after its back-off (${failed[1]!.at - failed[0]!.at}ms)`)
    t.ok(failed[2]!.at - failed[1]!.at >= 550, `third try after a doubled back-off (${failed[2]!.at - failed[1]!.at}ms)`)
    const st = pods.workers().get(p.metadata.uid)!.status()!
    t.equal(st.phase, 'Pending')
    t.equal(st.containerStatuses![0]!.state.waiting?.reason, 'ContainerCreating')
    // Whatever failed sandboxes containerd keeps, each try takes the next attempt.
    const attempts = (await runtime.runtime.listPodSandbox(uidLabel(p))).map(s => s.metadata.attempt)
    t.equal(new Set(attempts).size, attempts.length, `one sandbox per attempt (${attempts.join(' ')})`)
  })

  t.test('reads termination messages from the file a container writes, or from its log with FallbackToLogsOnError', async t => {
    const { pods } = await setup(t, endpoint)
    const p = busybox('said', 'printf "bye now" > /dev/termination-log; exit 2')
    p.spec.containers.push(
      { name: 'custom', image: busyboxImage, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', 'printf "from custom path" > /tmp/message; exit 0'], terminationMessagePath: '/tmp/message' },
      { name: 'logs', image: busyboxImage, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', 'echo first line; echo last words; exit 1'], terminationMessagePolicy: 'FallbackToLogsOnError' },
      { name: 'quiet', image: busyboxImage, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', 'echo not a message; exit 1'] }
    )
    pods.sink.set('file', [p])
    const st = await until(pods, p, s => s.phase === 'Failed')
    const msg = (name: string) => st.containerStatuses!.find(c => c.name === name)!.state.terminated!.message
    t.equal(msg('main'), 'bye now')
    t.equal(msg('custom'), 'from custom path')
    t.equal(msg('logs'), 'first line\nlast words\n')
    t.equal(msg('quiet'), undefined, 'policy File does not read the log')
  })
}
