// Node shutdown through the pod manager on the real WebAssembly runtime: what the runtime is asked, in which order.
import t, { type Test } from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomUUID } from 'node:crypto'
import { createWasmRuntime } from '../runtime/wasm/runtime.js'
import { compileFixture } from '../runtime/wasm/fixtures/compile.js'
import { buildWasmImageLayout, writeLayoutDir } from '../runtime/oci/layout-writer.js'
import type { ContainerRuntime, RuntimeService } from '../runtime/runtime.js'
import { systemControllerClock } from '../../apiserver/controllers/clock.js'
import { shutdownBands, shutdownPods, SYSTEM_CRITICAL_PRIORITY } from './node-shutdown.js'
import { testPodManager, waitForStatus } from './testing.js'
import type { Pod } from './pod-types.js'
import { LABEL_POD_NAME } from './container-config.js'

const IMAGE = 'localhost/orch-test/tool:1'
const quiet = { info () {}, warn () {} }

/** The real runtime, with its stop calls written down as they are made (sandbox and container ids named by pod). */
async function recordingRuntime (t: Test): Promise<{ runtime: ContainerRuntime, calls: string[], running: (id: string) => Promise<boolean> }> {
  const dir = mkdtempSync(join(tmpdir(), 'orch-wasm-shutdown-'))
  const wasm = await createWasmRuntime({ rootDir: join(dir, 'wasm') })
  await writeLayoutDir(join(dir, 'layout'), buildWasmImageLayout({ module: await compileFixture('tool'), refName: IMAGE }))
  await wasm.images.importImage(join(dir, 'layout'))
  t.teardown(async () => { await wasm.close(); rmSync(dir, { recursive: true, force: true }) })
  const calls: string[] = []
  const podOfContainer = async (id: string): Promise<string> => (await wasm.runtime.containerStatus(id)).labels[LABEL_POD_NAME] ?? id
  const podOfSandbox = async (id: string): Promise<string> => (await wasm.runtime.podSandboxStatus(id)).metadata.name
  const recorded: RuntimeService = Object.create(wasm.runtime) as RuntimeService
  recorded.stopContainer = async (id, timeout) => { calls.push(`stopContainer ${await podOfContainer(id)} ${timeout}`); await wasm.runtime.stopContainer(id, timeout) }
  recorded.stopPodSandbox = async id => { calls.push(`stopPodSandbox ${await podOfSandbox(id)}`); await wasm.runtime.stopPodSandbox(id) }
  const running = async (id: string): Promise<boolean> => (await wasm.runtime.containerStatus(id)).state === 'CONTAINER_RUNNING'
  return { runtime: { ...wasm, runtime: recorded }, calls, running }
}

function spinner (name: string, spec: Partial<Pod['spec']> = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', uid: randomUUID() },
    spec: { containers: [{ name: 'main', image: IMAGE, imagePullPolicy: 'IfNotPresent', command: ['tool', 'spin'] }], runtimeClassName: 'wasm', ...spec }
  }
}

t.test('each pod gets StopContainer with its computed timeout, then StopPodSandbox; critical pods after the others; finished pods are left alone', async t => {
  const { runtime, calls } = await recordingRuntime(t)
  const { pods } = testPodManager(t, { runtime, relistMs: 50 })
  const regular = spinner('regular', { terminationGracePeriodSeconds: 600 })
  const critical = spinner('critical', { priority: SYSTEM_CRITICAL_PRIORITY, terminationGracePeriodSeconds: 600 })
  const done = spinner('done', { restartPolicy: 'Never', containers: [{ name: 'main', image: IMAGE, imagePullPolicy: 'IfNotPresent', command: ['tool', 'echo', 'bye'] }] })
  pods.sink.set('file', [critical, regular, done])
  for (const p of [regular, critical]) await waitForStatus(pods, p, s => s.phase === 'Running')
  await waitForStatus(pods, done, s => s.phase === 'Succeeded')
  const bands = shutdownBands({ shutdownGracePeriod: 3_000, shutdownGracePeriodCriticalPods: 1_000, shutdownGracePeriodByPodPriority: [] })
  await shutdownPods(pods, { bands, diesWithProcess: () => false, clock: systemControllerClock, logger: quiet })
  t.same(calls, ['stopContainer regular 2', 'stopPodSandbox regular', 'stopContainer critical 1', 'stopPodSandbox critical'])
  t.same([...pods.workers().keys()], [done.metadata.uid], 'only the finished pod is still held')
})

t.test('with the shutdown off, pods of a runtime that outlives the orchlet keep running', async t => {
  const { runtime, calls, running } = await recordingRuntime(t)
  const { pods } = testPodManager(t, { runtime, relistMs: 50 })
  const p = spinner('outlives', { terminationGracePeriodSeconds: 5 })
  pods.sink.set('file', [p])
  const st = await waitForStatus(pods, p, s => s.phase === 'Running')
  await shutdownPods(pods, { bands: [], diesWithProcess: () => false, clock: systemControllerClock, logger: quiet })
  t.same(calls, [], 'nothing stopped')
  t.equal(await running(st.containerStatuses![0]!.containerID!.replace(/^wasm:\/\//, '')), true, 'the container still runs')
  pods.sink.set('file', [])
  t.equal(pods.workers().get(p.metadata.uid)?.pod().metadata.name, 'outlives', 'sources are no longer heard once shut down')
})
