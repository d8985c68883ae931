// `orch up` runs an orchlet for the local node: the node turns Ready and WebAssembly pods bound to it run.
import t from 'tap'
import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Agent, request } from 'undici'
import { compileFixture } from '../agent/runtime/wasm/fixtures/compile.js'
import { buildWasmImageLayout, layoutTar } from '../agent/runtime/oci/layout-writer.js'
import { runKubectl, startOrch } from './orch-process.js'

const NODE = 'e2e-node'
const dir = mkdtempSync(join(tmpdir(), 'orch-node-e2e-'))
const dataDir = join(dir, 'data')
mkdirSync(join(dataDir, 'orchlet', 'wasm', 'import'), { recursive: true })
writeFileSync(join(dataDir, 'orchlet', 'wasm', 'import', 'tool.tar'), layoutTar(buildWasmImageLayout({ module: await compileFixture('tool'), refName: 'localhost/e2e/tool:1' })))

// The local orchlet also reads static pods from a folder, so their mirror pods can be checked.
const manifests = join(dir, 'manifests')
mkdirSync(manifests)
writeFileSync(join(manifests, 'static.yaml'), `apiVersion: v1
kind: Pod
metadata: {name: static-web}
spec:
  runtimeClassName: wasm
  terminationGracePeriodSeconds: 1
  containers: [{name: main, image: "localhost/e2e/tool:1", command: [tool], args: [spin]}]
`)
const orchletConfig = join(dir, 'orchlet.yaml')
writeFileSync(orchletConfig, `apiVersion: orchlet.config.orch.io/v1beta1
kind: OrchletConfiguration
port: 0
readOnlyPort: 0
healthzPort: 0
staticPodPath: ${manifests}
fileCheckFrequency: 1s
`)
const orch = await startOrch(dataDir, 60_000, ['--node-name', NODE, '--orchlet-config', orchletConfig])
t.teardown(async () => { await orch.stop(); rmSync(dir, { recursive: true, force: true }) })

function kubectl (...args: string[]): ReturnType<typeof runKubectl> {
  return runKubectl(orch.kubeconfig, join(dir, 'cache'), args)
}

async function until<T> (what: string, f: () => Promise<T | undefined>, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    const v = await f()
    if (v !== undefined) return v
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${orch.logs().slice(-3000)}`)
    await new Promise(resolve => setTimeout(resolve, 200))
  }
}

function podYaml (name: string, args: string[], extra = ''): string {
  const p = join(dir, `${name}.yaml`)
  writeFileSync(p, `apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: default}
spec:
  nodeName: ${NODE}
  runtimeClassName: wasm
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  containers:
  - name: main
    image: localhost/e2e/tool:1
    command: [tool]
    args: ${JSON.stringify(args)}
${extra}`)
  return p
}

async function podJson (name: string): Promise<{ status?: { phase?: string; containerStatuses?: Array<{ state: { terminated?: { exitCode: number; reason: string } } }> } } | undefined> {
  const r = await kubectl('get', 'pod', name, '-o', 'json')
  return r.code === 0 ? JSON.parse(r.stdout) : undefined
}

t.test('kubectl get nodes shows the local node Ready', async t => {
  const line = await until('the node to be Ready', async () => {
    const r = await kubectl('get', 'nodes', '--no-headers')
    return / Ready /.test(r.stdout) ? r.stdout : undefined
  })
  t.match(line, new RegExp(`^${NODE}\\s+Ready`))
  const wide = await kubectl('get', 'nodes', '-o', 'wide')
  t.match(wide.stdout, /^NAME\s+STATUS\s+ROLES\s+AGE\s+VERSION\s+INTERNAL-IP\s+EXTERNAL-IP\s+OS-IMAGE\s+KERNEL-VERSION\s+CONTAINER-RUNTIME\n/, 'the wide node columns')
  const node = JSON.parse((await kubectl('get', 'node', NODE, '-o', 'json')).stdout)
  t.equal(node.metadata.labels['orch.io/hostname'], NODE)
  t.ok(Number(node.status.capacity.pods) > 0, 'capacity is reported')
  t.ok(node.status.daemonEndpoints.kubeletEndpoint.Port > 0, 'the orchlet port is published')
  const lease = await kubectl('get', 'lease', NODE, '-n', 'orch-node-lease', '-o', 'jsonpath={.spec.holderIdentity}')
  t.equal(lease.stdout, NODE, 'the node lease is renewed')
})

t.test('a WebAssembly pod bound to the node runs to completion and its logs come from the orchlet', async t => {
  t.equal((await kubectl('create', '-f', podYaml('hello', ['echo', 'hello', 'from', 'wasm']))).code, 0)
  const pod = await until('Succeeded', async () => { const p = await podJson('hello'); return p?.status?.phase === 'Succeeded' ? p : undefined })
  t.equal(pod.status!.containerStatuses![0]!.state.terminated!.exitCode, 0)
  const node = JSON.parse((await kubectl('get', 'node', NODE, '-o', 'json')).stdout)
  const port = node.status.daemonEndpoints.kubeletEndpoint.Port
  const res = await request(`https://127.0.0.1:${port}/containerLogs/default/hello/main`, { dispatcher: new Agent({ connect: { rejectUnauthorized: false } }) })
  t.equal(await res.body.text(), 'hello\nfrom\nwasm\n')
})

