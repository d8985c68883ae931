// kubectl attach to a WebAssembly container shows its output as it is written (WebSocket with kubectl 1.33, SPDY/3.1
// with kubectl 1.29);
// kubectl exec into one is refused with a clear message naming the runtime.
import t from 'tap'
import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { compileFixture } from '../agent/runtime/wasm/fixtures/compile.js'
import { buildWasmImageLayout, layoutTar } from '../agent/runtime/oci/layout-writer.js'
import { runKubectl, startOrch } from './orch-process.js'

const NODE = `wasm-attach-${process.pid}`
const dir = mkdtempSync(join(tmpdir(), 'orch-wasm-attach-'))
const dataDir = join(dir, 'data')
mkdirSync(join(dataDir, 'orchlet', 'wasm', 'import'), { recursive: true })
writeFileSync(join(dataDir, 'orchlet', 'wasm', 'import', 'tool.tar'), layoutTar(buildWasmImageLayout({ module: await compileFixture('tool'), refName: 'localhost/e2e/tool:1' })))
const orch = await startOrch(dataDir, 60_000, ['--node-name', NODE, '--container-runtime-endpoint', `unix://${join(dir, 'none.sock')}`])
const bin = (v: string): string => `/usr/lib/google-cloud-sdk/bin/kubectl.${v}`
const kubectl = (args: string[], v = '1.33'): ReturnType<typeof runKubectl> => runKubectl(orch.kubeconfig, join(dir, 'cache'), args, { binary: bin(v) })
t.teardown(async () => { await orch.stop(); rmSync(dir, { recursive: true, force: true }) })

const manifest = join(dir, 'ticker.yaml')
writeFileSync(manifest, `apiVersion: v1
kind: Pod
metadata: {name: ticker, namespace: default}
spec:
  nodeName: ${NODE}
  runtimeClassName: wasm
  terminationGracePeriodSeconds: 1
  containers: [{name: main, image: "localhost/e2e/tool:1", command: [tool], args: [tick, "200"]}]
`)
const created = await kubectl(['create', '-f', manifest])
if (created.code !== 0) throw new Error(created.stderr)
const deadline = Date.now() + 60_000
while ((await kubectl(['get', 'pod', 'ticker', '-o', 'jsonpath={.status.phase}'])).stdout !== 'Running') {
  if (Date.now() > deadline) throw new Error(`pod did not run\n${orch.logs().slice(-2000)}`)
  await new Promise(resolve => setTimeout(resolve, 300))
}

for (const v of ['1.33', '1.29']) {
  t.test(`kubectl ${v} attach (${v === '1.29' ? 'SPDY/3.1' : 'WebSocket'}) shows the WebAssembly container output as it is written`, async t => {
    // Some output exists before attaching (tick 1 at least), so a replay of the past would show.
    const logged = Date.now() + 15_000
    while (!(await kubectl(['logs', 'ticker'])).stdout.includes('tick 2') && Date.now() < logged) await new Promise(resolve => setTimeout(resolve, 100))
    const child = spawn(bin(v), ['--kubeconfig', orch.kubeconfig, 'attach', '-v=6', 'ticker'], { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    child.stdout.on('data', (d: Buffer) => { out += d.toString() })
    child.stderr.on('data', (d: Buffer) => { err += d.toString() })
    const until = Date.now() + 15_000
    while ((out.match(/tick \d+/g) ?? []).length < 3 && Date.now() < until && child.exitCode === null) await new Promise(resolve => setTimeout(resolve, 100))
    child.kill()
    const ticks = (out.match(/tick (\d+)/g) ?? []).map(s => Number(s.slice(5)))
    t.ok(ticks.length >= 3, ticks.length >= 3 ? 'ticks arrive while attached' : `ticks arrive while attached (${JSON.stringify(out)} ${err.slice(-1500)})`)
    t.ok(ticks.every((n, i) => i === 0 || n === ticks[i - 1]! + 1), 'in order, none repeated')
    t.ok(ticks[0]! > 1, 'only output written after attaching (the past is not replayed)')
    // kubectl -v=6 names the upgrade it made: SPDY for 1.29, the v5 WebSocket protocol for 1.33.
    if (v === '1.29') t.notMatch(err, /websocket/i, 'kubectl 1.29 attached over SPDY')
    else t.match(err, /v5\.channel\.k8s\.io/, 'kubectl 1.33 attached over WebSocket v5')
  })
}

t.test('kubectl exec into a WebAssembly container names the runtime that cannot exec', async t => {
  for (const v of ['1.29', '1.33']) {
    const r = await kubectl(['exec', 'ticker', '--', 'ls'], v)
    t.not(r.code, 0)
    t.match(r.stderr, /exec is not supported by the wasm runtime/, `kubectl ${v}`)
  }
})
