// Local storage limits for real: WebAssembly pods on a pod manager, their logs and emptyDir volumes measured on disk,
// the node's eviction manager evicting the pod past its limit: Failed, reason Evicted, the kubelet's message.
import t, { type Test } from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { randomUUID } from 'node:crypto'
import { tmpdir } from 'node:os'
import { createWasmRuntime } from '../runtime/wasm/runtime.js'
import { compileFixture } from '../runtime/wasm/fixtures/compile.js'
import { buildWasmImageLayout, writeLayoutDir } from '../runtime/oci/layout-writer.js'
import { testPodManager, waitForStatus } from '../pods/testing.js'
import { podVolumeDir } from '../pods/volumes.js'
import type { Container, Pod, PodStatus, Volume } from '../pods/pod-types.js'
import { createEventRecorder } from '../events/recorder.js'
import { loadOrchletConfig } from '../config/load.js'
import type { PodManager } from '../pods/pod-manager.js'
import { createNodeEviction } from './node-eviction.js'

const IMAGE = 'localhost/orch-test/tool:1'
const quiet = { info () {}, warn () {} }
const Ki = 1024

const dir = mkdtempSync(join(tmpdir(), 'orch-local-storage-'))
const wasm = await createWasmRuntime({ rootDir: join(dir, 'wasm') })
t.teardown(async () => { await wasm.close(); rmSync(dir, { recursive: true, force: true }) })
await writeLayoutDir(join(dir, 'layout'), buildWasmImageLayout({ module: await compileFixture('tool'), refName: IMAGE }))
await wasm.images.importImage(join(dir, 'layout'))

async function node (t: Test, argv: string[] = []): Promise<{ pods: PodManager, root: string, evictUntil: (p: Pod) => Promise<PodStatus>, signals: string[] }> {
  // The statuses the pod manager posts (as to the API server): an evicted pod's last status.
  const posted = new Map<string, PodStatus>()
  const statusManager = { set: (p: Pod, s: PodStatus) => { posted.set(p.metadata.uid, s) }, podRemoved: async () => {}, deleteOrphanedMirror: async () => {}, flush: async () => {} }
  const { pods, root } = testPodManager(t, { runtime: wasm, statusManager })
  // A hard threshold no node meets: only the pods' own limits evict here.
  const config = await loadOrchletConfig(['--root-dir', root, '--eviction-hard', 'memory.available<1', ...argv], {}, { logger: { warn () {} } })
  const signals: string[] = []
  const eviction = createNodeEviction({
    config, allocatableMemoryBytes: 1 << 40, now: Date.now,
    statsSummary: pods.view.statsSummary as () => Promise<{ pods: Array<Record<string, unknown>> }>,
    pods, recorder: createEventRecorder({ component: 'orchlet', host: 'node-a', qps: 0, burst: 0, logger: quiet }), logger: quiet,
    onEvicted: s => signals.push(s)
  })
  const evictUntil = async (p: Pod): Promise<PodStatus> => {
    const deadline = Date.now() + 30_000
    while (Date.now() < deadline) {
      await eviction.synchronize()
      const st = posted.get(p.metadata.uid)
      if (st?.phase === 'Failed') return st
      await new Promise(resolve => setTimeout(resolve, 250))
    }
    throw new Error(`not evicted: ${JSON.stringify(posted.get(p.metadata.uid))}`)
  }
  return { pods, root, evictUntil, signals }
}

function pod (name: string, containers: Array<Partial<Container> & { name: string }>, volumes: Volume[] = []): Pod {
  return {
    apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default', uid: randomUUID() },
    spec: { runtimeClassName: 'wasm', terminationGracePeriodSeconds: 1, volumes, containers: containers.map(c => ({ image: IMAGE, imagePullPolicy: 'IfNotPresent', command: ['tool', 'spin'], ...c })) }
  }
}