t.test('a pod that allocates past its memory limit is OOMKilled and reported so', async t => {
  await kubectl('create', '-f', podYaml('hog', ['grow', '64'], '    resources: {limits: {memory: 16Mi}}\n'))
  const pod = await until('Failed', async () => { const p = await podJson('hog'); return p?.status?.phase === 'Failed' ? p : undefined })
  const term = pod.status!.containerStatuses![0]!.state.terminated!
  t.equal(term.reason, 'OOMKilled')
  t.equal(term.exitCode, 137)
})

t.test('deleting a running pod stops it and removes it', async t => {
  await kubectl('create', '-f', podYaml('spinner', ['spin']))
  await until('Running', async () => { const p = await podJson('spinner'); return p?.status?.phase === 'Running' ? p : undefined })
  const del = await kubectl('delete', 'pod', 'spinner', '--wait=true', '--timeout=30s')
  t.equal(del.code, 0, del.stderr)
  t.equal((await kubectl('get', 'pod', 'spinner')).code, 1, 'the pod is gone')
})

t.test('a static pod gets a mirror pod in the API server carrying its status', async t => {
  const name = `static-web-${NODE}`
  const mirror = await until('the mirror pod to be Running', async () => {
    const r = await kubectl('get', 'pod', name, '-o', 'json')
    if (r.code !== 0) return undefined
    const p = JSON.parse(r.stdout)
    return p.status?.phase === 'Running' ? p : undefined
  })
  t.type(mirror.metadata.annotations['orch.io/config.mirror'], 'string')
  t.equal(mirror.spec.nodeName, NODE)
  const table = await kubectl('get', 'pod', name, '--no-headers')
  t.match(table.stdout, new RegExp(`^${name}\\s+1/1\\s+Running\\s+0`), 'kubectl shows READY, STATUS and RESTARTS')
  const wide = await kubectl('get', 'pod', name, '-o', 'wide')
  t.match(wide.stdout, /^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\s+IP\s+NODE\s+NOMINATED NODE\s+READINESS GATES\n/, 'the wide pod columns')
  t.match(wide.stdout, new RegExp(`\\s${NODE}\\s+<none>\\s+<none>\\n`), 'unset nominated node and readiness gates print <none>')
})

t.test('a deleted mirror pod is made again, owned by the Node', async t => {
  const name = `static-web-${NODE}`
  const before = JSON.parse((await kubectl('get', 'pod', name, '-o', 'json')).stdout)
  const node = JSON.parse((await kubectl('get', 'node', NODE, '-o', 'json')).stdout)
  t.same(before.metadata.ownerReferences, [{ apiVersion: 'v1', kind: 'Node', name: NODE, uid: node.metadata.uid, controller: true }])
  // --wait=false: the new mirror (same name) may be listed before kubectl's waiter starts, which then never sees a delete.
  const del = await kubectl('delete', 'pod', name, '--wait=false')
  t.equal(del.code, 0, del.stderr)
  const after = await until('a new mirror pod', async () => {
    const r = await kubectl('get', 'pod', name, '-o', 'json')
    if (r.code !== 0) return undefined
    const p = JSON.parse(r.stdout)
    return p.metadata.uid !== before.metadata.uid && p.metadata.deletionTimestamp === undefined && p.status?.phase === 'Running' ? p : undefined
  })
  t.equal(after.metadata.annotations['orch.io/config.mirror'], before.metadata.annotations['orch.io/config.mirror'])
})

t.test('the node status lists the images on the node', async t => {
  const images = await until('status.images', async () => {
    const node = JSON.parse((await kubectl('get', 'node', NODE, '-o', 'json')).stdout)
    return node.status.images?.length > 0 ? node.status.images as Array<{ names: string[]; sizeBytes: number }> : undefined
  })
  const tool = images.find(i => i.names.includes('localhost/e2e/tool:1'))
  t.ok(tool, JSON.stringify(images))
  t.ok(tool!.sizeBytes > 0)
  const node = JSON.parse((await kubectl('get', 'node', NODE, '-o', 'json')).stdout)
  t.equal(node.metadata.annotations['volumes.orch.io/controller-managed-attach-detach'], 'true')
})

