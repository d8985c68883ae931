// Dead-container GC on the real WebAssembly runtime: the newest dead instances per container are kept for live pods,
// every dead container of a gone pod is removed, running containers are never touched.
import t from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { compileFixture } from '../runtime/wasm/fixtures/compile.js'
import { buildWasmImageLayout, layoutTar } from '../runtime/oci/layout-writer.js'
import { createWasmRuntime } from '../runtime/wasm/runtime.js'
import { LABEL_CONTAINER_NAME, LABEL_POD_UID } from '../pods/container-config.js'
import type { PodSandboxConfig } from '../runtime/runtime.js'
import { createContainerGc } from './container-gc.js'

const quiet = { info () {}, warn () {} }
const dir = mkdtempSync(join(tmpdir(), 'orch-containergc-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))

t.test('keeps the newest dead instance per container of live pods and removes all of gone pods', async t => {
  const wasm = await createWasmRuntime({ rootDir: join(dir, 'wasm') })
  t.teardown(async () => await wasm.close())
  writeFileSync(join(dir, 'tool.tar'), layoutTar(buildWasmImageLayout({ module: await compileFixture('tool'), refName: 'localhost/gc/tool:1' })))
  await wasm.images.importImage(join(dir, 'tool.tar'))
  const rt = wasm.runtime
  async function podWith (uid: string, exited: number, running: boolean): Promise<void> {
    const sb: PodSandboxConfig = { metadata: { name: uid, namespace: 'default', uid, attempt: 0 }, logDirectory: join(dir, 'logs', uid), labels: { [LABEL_POD_UID]: uid }, annotations: {}, hostNetwork: true }
    const id = await rt.runPodSandbox(sb)
    for (let i = 0; i < exited + (running ? 1 : 0); i++) {
      const spin = running && i === exited
      const c = await rt.createContainer(id, { metadata: { name: 'main', attempt: i }, image: { image: 'localhost/gc/tool:1' }, command: ['tool'], args: spin ? ['spin'] : ['exit', '0'], envs: [], mounts: [],
        labels: { [LABEL_POD_UID]: uid, [LABEL_CONTAINER_NAME]: 'main' }, annotations: {}, logPath: `main/${i}.log` }, sb)
      await rt.startContainer(c)
      if (!spin) while ((await rt.containerStatus(c)).state !== 'CONTAINER_EXITED') await new Promise(resolve => setTimeout(resolve, 20))
    }
  }
  await podWith('live', 3, true)
  await podWith('gone', 2, false)
  const gc = createContainerGc({ runtimes: () => [wasm], policy: { minAgeMs: 0, maxPerPodContainer: 1, maxContainers: -1 }, isActivePod: uid => uid === 'live', now: Date.now, logger: quiet })
  t.equal(await gc.garbageCollect(), 4, 'two old instances of the live pod, both of the gone pod')
  const left = await rt.listContainers()
  t.same(left.map(c => `${c.labels[LABEL_POD_UID]}:${c.state}:${c.metadata.attempt}`).sort(), ['live:CONTAINER_EXITED:2', 'live:CONTAINER_RUNNING:3'])
  const capped = createContainerGc({ runtimes: () => [wasm], policy: { minAgeMs: 0, maxPerPodContainer: 1, maxContainers: 0 }, isActivePod: () => true, now: Date.now, logger: quiet })
  t.equal(await capped.garbageCollect(), 1, 'a node-wide cap of 0 removes the last dead one')
  const young = createContainerGc({ runtimes: () => [wasm], policy: { minAgeMs: 3_600_000, maxPerPodContainer: 0, maxContainers: -1 }, isActivePod: () => false, now: Date.now, logger: quiet })
  t.equal(await young.garbageCollect(), 0, 'nothing younger than the minimum age')
})
