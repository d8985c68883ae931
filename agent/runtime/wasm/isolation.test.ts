// The wasm runtime's bounds and WASI plumbing: memory cap -> OOMKilled 137, loops stopped, deadlines,
// preopened volumes, argv/env, exit codes and traps.
import t from 'tap'
import { mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildWasmImageLayout, writeLayoutDir } from '../oci/layout-writer.js'
import type { ContainerConfig, ContainerStatus, PodSandboxConfig } from '../runtime.js'
import { compileFixture, compileWat } from './fixtures/compile.js'
import type { FixtureName } from './fixtures/compile.js'
import { createWasmRuntime, CPU_LIMIT_ANNOTATION, TIMEOUT_ANNOTATION } from './runtime.js'
import { parseCriLog } from './cri-log.js'

const MiB = 1024 * 1024
const dir = await mkdtemp(join(tmpdir(), 'orch-wasm-iso-'))
const rt = await createWasmRuntime({ rootDir: join(dir, 'root') })
t.teardown(async () => { await rt.close(); await rm(dir, { recursive: true, force: true }) })

async function addImage (name: string, module: Uint8Array, env?: string[]): Promise<string> {
  const ref = `localhost/iso/${name}:1`
  await writeLayoutDir(join(dir, 'layouts', name), buildWasmImageLayout({ module, refName: ref, env }))
  await rt.images.importImage(join(dir, 'layouts', name))
  return ref
}
const images: Partial<Record<FixtureName, string>> = {}
for (const name of ['tool', 'bigmem', 'imported-memory'] as const) images[name] = await addImage(name, await compileFixture(name), name === 'tool' ? ['FROM_IMAGE=yes'] : undefined)

let n = 0
async function run (image: string, argv: string[], extra: Partial<ContainerConfig> = {}, opts: { wait?: boolean } = {}): Promise<{ id: string; status: ContainerStatus; stdout: string[]; stderr: string[] }> {
  const sandbox: PodSandboxConfig = { metadata: { name: `p${++n}`, uid: `u${n}`, namespace: 'iso', attempt: 0 }, logDirectory: join(dir, 'logs', `p${n}`), labels: {}, annotations: {}, hostNetwork: false }
  const sid = await rt.runtime.runPodSandbox(sandbox, 'wasm')
  const config: ContainerConfig = { metadata: { name: 'c', attempt: 0 }, image: { image }, command: argv, args: [], envs: [], mounts: [], labels: {}, annotations: {}, logPath: 'c/0.log', ...extra }
  const id = await rt.runtime.createContainer(sid, config, sandbox)
  await rt.runtime.startContainer(id)
  const deadline = Date.now() + 20000
  let status = await rt.runtime.containerStatus(id)
  while (opts.wait !== false && status.state !== 'CONTAINER_EXITED' && Date.now() < deadline) {
    await new Promise(resolve => setTimeout(resolve, 20))
    status = await rt.runtime.containerStatus(id)
  }
  const log = parseCriLog(await readFile(status.logPath, 'utf8').catch(() => ''))
  return { id, status, stdout: log.filter(l => l.stream === 'stdout').map(l => l.content), stderr: log.filter(l => l.stream === 'stderr').map(l => l.content) }
}

t.test('a module declaring a 1 GiB maximum and growing under a 16 MiB limit is OOMKilled with 137', async t => {
  const { status } = await run(images.bigmem as string, ['bigmem'], { resources: { memoryLimitInBytes: 16 * MiB } })
  t.equal(status.state, 'CONTAINER_EXITED')
  t.equal(status.exitCode, 137)
  t.equal(status.reason, 'OOMKilled')
  const stats = await rt.runtime.containerStats(status.id)
  t.ok((stats.memoryWorkingSetBytes ?? 0) <= 16 * MiB, `linear memory stayed within the cap (${stats.memoryWorkingSetBytes})`)
})

t.test('a module importing its memory is capped too and OOMKilled when it exits on a failed grow', async t => {
  const { status } = await run(images['imported-memory'] as string, ['im'], { resources: { memoryLimitInBytes: 16 * MiB } })
  t.equal(status.exitCode, 137)
  t.equal(status.reason, 'OOMKilled')
})