t.test('kubectl logs reads a pod\'s output through the API server', async t => {
  await until('hello to be Succeeded', async () => { const p = await podJson('hello'); return p?.status?.phase === 'Succeeded' ? p : undefined })
  const all = await kubectl('logs', 'hello')
  t.equal(all.code, 0, all.stderr)
  t.equal(all.stdout, 'hello\nfrom\nwasm\n')
  const tail = await kubectl('logs', 'hello', '-c', 'main', '--tail=1')
  t.equal(tail.code, 0, tail.stderr)
  t.equal(tail.stdout, 'wasm\n')
  const stamped = await kubectl('logs', 'hello', '--timestamps', '--limit-bytes=200')
  t.match(stamped.stdout, /^\d{4}-\d{2}-\d{2}T\S+ hello\n/, 'timestamps are passed on to the orchlet')
})

t.test('kubectl logs -f streams a running pod\'s lines until interrupted', async t => {
  await kubectl('create', '-f', podYaml('ticker', ['tick', '200']))
  await until('ticker Running', async () => { const p = await podJson('ticker'); return p?.status?.phase === 'Running' ? p : undefined })
  const child = spawn('/usr/bin/kubectl', ['--kubeconfig', orch.kubeconfig, '--cache-dir', join(dir, 'cache'), 'logs', '-f', 'ticker'], { stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  child.stdout.on('data', (d: Buffer) => { out += d.toString() })
  const exited = new Promise<void>(resolve => child.once('exit', () => resolve()))
  const started = Date.now()
  await until('three streamed lines', async () => (out.match(/^tick \d+$/gm) ?? []).length >= 3 ? true : undefined, 20_000)
  t.ok(Date.now() - started >= 200, 'lines arrive over time, not at once')
  t.notOk(child.exitCode !== null, 'kubectl is still following')
  child.kill('SIGINT')
  await exited
  const lines = out.trim().split('\n')
  t.same(lines.slice(0, 3).map(l => /^tick \d+$/.test(l)), [true, true, true], out)
  t.equal((await kubectl('delete', 'pod', 'ticker', '--wait=true', '--timeout=30s')).code, 0)
})

t.test('kubectl logs errors: unknown container, missing pod', async t => {
  const badContainer = await kubectl('logs', 'hello', '-c', 'side')
  t.equal(badContainer.code, 1)
  t.match(badContainer.stderr, /container side is not valid for pod hello/)
  const missing = await kubectl('logs', 'nope')
  t.equal(missing.code, 1)
  t.match(missing.stderr, /pods "nope" not found/)
})

t.test('the orchlet records events that kubectl describe and kubectl get events show', async t => {
  const described = await until('describe to list the events', async () => {
    const r = await kubectl('describe', 'pod', 'hello')
    return /Normal\s+Started\s/.test(r.stdout) ? r.stdout : undefined
  })
  t.match(described, /Events:/)
  t.match(described, /Normal\s+Pulled\s+\S+\s+orchlet\s+Container image "localhost\/e2e\/tool:1" already present on machine/)
  t.match(described, /Normal\s+Created\s+\S+\s+orchlet\s+Created container main/)
  t.match(described, /Normal\s+Started\s+\S+\s+orchlet\s+Started container main/)
  const table = await kubectl('get', 'events', '--field-selector', 'involvedObject.name=hello')
  t.equal(table.code, 0, table.stderr)
  // kubectl's own layout: LAST SEEN TYPE REASON OBJECT MESSAGE (Name is wide-only), no AGE.
  t.match(table.stdout, /^LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE\n/)
  t.match(table.stdout, /\n\S+\s+Normal\s+Started\s+pod\/hello\s+Started container main/)
  const list = JSON.parse((await kubectl('get', 'events', '-o', 'json', '--field-selector', 'involvedObject.name=hello,reason=Started')).stdout)
  const ev = list.items[0]
  t.same(ev.source, { component: 'orchlet', host: NODE })
  t.equal(ev.involvedObject.fieldPath, 'spec.containers{main}')
  t.equal(ev.reportingComponent, 'orchlet')
  const node = await until('node events', async () => {
    const r = await kubectl('get', 'events', '-o', 'json', '--field-selector', `involvedObject.kind=Node,involvedObject.name=${NODE}`)
    const reasons = r.code === 0 ? (JSON.parse(r.stdout).items as Array<{ reason: string }>).map(e => e.reason) : []
    return reasons.includes('NodeReady') && reasons.includes('Starting') ? reasons : undefined
  })
  t.ok(node.includes('NodeHasSufficientMemory'), 'the pressure conditions are recorded too')
})
