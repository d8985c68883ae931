// An orchlet that stops: its node turns Unknown after the grace period, is tainted unreachable, and its pods are
// evicted once their tolerationSeconds pass (orch up with a separate orchlet process, real kubectl).
import t from 'tap'
import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { compileFixture } from '../agent/runtime/wasm/fixtures/compile.js'
import { buildWasmImageLayout, layoutTar } from '../agent/runtime/oci/layout-writer.js'
import { runKubectl, startOrch } from './orch-process.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const NODE = 'lost-node'
const dir = mkdtempSync(join(tmpdir(), 'orch-node-lost-'))
const orch = await startOrch(join(dir, 'data'), 60_000, ['--orchlet=false', '--node-monitor-grace-period', '6s'])
const root = join(dir, 'orchlet')
mkdirSync(join(root, 'wasm', 'import'), { recursive: true })
writeFileSync(join(root, 'wasm', 'import', 'tool.tar'), layoutTar(buildWasmImageLayout({ module: await compileFixture('tool'), refName: 'localhost/e2e/tool:1' })))
const orchlet = spawn(process.execPath, ['--import', 'tsx', 'agent/cli/main.ts', '--orchconfig', orch.kubeconfig, '--root-dir', root,
  '--cert-dir', join(root, 'pki'), '--port', '0', '--read-only-port', '0', '--healthz-port', '0', '--hostname-override', NODE,
  '--node-status-update-frequency', '1s', '--container-runtime-endpoint', `unix://${join(dir, 'none.sock')}`], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] })
let orchletLog = ''
orchlet.stderr.on('data', (d: Buffer) => { orchletLog += d.toString() })
t.teardown(async () => {
  if (orchlet.exitCode === null && orchlet.signalCode === null) { orchlet.kill('SIGKILL'); await new Promise(resolve => orchlet.once('exit', resolve)) }
  await orch.stop()
  rmSync(dir, { recursive: true, force: true })
})

const kubectl = (...args: string[]): ReturnType<typeof runKubectl> => runKubectl(orch.kubeconfig, join(dir, 'cache'), args)
async function json (...args: string[]): Promise<any> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const r = await kubectl(...args, '-o', 'json')
  return r.code === 0 ? JSON.parse(r.stdout) : undefined
}
async function until<T> (what: string, f: () => Promise<T | undefined | false>, ms = 60_000): Promise<T> {
  const end = Date.now() + ms
  for (;;) {
    const v = await f()
    if (v !== undefined && v !== false) return v
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}\n${orch.logs().slice(-2000)}\n${orchletLog.slice(-2000)}`)
    await new Promise(resolve => setTimeout(resolve, 250))
  }
}
const ready = (n: any): string | undefined => (n?.status?.conditions ?? []).find((c: { type: string }) => c.type === 'Ready')?.status // eslint-disable-line @typescript-eslint/no-explicit-any

t.test('a stopped orchlet: node Unknown, tainted, its pod evicted after tolerationSeconds', async t => {
  await until('the node to be Ready', async () => ready(await json('get', 'node', NODE)) === 'True')
  writeFileSync(join(dir, 'pod.yaml'), `apiVersion: v1
kind: Pod
metadata: {name: edge, namespace: default}
spec:
  terminationGracePeriodSeconds: 1
  tolerations: [{key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute, tolerationSeconds: 3}]
  containers: [{name: main, image: "localhost/e2e/tool:1", command: [tool], args: [tick, "1000"]}]
`)
  t.equal((await kubectl('apply', '-f', join(dir, 'pod.yaml'))).code, 0)
  await until('the pod to run', async () => (await json('get', 'pod', 'edge'))?.status?.phase === 'Running')
  // Still Ready across several grace periods while the orchlet reports.
  await new Promise(resolve => setTimeout(resolve, 8000))
  t.equal(ready(await json('get', 'node', NODE)), 'True', 'a reporting node stays Ready')
  orchlet.kill('SIGKILL')
  const node = await until('the node to turn Unknown and be tainted', async () => {
    const n = await json('get', 'node', NODE)
    return ready(n) === 'Unknown' && (n.spec.taints ?? []).some((x: { key: string, effect: string }) => x.key === 'node.kubernetes.io/unreachable' && x.effect === 'NoExecute') ? n : undefined
  }, 30_000)
  const taint = node.spec.taints.find((x: { key: string, effect: string }) => x.effect === 'NoExecute')
  t.equal(node.status.conditions.find((c: { type: string }) => c.type === 'Ready').reason, 'NodeStatusUnknown')
  const pod = await until('the pod to be evicted', async () => {
    const p = await json('get', 'pod', 'edge')
    return p?.metadata?.deletionTimestamp !== undefined ? p : undefined
  }, 30_000)
  // deletionTimestamp = eviction time + the pod's 1 s grace period; eviction waited the 3 s toleration.
  const waited = (Date.parse(pod.metadata.deletionTimestamp) - Date.parse(taint.timeAdded)) / 1000
  t.ok(waited >= 3, `evicted ${waited}s after the taint (grace included)`)
  t.match((await kubectl('get', 'events', '--field-selector', 'involvedObject.name=edge')).stdout, /TaintManagerEviction/)
})
