// A standalone orchlet (no API server) runs a static WebAssembly pod from --pod-manifest-path and follows the file.
import t from 'tap'
import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync, unlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Agent, request } from 'undici'
import { compileFixture } from '../agent/runtime/wasm/fixtures/compile.js'
import { buildWasmImageLayout, layoutTar } from '../agent/runtime/oci/layout-writer.js'

const root = mkdtempSync(join(tmpdir(), 'orchlet-e2e-'))
const manifests = join(root, 'manifests')
mkdirSync(manifests)
mkdirSync(join(root, 'state', 'wasm', 'import'), { recursive: true })
writeFileSync(join(root, 'state', 'wasm', 'import', 'tool.tar'), layoutTar(buildWasmImageLayout({ module: await compileFixture('tool'), refName: 'localhost/e2e/tool:1' })))

const pod = (args: string[], restartPolicy = 'Always') => `apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  runtimeClassName: wasm
  restartPolicy: ${restartPolicy}
  terminationGracePeriodSeconds: 1
  containers:
  - name: main
    image: localhost/e2e/tool:1
    command: [tool]
    args: ${JSON.stringify(args)}
`
const manifest = join(manifests, 'web.yaml')
writeFileSync(manifest, pod(['spin']))

const child = spawn(process.execPath, ['--import', 'tsx', 'agent/cli/main.ts',
  '--pod-manifest-path', manifests, '--root-dir', join(root, 'state'), '--cert-dir', join(root, 'pki'),
  '--port', '0', '--read-only-port', '0', '--healthz-port', '0', '--file-check-frequency', '1s',
  '--hostname-override', 'edge-1', '--container-runtime-endpoint', `unix://${join(root, 'no-runtime.sock')}`
], { stdio: ['ignore', 'pipe', 'pipe'] })
let stderr = ''
const port = await new Promise<number>((resolve, reject) => {
  const timer = setTimeout(() => reject(new Error(`orchlet did not start: ${stderr}`)), 60_000)
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString()
    // The default --logging-format is text, with structured pairs after the message.
    const m = /orchlet started .*\bport=(\d+)/.exec(stderr)
    if (m) { clearTimeout(timer); resolve(Number(m[1])) }
  })
  child.once('exit', code => { clearTimeout(timer); reject(new Error(`orchlet exited ${code}: ${stderr}`)) })
})
t.teardown(async () => {
  if (child.exitCode === null) { child.kill('SIGKILL'); await new Promise(r => child.once('exit', r)) }
  rmSync(root, { recursive: true, force: true })
})

const agent = new Agent({ connect: { rejectUnauthorized: false } })
async function pods (): Promise<Array<{ metadata: { name: string; uid: string }; status: { phase: string; containerStatuses?: Array<{ state: Record<string, unknown> }> } }>> {
  const res = await request(`https://127.0.0.1:${port}/pods`, { dispatcher: agent })
  return ((await res.body.json()) as { items: [] }).items
}
async function until<T> (what: string, f: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 20_000
  while (Date.now() < deadline) {
    const v = await f()
    if (v !== undefined) return v
    await new Promise(resolve => setTimeout(resolve, 100))
  }
  throw new Error(`timed out waiting for ${what}`)
}

t.test('runs the static pod from the manifest folder', async t => {
  const running = await until('a running pod', async () => (await pods()).find(p => p.status.containerStatuses?.[0]?.state.running !== undefined))
  t.equal(running.metadata.name, 'web-edge-1')
  t.equal(running.status.phase, 'Running')
})

t.test('replaces the pod when the manifest changes, and serves its logs', async t => {
  const before = (await pods())[0]!.metadata.uid
  writeFileSync(manifest, pod(['echo', 'hello', 'edge'], 'Never'))
  const done = await until('the new pod to succeed', async () => (await pods()).find(p => p.metadata.uid !== before && p.status.phase === 'Succeeded'))
  t.equal(done.metadata.name, 'web-edge-1')
  t.equal((await pods()).length, 1, 'the old pod is gone')
  const logs = await request(`https://127.0.0.1:${port}/containerLogs/default/web-edge-1/main`, { dispatcher: agent })
  t.equal(await logs.body.text(), 'hello\nedge\n')
})

t.test('stops the pod when the manifest is removed', async t => {
  unlinkSync(manifest)
  const left = await until('no pods', async () => { const list = await pods(); return list.length === 0 ? list : undefined })
  t.same(left, [], 'the pod list is empty')
})

t.test('exits cleanly on SIGTERM', async t => {
  child.kill('SIGTERM')
  const code = await new Promise<number | null>(resolve => child.once('exit', resolve))
  t.equal(code, 0)
})
