// Container log rotation on real runtimes: the WebAssembly runtime (copy and truncate) and containerd (rename and
// ReopenContainerLog), with the older rotated files gzipped and at most --container-log-max-files kept.
import t, { type Test } from 'tap'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { gunzipSync } from 'node:zlib'
import { compileFixture } from '../runtime/wasm/fixtures/compile.js'
import { buildWasmImageLayout, layoutTar } from '../runtime/oci/layout-writer.js'
import { createWasmRuntime } from '../runtime/wasm/runtime.js'
import { createCriRuntime } from '../runtime/cri/cri-runtime.js'
import { busyboxImage, ensureContainerd } from '../runtime/cri/containerd-for-tests.js'
import type { ContainerRuntime, PodSandboxConfig } from '../runtime/runtime.js'
import { createLogRotator, rotationSuffix } from './log-rotation.js'

const quiet = { info () {}, warn () {} }
const dir = mkdtempSync(join(tmpdir(), 'orch-logrot-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))
const sleep = (ms: number): Promise<void> => new Promise(resolve => setTimeout(resolve, ms))

async function rotateThrice (t: Test, rt: ContainerRuntime, id: string, maxFiles: number): Promise<string> {
  let clock = Date.parse('2026-01-01T00:00:00Z')
  const rotator = createLogRotator({ runtimes: () => [rt], maxSizeBytes: 200, maxFiles, now: () => clock, logger: quiet })
  const log = (await rt.runtime.containerStatus(id)).logPath
  for (let i = 0; i < 3; i++) {
    const deadline = Date.now() + 20_000
    while ((!existsSync(log) || statSync(log).size < 200) && Date.now() < deadline) await sleep(50)
    t.equal(await rotator.rotateAll(), 1, `rotation ${i + 1}`)
    clock += 1000
  }
  const files = readdirSync(dirname(log)).filter(f => f.startsWith(readdirSync(dirname(log)).find(x => join(dirname(log), x) === log)!)).sort()
  return JSON.stringify({ log, files })
}

t.test('the suffix is the kubelet\'s timestamp', async t => {
  t.equal(rotationSuffix(Date.parse('2026-03-04T05:06:07.890Z')), '.20260304-050607')
})

t.test('WebAssembly: rotated by copy and truncate; the live log keeps receiving lines; max files kept, older ones gzipped', async t => {
  const wasm = await createWasmRuntime({ rootDir: join(dir, 'wasm') })
  t.teardown(async () => await wasm.close())
  writeFileSync(join(dir, 'tool.tar'), layoutTar(buildWasmImageLayout({ module: await compileFixture('tool'), refName: 'localhost/log/tool:1' })))
  await wasm.images.importImage(join(dir, 'tool.tar'))
  const sb: PodSandboxConfig = { metadata: { name: 'p', namespace: 'default', uid: 'u', attempt: 0 }, logDirectory: join(dir, 'logs'), labels: {}, annotations: {}, hostNetwork: true }
  const id = await wasm.runtime.createContainer(await wasm.runtime.runPodSandbox(sb), { metadata: { name: 'c', attempt: 0 }, image: { image: 'localhost/log/tool:1' }, command: ['tool'], args: ['tick', '5'], envs: [], mounts: [], labels: {}, annotations: {}, logPath: 'c/0.log' }, sb)
  await wasm.runtime.startContainer(id)
  const { log, files } = JSON.parse(await rotateThrice(t, wasm, id, 4)) as { log: string, files: string[] }
  t.equal(files.length, 4, `--container-log-max-files=4: the live log and three rotated files (${files.join(' ')})`)
  t.equal(files.filter(f => f.endsWith('.gz')).length, 1, 'the older rotated file is gzipped')
  const gz = files.find(f => f.endsWith('.gz'))!
  t.match(gunzipSync(readFileSync(join(dirname(log), gz))).toString(), /stdout F tick \d+/)
  const size = statSync(log).size
  await sleep(300)
  t.ok(statSync(log).size > size, 'the container still writes to the live log')
})

const env = await ensureContainerd()
t.test('containerd: rotated by rename and ReopenContainerLog', { skip: env.ok ? false : 'no containerd' }, async t => {
  if (!env.ok) return
  const rt = createCriRuntime({ runtimeEndpoint: env.endpoint, requestTimeoutMs: 30_000, name: 'containerd' })
  const sb: PodSandboxConfig = { metadata: { name: 'logrot', namespace: 'default', uid: `u-${Date.now()}`, attempt: 0 }, logDirectory: join(dir, 'cd-logs'), labels: {}, annotations: {}, hostNetwork: true }
  const sandbox = await rt.runtime.runPodSandbox(sb)
  t.teardown(async () => { await rt.runtime.stopPodSandbox(sandbox).catch(() => {}); await rt.runtime.removePodSandbox(sandbox).catch(() => {}); await rt.close() })
  const id = await rt.runtime.createContainer(sandbox, { metadata: { name: 'c', attempt: 0 }, image: { image: busyboxImage }, command: ['sh', '-c', 'i=0; while true; do i=$((i+1)); echo line $i; sleep 0.01; done'], args: [], envs: [], mounts: [], labels: {}, annotations: {}, logPath: 'c/0.log' }, sb)
  await rt.runtime.startContainer(id)
  const { log, files } = JSON.parse(await rotateThrice(t, rt, id, 3)) as { log: string, files: string[] }
  t.equal(files.length, 3, `--container-log-max-files=3: the live log and two rotated files, the oldest removed (${files.join(' ')})`)
  const size = statSync(log).size
  await sleep(300)
  t.ok(statSync(log).size > size, 'containerd reopened the live log and writes to it')
})
