// kubectl reaches the orchlet through nodes/proxy, and `kubectl top` works with no install: the resource metrics API is built in.
import t from 'tap'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { compileFixture } from '../agent/runtime/wasm/fixtures/compile.js'
import { buildWasmImageLayout, layoutTar } from '../agent/runtime/oci/layout-writer.js'
import { runKubectl, startOrch } from './orch-process.js'

const NODE = 'metrics-node'
const dir = mkdtempSync(join(tmpdir(), 'orch-metrics-e2e-'))
const dataDir = join(dir, 'data')
mkdirSync(join(dataDir, 'orchlet', 'wasm', 'import'), { recursive: true })
writeFileSync(join(dataDir, 'orchlet', 'wasm', 'import', 'tool.tar'), layoutTar(buildWasmImageLayout({ module: await compileFixture('tool'), refName: 'localhost/e2e/tool:1' })))
const orchletConfig = join(dir, 'orchlet.yaml')
writeFileSync(orchletConfig, 'apiVersion: orchlet.config.orch.io/v1beta1\nkind: OrchletConfiguration\nport: 0\nreadOnlyPort: 0\nhealthzPort: 0\n')
const orch = await startOrch(dataDir, 60_000, ['--node-name', NODE, '--orchlet-config', orchletConfig])
t.teardown(async () => { await orch.stop(); rmSync(dir, { recursive: true, force: true }) })

function kubectl (...args: string[]): ReturnType<typeof runKubectl> {
  return runKubectl(orch.kubeconfig, join(dir, 'cache'), args)
}

async function until<T> (what: string, f: () => Promise<T | undefined>, ms = 40_000): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    const v = await f()
    if (v !== undefined) return v
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${orch.logs().slice(-3000)}`)
    await new Promise(resolve => setTimeout(resolve, 300))
  }
}

writeFileSync(join(dir, 'burn.yaml'), `apiVersion: v1
kind: Pod
metadata: {name: burn, namespace: default, labels: {app: burn}}
spec:
  nodeName: ${NODE}
  runtimeClassName: wasm
  terminationGracePeriodSeconds: 1
  containers: [{name: main, image: "localhost/e2e/tool:1", command: [tool], args: [spin]}]
`)

t.before(async () => {
  await until('the node to be Ready', async () => / Ready /.test((await kubectl('get', 'nodes', '--no-headers')).stdout) ? true : undefined)
  const created = await kubectl('create', '-f', join(dir, 'burn.yaml'))
  if (created.code !== 0) throw new Error(created.stderr)
  await until('the pod to run', async () => (await kubectl('get', 'pod', 'burn', '-o', 'jsonpath={.status.phase}')).stdout === 'Running' ? true : undefined)
})

t.test('kubectl get --raw nodes/{name}/proxy/stats/summary answers the Summary API with the WebAssembly pod', async t => {
  const summary = await until('the pod in the summary', async () => {
    const r = await kubectl('get', '--raw', `/api/v1/nodes/${NODE}/proxy/stats/summary`)
    if (r.code !== 0) return undefined
    const s = JSON.parse(r.stdout) as { node: { nodeName: string; cpu?: { usageCoreNanoSeconds: number } }; pods: Array<{ podRef: { name: string }; containers: Array<{ name: string; cpu?: { usageCoreNanoSeconds: number }; memory?: { workingSetBytes: number } }> }> }
    const c = s.pods.find(p => p.podRef.name === 'burn')?.containers[0]
    return c?.cpu !== undefined && c.memory !== undefined ? s : undefined
  })
  t.equal(summary.node.nodeName, NODE)
  t.ok(summary.node.cpu!.usageCoreNanoSeconds > 0, 'node CPU')
  const c = summary.pods.find(p => p.podRef.name === 'burn')!.containers[0]!
  t.equal(c.name, 'main')
  t.ok(c.cpu!.usageCoreNanoSeconds > 0, 'the WebAssembly container has CPU time')
  t.ok(c.memory!.workingSetBytes > 0, 'and memory')
  const healthz = await kubectl('get', '--raw', `/api/v1/nodes/${NODE}/proxy/healthz`)
  t.equal(healthz.stdout.trim(), 'ok', 'another orchlet endpoint through the proxy')
})

t.test('kubectl top node and kubectl top pod show usage from the metrics API', async t => {
  const group = JSON.parse((await kubectl('get', '--raw', '/apis/metrics.k8s.io/v1beta1')).stdout) as { resources: Array<{ name: string; verbs: string[] }> }
  t.same(group.resources.map(r => r.name).sort(), ['nodes', 'pods'])
  const node = await until('kubectl top node', async () => {
    const r = await kubectl('top', 'node')
    return r.code === 0 ? r.stdout : undefined
  })
  t.match(node, /^NAME\s+CPU\(cores\)\s+CPU%\s+MEMORY\(bytes\)\s+MEMORY%/)
  t.match(node, new RegExp(`\\n${NODE}\\s+\\d+m\\s+\\d+%\\s+\\d+Mi\\s+\\d+%`))
  const pod = await until('kubectl top pod', async () => {
    const r = await kubectl('top', 'pod', '-l', 'app=burn')
    return r.code === 0 && /burn/.test(r.stdout) ? r.stdout : undefined
  })
  const m = /\nburn\s+(\d+)m\s+(\d+)Mi/.exec(pod)
  t.ok(m !== null, pod)
  // A shared machine gives the spinning module an unknown share of a core; it is always far above an idle pod's.
  t.ok(Number(m![1]) > 10, `the spinning pod's CPU is measured (${m![1]}m)`)
  const containers = await kubectl('top', 'pod', 'burn', '--containers')
  t.match(containers.stdout, /\nburn\s+main\s+\d+m/)
  const orchGroup = await kubectl('get', '--raw', '/apis/metrics.orch.io/v1beta1/namespaces/default/pods/burn')
  t.match(JSON.parse(orchGroup.stdout), { kind: 'PodMetrics', apiVersion: 'metrics.orch.io/v1beta1', metadata: { name: 'burn', labels: { app: 'burn' } }, containers: [{ name: 'main' }] })
  const write = await kubectl('delete', '--raw', '/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/burn')
  t.not(write.code, 0, 'the metrics API is read-only')
})
