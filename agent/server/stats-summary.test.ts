import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomUUID } from 'node:crypto'
import { createWasmRuntime } from '../runtime/wasm/runtime.js'
import { compileFixture } from '../runtime/wasm/fixtures/compile.js'
import { buildWasmImageLayout, writeLayoutDir } from '../runtime/oci/layout-writer.js'
import { testPodManager, waitForStatus } from '../pods/testing.js'
import type { Pod } from '../pods/pod-types.js'

const IMAGE = 'localhost/orch-test/tool:1'

t.test('/stats/summary reports the node from /proc and statfs and each running container from the runtime', async t => {
  const dir = mkdtempSync(join(tmpdir(), 'orch-stats-'))
  const wasm = await createWasmRuntime({ rootDir: join(dir, 'wasm') })
  t.teardown(async () => { await wasm.close(); rmSync(dir, { recursive: true, force: true }) })
  await writeLayoutDir(join(dir, 'layout'), buildWasmImageLayout({ module: await compileFixture('tool'), refName: IMAGE }))
  await wasm.images.importImage(join(dir, 'layout'))
  const { pods } = testPodManager(t, { runtime: wasm })
  const p: Pod = {
    apiVersion: 'v1', kind: 'Pod', metadata: { name: 'busy', namespace: 'default', uid: randomUUID() },
    spec: { runtimeClassName: 'wasm', terminationGracePeriodSeconds: 1, containers: [{ name: 'main', image: IMAGE, imagePullPolicy: 'IfNotPresent', command: ['tool', 'spin'] }] }
  }
  pods.sink.set('file', [p])
  await waitForStatus(pods, p, s => s.containerStatuses?.[0]?.state.running !== undefined)
  // A container's first stats appear once the runtime has sampled it (later on a loaded machine): wait for them.
  let first: any
  for (let i = 0; i < 100; i++) {
    first = await pods.view.statsSummary()
    if (first.pods[0]?.containers[0]?.cpu !== undefined) break
    await new Promise(resolve => setTimeout(resolve, 100))
  }
  await new Promise(resolve => setTimeout(resolve, 300))
  const s = await pods.view.statsSummary() as any
  t.equal(s.node.nodeName, 'node-a')
  t.match(s.node.startTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)
  t.ok(s.node.cpu.usageCoreNanoSeconds > 0)
  t.type(s.node.cpu.usageNanoCores, 'number', 'a rate once two readings exist')
  t.ok(s.node.memory.workingSetBytes > 0 && s.node.memory.availableBytes > 0)
  t.ok(s.node.fs.capacityBytes > 0)
  t.ok(s.node.rlimit.maxpid > 0 && s.node.rlimit.curproc > 0)
  t.equal(s.pods.length, 1)
  const pod = s.pods[0]
  t.same(pod.podRef, { name: 'busy', namespace: 'default', uid: p.metadata.uid })
  t.type(pod.startTime, 'string')
  const c = pod.containers[0]
  t.equal(c.name, 'main')
  t.ok(c.cpu.usageCoreNanoSeconds >= first.pods[0].containers[0].cpu.usageCoreNanoSeconds, 'CPU time only grows')
  t.type(c.cpu.usageNanoCores, 'number', 'the spinning container has a CPU rate on the second reading')
  t.type(c.memory.workingSetBytes, 'number')
  t.equal(pod.cpu.usageCoreNanoSeconds, c.cpu.usageCoreNanoSeconds, 'the pod total is the sum of its containers')
})
