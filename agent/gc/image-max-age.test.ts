// imageMaximumGCAge on a real WebAssembly image store and a fake clock: unused images past the age are removed whatever
// the disk use, only once the age has passed since collection began; images in use are never removed.
import t from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { compileFixture } from '../runtime/wasm/fixtures/compile.js'
import { buildWasmImageLayout, layoutTar } from '../runtime/oci/layout-writer.js'
import { createWasmRuntime } from '../runtime/wasm/runtime.js'
import type { PodSandboxConfig } from '../runtime/runtime.js'
import { createImageGc } from './image-gc.js'

const quiet = { info () {}, warn () {} }
const MIN = 60_000

t.test('unused images past the maximum age go, counted from their last use; in-use images stay', async t => {
  const dir = mkdtempSync(join(tmpdir(), 'orch-image-maxage-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const start = Date.parse('2026-01-01T00:00:00Z')
  let clock = start
  const wasm = await createWasmRuntime({ rootDir: join(dir, 'wasm'), now: () => clock })
  t.teardown(async () => await wasm.close())
  const tool = await compileFixture('tool')
  const ref = (n: string): string => `localhost/maxage/${n}:1`
  for (const n of ['in-use', 'never-used', 'used-earlier']) {
    const tar = join(dir, `${n}.tar`)
    writeFileSync(tar, layoutTar(buildWasmImageLayout({ module: tool, refName: ref(n), env: [`IMAGE=${n}`] })))
    await wasm.images.importImage(tar)
  }
  let fsAsked = 0
  const gc = createImageGc({
    runtime: wasm,
    // Disk-driven collection off (high threshold 100): only the age removes images.
    policy: { highPercent: 100, lowPercent: 80, minAgeMs: 2 * MIN, maxAgeMs: 60 * MIN },
    fsStats: () => { fsAsked++; return undefined },
    now: () => clock,
    logger: quiet
  })
  const sandboxConfig: PodSandboxConfig = { metadata: { name: 'p', namespace: 'default', uid: 'u1', attempt: 0 }, logDirectory: join(dir, 'logs'), labels: {}, annotations: {}, hostNetwork: true }
  const sandbox = await wasm.runtime.runPodSandbox(sandboxConfig)
  const container = async (name: string, image: string): Promise<string> => await wasm.runtime.createContainer(sandbox,
    { metadata: { name, attempt: 0 }, image: { image }, command: ['tool'], args: ['spin'], envs: [], mounts: [], labels: {}, annotations: {}, logPath: `${name}/0.log` }, sandboxConfig)
  await container('a', ref('in-use'))
  const earlier = await container('b', ref('used-earlier'))
  const present = async (): Promise<string[]> => (await wasm.images.listImages()).flatMap(i => i.repoTags).sort()
  const all = [ref('in-use'), ref('never-used'), ref('used-earlier')].sort()

  t.equal(await gc.garbageCollect(), 0)
  clock = start + 30 * MIN
  t.equal(await gc.garbageCollect(), 0, 'within the maximum age of the start nothing is old yet')
  t.same(await present(), all)
  await wasm.runtime.removeContainer(earlier)
  clock = start + 60 * MIN
  await gc.garbageCollect()
  t.same(await present(), all, 'exactly the maximum age since the start: still waiting')
  clock = start + 61 * MIN
  t.ok(await gc.garbageCollect() > 0)
  t.same(await present(), [ref('in-use'), ref('used-earlier')].sort(), 'the image never seen in use goes; the one last used 31 min ago stays')
  clock = start + 90 * MIN
  await gc.garbageCollect()
  t.same(await present(), [ref('in-use'), ref('used-earlier')].sort(), 'unused for exactly the maximum age is not past it')
  clock = start + 91 * MIN
  await gc.garbageCollect()
  t.same(await present(), [ref('in-use')], 'unused for longer than the maximum age since its last use: removed')
  clock = start + 1000 * MIN
  await gc.garbageCollect()
  t.same(await present(), [ref('in-use')], 'an image a container uses is never removed for its age')
  t.equal(fsAsked, 0, 'the disk use is never consulted')
})

t.test('a maximum age of 0 turns it off; a collector made later still counts from the given start', async t => {
  const dir = mkdtempSync(join(tmpdir(), 'orch-image-maxage-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const start = Date.parse('2026-01-01T00:00:00Z')
  let clock = start
  const wasm = await createWasmRuntime({ rootDir: join(dir, 'wasm'), now: () => clock })
  t.teardown(async () => await wasm.close())
  const tar = join(dir, 'x.tar')
  writeFileSync(tar, layoutTar(buildWasmImageLayout({ module: await compileFixture('tool'), refName: 'localhost/maxage/x:1' })))
  await wasm.images.importImage(tar)
  clock = start + 100 * MIN
  const off = createImageGc({ runtime: wasm, policy: { highPercent: 100, lowPercent: 80, minAgeMs: 0, maxAgeMs: 0 }, fsStats: () => undefined, now: () => clock, logger: quiet })
  await off.garbageCollect()
  t.equal((await wasm.images.listImages()).length, 1, 'off: kept')
  const late = createImageGc({ runtime: wasm, policy: { highPercent: 100, lowPercent: 80, minAgeMs: 0, maxAgeMs: 60 * MIN }, beganAt: start, fsStats: () => undefined, now: () => clock, logger: quiet })
  await late.garbageCollect()
  t.equal((await wasm.images.listImages()).length, 0, 'made 100 min after the start with a 60 min age: the unused image goes at its first round')
})
