// The pod lifecycle through the CRI client against real containerd (started by .ci/containerd.sh).
import t, { type Test } from 'tap'
import { readFileSync } from 'node:fs'
import { randomUUID } from 'node:crypto'
import { createCriRuntime } from '../runtime/cri/cri-runtime.js'
import { busyboxImage, ensureContainerd } from '../runtime/cri/containerd-for-tests.js'
import type { ContainerRuntime } from '../runtime/runtime.js'
import type { PodManager } from './pod-manager.js'
import { testPodManager, waitForStatus } from './testing.js'
import type { Pod, PodStatus } from './pod-types.js'

const env = await ensureContainerd()

async function setup (t: Test, endpoint: string): Promise<{ pods: PodManager; runtime: ContainerRuntime }> {
  const runtime = createCriRuntime({ runtimeEndpoint: endpoint, requestTimeoutMs: 30_000, name: 'containerd' })
  t.teardown(async () => { await runtime.close() })
  return { pods: testPodManager(t, { runtime, relistMs: 100 }).pods, runtime }
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
    const { pods } = await setup(t, endpoint)
    const p = busybox('probed', 'touch /healthy; sleep 2; rm /healthy; sleep 3600', 'Always')
    p.spec.containers[0]!.livenessProbe = { exec: { command: ['cat', '/healthy'] }, periodSeconds: 1, failureThreshold: 1 }
    p.spec.containers[0]!.readinessProbe = { exec: { command: ['true'] }, periodSeconds: 1 }
    pods.sink.set('file', [p])
    const ready = await until(pods, p, s => s.containerStatuses?.[0]?.ready === true)
    t.equal(ready.containerStatuses![0]!.restartCount, 0, 'ready through an exec readiness probe')
    const restarted = await until(pods, p, s => (s.containerStatuses?.[0]?.restartCount ?? 0) >= 1, 30_000)
    t.ok(restarted.containerStatuses![0]!.lastState.terminated, 'the killed attempt is the last state')
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
}
