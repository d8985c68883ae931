// Local storage limits with containerd: a container's writable layer (CRI ContainerStats writable_layer) counts against
// its ephemeral-storage limit; the pod is evicted with the kubelet's message.
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { createCriRuntime } from '../runtime/cri/cri-runtime.js'
import { busyboxImage, ensureContainerd } from '../runtime/cri/containerd-for-tests.js'
import { testPodManager, waitForStatus } from '../pods/testing.js'
import type { Pod, PodStatus } from '../pods/pod-types.js'
import { createEventRecorder } from '../events/recorder.js'
import { loadOrchletConfig } from '../config/load.js'
import { createNodeEviction } from './node-eviction.js'

const env = await ensureContainerd()
const quiet = { info () {}, warn () {} }

if (!env.ok) {
  if (!env.skippable) t.fail(`containerd is required (as root or with CI=true): ${env.reason}`)
  else t.comment(`skipping: ${env.reason}`)
} else {
  const endpoint = env.endpoint
  t.test('a container writing 2Mi into its own filesystem passes a 1Mi limit and is evicted', async t => {
    const runtime = createCriRuntime({ runtimeEndpoint: endpoint, requestTimeoutMs: 30_000, name: 'containerd' })
    t.teardown(async () => { await runtime.close() })
    const posted = new Map<string, PodStatus>()
    const statusManager = { set: (p: Pod, s: PodStatus) => { posted.set(p.metadata.uid, s) }, podRemoved: async () => {}, deleteOrphanedMirror: async () => {}, flush: async () => {} }
    const { pods, root } = testPodManager(t, { runtime, relistMs: 100, statusManager })
    const config = await loadOrchletConfig(['--root-dir', root, '--eviction-hard', 'memory.available<1'], {}, { logger: { warn () {} } })
    const eviction = createNodeEviction({
      config, allocatableMemoryBytes: 1 << 40, now: Date.now,
      statsSummary: pods.view.statsSummary as () => Promise<{ pods: Array<Record<string, unknown>> }>,
      pods, recorder: createEventRecorder({ component: 'orchlet', host: 'node-a', qps: 0, burst: 0, logger: quiet }), logger: quiet
    })
    const container = (name: string, script: string, limit: string): Pod['spec']['containers'][number] =>
      ({ name, image: busyboxImage, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', script], resources: { limits: { 'ephemeral-storage': limit } } })
    const p: Pod = {
      apiVersion: 'v1', kind: 'Pod', metadata: { name: 'writer', namespace: 'default', uid: randomUUID() },
      spec: {
        hostNetwork: true, restartPolicy: 'Never', terminationGracePeriodSeconds: 1,
        // The idle container's room keeps the pod's total within the sum of limits: the writer's own limit is what is passed.
        containers: [container('writer', 'dd if=/dev/zero of=/blob bs=1024 count=2048 2>/dev/null; sleep 3600', '1Mi'), container('idle', 'sleep 3600', '100Mi')]
      }
    }
    pods.sink.set('file', [p])
    await waitForStatus(pods, p, s => (s.containerStatuses ?? []).length === 2 && s.containerStatuses!.every(c => c.state.running !== undefined), 60_000)
    // containerd refreshes its snapshots' usage periodically (10 s by default): the writable layer shows after that.
    const deadline = Date.now() + 60_000
    let st: PodStatus | undefined
    while (Date.now() < deadline && st?.phase !== 'Failed') {
      await eviction.synchronize()
      st = posted.get(p.metadata.uid)
      await new Promise(resolve => setTimeout(resolve, 500))
    }
    t.equal(st?.phase, 'Failed', JSON.stringify(await pods.view.statsSummary()))
    t.equal(st?.reason, 'Evicted')
    t.equal(st?.message, 'Container writer exceeded its local ephemeral storage limit "1Mi". ')
  })
}
