// A full disk under a container's log: lines are dropped, the module keeps running and exits normally, and the
// runtime reports it once as a warning (the orchlet turns it into a pod Event). /dev/full answers every write ENOSPC.
import t from 'tap'
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildWasmImageLayout, writeLayoutDir } from '../oci/layout-writer.js'
import { compileFixture } from './fixtures/compile.js'
import { createWasmRuntime } from './runtime.js'

t.test('log lines are dropped on a full disk and the runtime warns once', { skip: existsSync('/dev/full') ? false : 'no /dev/full here' }, async t => {
  const dir = await mkdtemp(join(tmpdir(), 'orch-wasm-logfull-'))
  const warnings: Array<{ labels: Record<string, string>, reason: string, message: string }> = []
  const rt = await createWasmRuntime({ rootDir: join(dir, 'root'), onContainerWarning: (labels, reason, message) => warnings.push({ labels, reason, message }) })
  t.teardown(async () => { await rt.close(); await rm(dir, { recursive: true, force: true }) })
  await writeLayoutDir(join(dir, 'layout'), buildWasmImageLayout({ module: await compileFixture('tool'), refName: 'localhost/t/tool:1' }))
  await rt.images.importImage(join(dir, 'layout'))
  const sandbox = { metadata: { name: 'p', uid: 'u1', namespace: 'default', attempt: 0 }, logDirectory: '/dev', labels: {}, annotations: {}, hostNetwork: true }
  const sb = await rt.runtime.runPodSandbox(sandbox, 'wasm')
  const id = await rt.runtime.createContainer(sb, {
    metadata: { name: 'main', attempt: 0 }, image: { image: 'localhost/t/tool:1' }, command: ['tool', 'echo'], args: ['a', 'b', 'c'],
    envs: [], mounts: [], labels: { 'io.orch.pod.name': 'p', 'io.orch.container.name': 'main' }, annotations: {}, logPath: 'full'
  }, sandbox)
  await rt.runtime.startContainer(id)
  let status = await rt.runtime.containerStatus(id)
  for (let i = 0; i < 200 && status.state !== 'CONTAINER_EXITED'; i++) {
    await new Promise(resolve => setTimeout(resolve, 25))
    status = await rt.runtime.containerStatus(id)
  }
  t.equal(status.state, 'CONTAINER_EXITED')
  t.equal(status.exitCode, 0, 'the module ran to its end')
  t.equal(warnings.length, 1, 'warned once, not per line')
  t.equal(warnings[0].reason, 'LogWriteFailed')
  t.match(warnings[0].message, 'no space left on device')
  t.equal(warnings[0].labels['io.orch.pod.name'], 'p')
})
