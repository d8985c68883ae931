// Image GC on a real WebAssembly image store kept on a small tmpfs: over the high threshold it frees unused images,
// least recently used first, down to the low threshold; images in use and younger than the minimum age stay.
import t from 'tap'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { compileFixture } from '../runtime/wasm/fixtures/compile.js'
import { buildWasmImageLayout, layoutTar } from '../runtime/oci/layout-writer.js'
import { createWasmRuntime } from '../runtime/wasm/runtime.js'
import { fsUsage } from '../node/machine-stats.js'
import { createImageGc } from './image-gc.js'

const quiet = { info () {}, warn () {} }
const Mi = 1024 * 1024

/** A custom section (id 0) of `bytes` random bytes appended to a module: a distinct, valid module of a chosen size. */
function padded (module: Buffer, bytes: number): Buffer {
  const name = Buffer.from('pad')
  const payload = Buffer.concat([Buffer.from([name.length]), name, randomBytes(bytes)])
  const leb: number[] = []
  let n = payload.length
  do { let b = n & 0x7f; n >>>= 7; if (n !== 0) b |= 0x80; leb.push(b) } while (n !== 0)
  return Buffer.concat([module, Buffer.from([0, ...leb]), payload])
}

const dir = mkdtempSync(join(tmpdir(), 'orch-imagegc-'))
const mnt = join(dir, 'imagefs')
mkdirSync(mnt)
let mounted = false
try { execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=16m', 'tmpfs', mnt], { stdio: 'ignore' }); mounted = true } catch { /* not allowed here */ }
t.teardown(() => { if (mounted) execFileSync('umount', [mnt]); rmSync(dir, { recursive: true, force: true }) })

t.test('over the high threshold, unused images are removed oldest-used first until use is at the low threshold', { skip: mounted ? false : 'cannot mount a tmpfs here' }, async t => {
  let clock = Date.parse('2026-01-01T00:00:00Z')
  const wasm = await createWasmRuntime({ rootDir: join(mnt, 'wasm'), now: () => clock })
  t.teardown(async () => await wasm.close())
  const tool = Buffer.from(await compileFixture('tool'))
  const names: string[] = []
  for (let i = 0; i < 6; i++) {
    const tar = join(dir, `img${i}.tar`)
    writeFileSync(tar, layoutTar(buildWasmImageLayout({ module: padded(tool, 2 * Mi), refName: `localhost/gc/img${i}:1`, env: [`IMAGE=${i}`] })))
    await wasm.images.importImage(tar)
    names.push(`localhost/gc/img${i}:1`)
  }
  const failures: string[] = []
  const gc = createImageGc({
    runtime: wasm,
    policy: { highPercent: 60, lowPercent: 30, minAgeMs: 60_000, maxAgeMs: 0 },
    fsStats: () => fsUsage(mnt),
    now: () => clock,
    onFailure: m => failures.push(m),
    logger: quiet
  })
  // img0 is used by a container (the image id is the config's digest: each image gets its own env to be distinct).
  const sandbox = await wasm.runtime.runPodSandbox({ metadata: { name: 'p', namespace: 'default', uid: 'u1', attempt: 0 }, logDirectory: join(dir, 'logs'), labels: {}, annotations: {}, hostNetwork: true })
  await wasm.runtime.createContainer(sandbox, { metadata: { name: 'c', attempt: 0 }, image: { image: names[0]! }, command: ['tool'], args: ['spin'], envs: [], mounts: [], labels: {}, annotations: {}, logPath: 'c/0.log' },
    { metadata: { name: 'p', namespace: 'default', uid: 'u1', attempt: 0 }, logDirectory: join(dir, 'logs'), labels: {}, annotations: {}, hostNetwork: true })
  await gc.detect()
  clock += 120_000
  const before = fsUsage(mnt)!
  const usedPercent = (f: typeof before): number => 100 - Math.floor(f.availableBytes * 100 / f.capacityBytes)
  t.ok(usedPercent(before) >= 60, `the store fills the filesystem above the high threshold (${usedPercent(before)}%)`)
  const freed = await gc.garbageCollect()
  const after = fsUsage(mnt)!
  t.ok(usedPercent(after) <= 30, `down to the low threshold: ${usedPercent(before)}% -> ${usedPercent(after)}%`)
  t.ok(freed > 0)
  const left = (await wasm.images.listImages()).flatMap(i => i.repoTags)
  t.ok(left.includes(names[0]!), 'the image a container uses stays')
  t.ok(left.length < names.length, `images were removed (${names.length} -> ${left.length})`)
  t.same(failures, [])
})

t.test('images younger than the minimum age are kept, and the shortfall is reported', { skip: mounted ? false : 'cannot mount a tmpfs here' }, async t => {
  const clock = Date.parse('2026-01-01T00:00:00Z')
  const wasm = await createWasmRuntime({ rootDir: join(mnt, 'wasm2'), now: () => clock })
  t.teardown(async () => { await wasm.close(); rmSync(join(mnt, 'wasm2'), { recursive: true, force: true }) })
  const tool = Buffer.from(await compileFixture('tool'))
  for (let i = 0; i < 4; i++) {
    const tar = join(dir, `young${i}.tar`)
    writeFileSync(tar, layoutTar(buildWasmImageLayout({ module: padded(tool, 2 * Mi), refName: `localhost/gc/young${i}:1`, env: [`IMAGE=${i}`] })))
    await wasm.images.importImage(tar)
  }
  const failures: string[] = []
  const gc = createImageGc({ runtime: wasm, policy: { highPercent: 10, lowPercent: 5, minAgeMs: 60_000, maxAgeMs: 0 }, fsStats: () => fsUsage(mnt), now: () => clock, onFailure: m => failures.push(m), logger: quiet })
  t.equal(await gc.garbageCollect(), 0)
  t.equal((await wasm.images.listImages()).length, 4)
  t.match(failures[0], /^Failed to garbage collect required amount of images\. Attempted to free \d+ bytes, but only found 0 bytes eligible to free\.$/)
})