t.test('a module growing within its limit runs to completion', async t => {
  const { status, stdout } = await run(images.tool as string, ['tool', 'grow', '8'], { resources: { memoryLimitInBytes: 16 * MiB } })
  t.equal(status.exitCode, 0)
  t.equal(status.reason, 'Completed')
  t.same(stdout, ['grew'])
})

t.test('the same module growing past its limit is OOMKilled', async t => {
  const { status } = await run(images.tool as string, ['tool', 'grow', '64'], { resources: { memoryLimitInBytes: 16 * MiB } })
  t.equal(status.exitCode, 137)
  t.equal(status.reason, 'OOMKilled')
})

t.test('a single large grow far below the cap that is refused is OOMKilled, a handled refusal is not', async t => {
  const wat = (onFail: string): string => `(module
    (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
    (memory (export "memory") 1)
    (func (export "_start") (if (i32.eq (memory.grow (i32.const 1024)) (i32.const -1)) (then ${onFail}))))`
  const failing = await addImage('biggrow', await compileWat(wat('(call $exit (i32.const 1))')))
  const a = await run(failing, ['biggrow'], { resources: { memoryLimitInBytes: 16 * MiB } })
  t.equal(a.status.exitCode, 137)
  t.equal(a.status.reason, 'OOMKilled')
  const coping = await addImage('coping', await compileWat(wat('(call $exit (i32.const 0))')))
  const b = await run(coping, ['coping'], { resources: { memoryLimitInBytes: 16 * MiB } })
  t.equal(b.status.exitCode, 0)
  t.equal(b.status.reason, 'Completed')
})

t.test('a module whose initial memory is above the limit is OOMKilled at start', async t => {
  const big = await addImage('initial-big', await compileWat('(module (memory (export "memory") 512) (func (export "_start")))'))
  const { status } = await run(big, ['x'], { resources: { memoryLimitInBytes: 16 * MiB } })
  t.equal(status.exitCode, 137)
  t.equal(status.reason, 'OOMKilled')
  t.match(status.message, /initial memory/)
})

t.test('an infinite loop is stopped by stopContainer within the timeout', async t => {
  const { id, status } = await run(images.tool as string, ['tool', 'spin'], {}, { wait: false })
  t.equal(status.state, 'CONTAINER_RUNNING')
  await new Promise(resolve => setTimeout(resolve, 300)) // let the module get into its loop
  t.equal((await rt.runtime.containerStatus(id)).state, 'CONTAINER_RUNNING', 'still running after 300 ms')
  const started = Date.now()
  await rt.runtime.stopContainer(id, 1)
  t.ok(Date.now() - started < 1000, `stopped in ${Date.now() - started} ms`)
  const after = await rt.runtime.containerStatus(id)
  t.equal(after.state, 'CONTAINER_EXITED')
  t.equal(after.exitCode, 137)
})

t.test('a container running past its timeout annotation is killed with DeadlineExceeded', async t => {
  const { status } = await run(images.tool as string, ['tool', 'spin'], { annotations: { [TIMEOUT_ANNOTATION]: '0.3' } })
  t.equal(status.state, 'CONTAINER_EXITED')
  t.equal(status.exitCode, 137)
  t.equal(status.reason, 'DeadlineExceeded')
})

t.test('a container using more CPU time than its cpu-seconds annotation is killed, and its CPU time is reported', async t => {
  const { id, status } = await run(images.tool as string, ['tool', 'spin'], { annotations: { [CPU_LIMIT_ANNOTATION]: '0.4' } })
  t.equal(status.state, 'CONTAINER_EXITED')
  t.equal(status.exitCode, 137)
  t.equal(status.reason, 'DeadlineExceeded')
  t.match(status.message, /CPU limit/)
  t.ok(status.finishedAt - status.startedAt >= 0.4e9, 'it ran for at least its CPU allowance')
  const stats = await rt.runtime.containerStats(id)
  t.ok((stats.cpuUsageCoreNanoSeconds ?? 0) >= 0.3e9, `CPU time is reported (${stats.cpuUsageCoreNanoSeconds} ns)`)
})

t.test('rejects a bad timeout annotation', async t => {
  await t.rejects(run(images.tool as string, ['tool', 'exit', '0'], { annotations: { [TIMEOUT_ANNOTATION]: 'soon' } }), { code: 'InvalidArgument' })
})

