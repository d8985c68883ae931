import t from 'tap'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomUUID } from 'node:crypto'
import { createWasmRuntime } from '../runtime/wasm/runtime.js'
import { compileFixture } from '../runtime/wasm/fixtures/compile.js'
import { buildWasmImageLayout, writeLayoutDir } from '../runtime/oci/layout-writer.js'
import type { RuntimeService } from '../runtime/runtime.js'
import { containerConfig, sandboxConfig } from './container-config.js'
import { adoptPod, removeOrphanedPods, restartCountFromLogDir } from './adoption.js'
import type { Pod } from './pod-types.js'

const IMAGE = 'localhost/orch-test/tool:1'
const dir = mkdtempSync(join(tmpdir(), 'orch-adopt-unit-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))
const wasm = await createWasmRuntime({ rootDir: join(dir, 'wasm') })
await writeLayoutDir(join(dir, 'layout'), buildWasmImageLayout({ module: await compileFixture('tool'), refName: IMAGE }))
await wasm.images.importImage(join(dir, 'layout'))
t.teardown(() => wasm.close())
const rt: RuntimeService = wasm.runtime

function pod (name: string): Pod {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default', uid: randomUUID() }, spec: { runtimeClassName: 'wasm', containers: [{ name: 'main', image: IMAGE }] } }
}

async function sandbox (p: Pod, attempt: number): Promise<string> {
  return await rt.runPodSandbox(sandboxConfig(p, join(dir, 'logs'), attempt), 'wasm')
}

/** Runs one attempt of `main` in the sandbox; resolves once it is running (spin) or has exited. */
async function attempt (p: Pod, sandboxId: string, n: number, argv: string[]): Promise<string> {
  const cfg = await containerConfig({ pod: p, container: { name: 'main', image: IMAGE, command: ['tool', ...argv] }, attempt: n, volumes: new Map(), hostIP: '127.0.0.1', cpuCfsQuota: false, cfsPeriodUs: 100_000 })
  const id = await rt.createContainer(sandboxId, cfg, sandboxConfig(p, join(dir, 'logs'), 0))
  await rt.startContainer(id)
  const deadline = Date.now() + 5000
  while ((await rt.containerStatus(id)).state !== (argv[0] === 'spin' ? 'CONTAINER_RUNNING' : 'CONTAINER_EXITED') && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 20))
  return id
}

t.test('counts attempts from the highest <attempt>.log in the container log dir', async t => {
  const logs = join(dir, 'count')
  t.equal(restartCountFromLogDir(logs), 0, 'no dir yet')
  mkdirSync(logs)
  t.equal(restartCountFromLogDir(logs), 0, 'empty dir')
  for (const f of ['0.log', '3.log', '10.log.tmp', 'notes']) writeFileSync(join(logs, f), '')
  t.equal(restartCountFromLogDir(logs), 4)
})

t.test('adopts the READY sandbox and the latest two attempts, removing stale sandboxes and older attempts', async t => {
  const p = pod('adoptme')
  const stale = await sandbox(p, 0)
  await rt.stopPodSandbox(stale)
  const ready = await sandbox(p, 1)
  const first = await attempt(p, ready, 0, ['exit', '1'])
  const second = await attempt(p, ready, 1, ['exit', '2'])
  const third = await attempt(p, ready, 2, ['spin'])
  const a = await adoptPod(rt, p.metadata.uid)
  t.equal(a.sandbox?.id, ready)
  t.equal(a.nextSandboxAttempt, 2, 'one past the highest sandbox attempt')
  const main = a.containers.get('main')!
  t.equal(main.latest.id, third)
  t.equal(main.latest.state, 'CONTAINER_RUNNING')
  t.equal(main.previous?.id, second)
  t.equal(main.previous?.exitCode, 2)
  t.same((await rt.listPodSandbox({ labelSelector: { 'io.orch.pod.uid': p.metadata.uid } })).map(s => s.id), [ready], 'the NOTREADY sandbox is removed')
  const ids = (await rt.listContainers({ podSandboxId: ready })).map(c => c.id)
  t.notOk(ids.includes(first), 'the oldest attempt is removed')
  t.equal(ids.length, 2)
})

t.test('a pod with nothing in the runtime adopts nothing and starts at attempt 0', async t => {
  const a = await adoptPod(rt, randomUUID())
  t.same(a, { nextSandboxAttempt: 0, containers: new Map() })
})

t.test('removeOrphanedPods removes the sandboxes and containers of pods not desired, and only those', async t => {
  const wanted = pod('wanted')
  const orphan = pod('orphan')
  const w = await sandbox(wanted, 0)
  await attempt(wanted, w, 0, ['spin'])
  const o = await sandbox(orphan, 0)
  await attempt(orphan, o, 0, ['spin'])
  const keep = new Set((await rt.listPodSandbox()).map(s => s.labels['io.orch.pod.uid']!).filter(uid => uid !== orphan.metadata.uid))
  t.same(await removeOrphanedPods(rt, keep), [orphan.metadata.uid])
  t.same(await rt.listPodSandbox({ labelSelector: { 'io.orch.pod.uid': orphan.metadata.uid } }), [])
  t.same(await rt.listContainers({ labelSelector: { 'io.orch.pod.uid': orphan.metadata.uid } }), [])
  t.equal((await rt.listContainers({ podSandboxId: w })).length, 1, 'the wanted pod keeps its container')
})