t.test('a container whose logs pass its ephemeral-storage limit is evicted with the kubelet\'s message', async t => {
  const { pods, evictUntil, signals } = await node(t)
  // The quiet sidecar's large limit keeps the pod's total within the sum of limits: the container's own limit is what is passed.
  const p = pod('chatty', [{ name: 'app', command: ['tool', 'tick', '1'], resources: { limits: { 'ephemeral-storage': '16Ki' } } },
    { name: 'side', resources: { limits: { 'ephemeral-storage': '1Mi' } } }])
  pods.sink.set('file', [p])
  await waitForStatus(pods, p, s => (s.containerStatuses ?? []).length === 2 && s.containerStatuses!.every(c => c.state.running !== undefined))
  const st = await evictUntil(p)
  t.equal(st.reason, 'Evicted')
  t.equal(st.message, 'Container app exceeded its local ephemeral storage limit "16Ki". ')
  t.notOk(st.conditions?.some(c => c.type === 'DisruptionTarget'), 'no DisruptionTarget condition, as the kubelet sets none for these')
  t.same(signals, ['ephemeralcontainerfs.limit'])
})

t.test('an emptyDir walked past its sizeLimit: the Summary API shows its usage and the pod is evicted', async t => {
  const { pods, root, evictUntil } = await node(t)
  const cache: Volume = { name: 'cache', emptyDir: { sizeLimit: '64Ki' } }
  const p = pod('filler', [{ name: 'app', volumeMounts: [{ name: 'cache', mountPath: '/cache' }] }], [cache])
  pods.sink.set('file', [p])
  await waitForStatus(pods, p, s => s.containerStatuses?.[0]?.state.running !== undefined)
  writeFileSync(join(podVolumeDir(root, p.metadata.uid, cache)!, 'blob'), Buffer.alloc(200 * Ki, 1))
  const summary = await pods.view.statsSummary() as { pods: Array<Record<string, any>> }
  const used = summary.pods[0]!.volume.find((v: { name: string }) => v.name === 'cache').usedBytes
  t.ok(used >= 200 * Ki, `the volume's usage is measured on disk (${used})`)
  t.ok(summary.pods[0]!['ephemeral-storage'].usedBytes >= used, 'and counted in the pod\'s ephemeral storage')
  const st = await evictUntil(p)
  t.equal(st.message, 'Usage of EmptyDir volume "cache" exceeds the limit "64Ki". ')
})

t.test('a pod whose total use passes the sum of its containers\' limits is evicted', async t => {
  const { pods, root, evictUntil } = await node(t)
  const scratch: Volume = { name: 'scratch', emptyDir: {} }
  const limits = { limits: { 'ephemeral-storage': '32Ki' } }
  const p = pod('total', [{ name: 'a', resources: limits, volumeMounts: [{ name: 'scratch', mountPath: '/s' }] }, { name: 'b', resources: limits }], [scratch])
  pods.sink.set('file', [p])
  await waitForStatus(pods, p, s => (s.containerStatuses ?? []).length === 2 && s.containerStatuses!.every(c => c.state.running !== undefined))
  writeFileSync(join(podVolumeDir(root, p.metadata.uid, scratch)!, 'blob'), Buffer.alloc(100 * Ki, 1))
  const st = await evictUntil(p)
  t.equal(st.message, 'Pod ephemeral local storage usage exceeds the total limit of containers 64Ki. ')
})

t.test('localStorageCapacityIsolation: false leaves a pod past its limits running', async t => {
  const { pods, root } = await node(t)
  writeFileSync(join(dir, 'off.yaml'), 'apiVersion: orchlet.config.orch.io/v1beta1\nkind: OrchletConfiguration\nlocalStorageCapacityIsolation: false\n')
  const config = await loadOrchletConfig(['--root-dir', root, '--eviction-hard', 'memory.available<1', '--config', join(dir, 'off.yaml')], {}, { logger: { warn () {} } })
  const eviction = createNodeEviction({
    config, allocatableMemoryBytes: 1 << 40, now: Date.now,
    statsSummary: pods.view.statsSummary as () => Promise<{ pods: Array<Record<string, unknown>> }>,
    pods, recorder: createEventRecorder({ component: 'orchlet', host: 'node-a', qps: 0, burst: 0, logger: quiet }), logger: quiet
  })
  const cache: Volume = { name: 'cache', emptyDir: { sizeLimit: '4Ki' } }
  const p = pod('kept', [{ name: 'app' }], [cache])
  pods.sink.set('file', [p])
  await waitForStatus(pods, p, s => s.containerStatuses?.[0]?.state.running !== undefined)
  writeFileSync(join(podVolumeDir(root, p.metadata.uid, cache)!, 'blob'), Buffer.alloc(100 * Ki, 1))
  t.same(await eviction.synchronize(), [])
  t.equal(pods.workers().get(p.metadata.uid)?.status()?.phase, 'Running')
})