t.test('a preopened directory can be read and written', async t => {
  const host = join(dir, 'vol')
  await mkdir(host, { recursive: true })
  await writeFile(join(host, 'in.txt'), 'input data\n')
  const mounts = [{ containerPath: '/work', hostPath: host }]
  const w = await run(images.tool as string, ['tool', 'write', '/work/out.txt', 'written by wasm'], { mounts })
  t.equal(w.status.exitCode, 0)
  t.equal(await readFile(join(host, 'out.txt'), 'utf8'), 'written by wasm')
  const r = await run(images.tool as string, ['tool', 'cat', '/work/in.txt'], { mounts })
  t.same(r.stdout, ['input data'])
  const outside = await run(images.tool as string, ['tool', 'cat', '/etc/hostname'], { mounts })
  t.not(outside.status.exitCode, 0, 'a path outside every preopen cannot be opened')
})

t.test('a read-only mount can be read but not written, next to a writable one', async t => {
  const ro = join(dir, 'ro')
  const rw = join(dir, 'rw')
  await mkdir(ro, { recursive: true })
  await mkdir(rw, { recursive: true })
  await writeFile(join(ro, 'config.txt'), 'setting=1\n')
  for (const mounts of [
    [{ containerPath: '/config', hostPath: ro, readonly: true }, { containerPath: '/scratch', hostPath: rw }],
    [{ containerPath: '/scratch', hostPath: rw }, { containerPath: '/config', hostPath: ro, readonly: true }]
  ]) {
    const read = await run(images.tool as string, ['tool', 'cat', '/config/config.txt'], { mounts })
    t.same(read.stdout, ['setting=1'])
    const overwrite = await run(images.tool as string, ['tool', 'write', '/config/config.txt', 'hacked'], { mounts })
    t.not(overwrite.status.exitCode, 0, 'overwriting a file on a read-only mount fails')
    const create = await run(images.tool as string, ['tool', 'write', '/config/new.txt', 'x'], { mounts })
    t.not(create.status.exitCode, 0, 'creating a file on a read-only mount fails')
    const scratch = await run(images.tool as string, ['tool', 'write', '/scratch/out.txt', 'ok'], { mounts })
    t.equal(scratch.status.exitCode, 0, 'the writable mount is writable')
  }
  t.equal(await readFile(join(ro, 'config.txt'), 'utf8'), 'setting=1\n')
  await t.rejects(readFile(join(ro, 'new.txt')))
  t.equal(await readFile(join(rw, 'out.txt'), 'utf8'), 'ok')
})

t.test('argv is command + args and env merges image and config values', async t => {
  const a = await run(images.tool as string, ['tool', 'echo'], { args: ['one', 'two words'] })
  t.same(a.stdout, ['one', 'two words'])
  const img = await run(images.tool as string, ['tool', 'env', 'FROM_IMAGE'])
  t.same(img.stdout, ['yes'])
  const cfg = await run(images.tool as string, ['tool', 'env', 'FROM_IMAGE'], { envs: [{ key: 'FROM_IMAGE', value: 'overridden' }] })
  t.same(cfg.stdout, ['overridden'])
  const unset = await run(images.tool as string, ['tool', 'env', 'NOPE'])
  t.equal(unset.status.exitCode, 1)
})

t.test('exit codes from proc_exit propagate and a trap is an Error', async t => {
  for (const code of [0, 1, 42, 255]) {
    const { status } = await run(images.tool as string, ['tool', 'exit', String(code)])
    t.equal(status.exitCode, code, `exit ${code}`)
    t.equal(status.reason, code === 0 ? 'Completed' : 'Error')
  }
  const trap = await addImage('trap', await compileWat('(module (memory (export "memory") 1) (func (export "_start") unreachable))'))
  const { status } = await run(trap, ['trap'])
  t.equal(status.exitCode, 134)
  t.equal(status.reason, 'Error')
  t.match(status.message, /unreachable/)
})

t.test('a module that is not WebAssembly is rejected at create', async t => {
  const bad = await addImage('bad', Buffer.from('\0asm\x01\0\0\0\x05\x03\x01\x00', 'latin1'))
  await t.rejects(run(bad, ['bad']), { code: 'InvalidArgument' })
})

t.test('execSync is unimplemented for wasm containers', async t => {
  const { id } = await run(images.tool as string, ['tool', 'exit', '0'])
  await t.rejects(rt.runtime.execSync(id, ['sh'], 1), { code: 'Unimplemented' })
})
