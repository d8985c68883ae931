// `orch up` runs what users declare: Deployments roll out and back, Jobs complete, CronJobs fire, Services get
// endpoints, the scheduler explains what it cannot place; all through the real kubectl, on WebAssembly pods.
import t from 'tap'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { join } from 'node:path'
import { compileFixture } from '../agent/runtime/wasm/fixtures/compile.js'
import { buildWasmImageLayout, layoutTar } from '../agent/runtime/oci/layout-writer.js'
import { runKubectl, startOrch } from './orch-process.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const NODE = 'wl-node'
const dir = mkdtempSync(join(tmpdir(), 'orch-workloads-e2e-'))
const dataDir = join(dir, 'data')
const importDir = join(dataDir, 'orchlet', 'wasm', 'import')
mkdirSync(importDir, { recursive: true })
const module = await compileFixture('tool')
writeFileSync(join(importDir, 'tool-1.tar'), layoutTar(buildWasmImageLayout({ module, refName: 'localhost/e2e/tool:1' })))
// The second image the way the README shows: `orchlet pack` of a .wasm file, dropped in the import folder.
writeFileSync(join(dir, 'tool.wasm'), module)
const packed = spawnSync(process.execPath, [join(ROOT, 'bin', 'orchlet.js'), 'pack', join(dir, 'tool.wasm'), '--name', 'localhost/e2e/tool:2', '--output', join(importDir, 'tool-2.tar')], { encoding: 'utf8' })
if (packed.status !== 0) throw new Error(`orchlet pack failed: ${packed.stderr}`)
const orchletConfig = join(dir, 'orchlet.yaml')
writeFileSync(orchletConfig, 'apiVersion: orchlet.config.orch.io/v1beta1\nkind: OrchletConfiguration\nport: 0\nreadOnlyPort: 0\nhealthzPort: 0\n')
const orch = await startOrch(dataDir, 60_000, ['--node-name', NODE, '--orchlet-config', orchletConfig])
t.teardown(async () => { await orch.stop(); rmSync(dir, { recursive: true, force: true }) })

const kubectl = (...args: string[]): ReturnType<typeof runKubectl> => runKubectl(orch.kubeconfig, join(dir, 'cache'), args)

async function ok (...args: string[]): Promise<string> {
  const r = await kubectl(...args)
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${r.code}): ${r.stderr}\n${orch.logs().slice(-2000)}`)
  return r.stdout
}

async function json (...args: string[]): Promise<any> { // eslint-disable-line @typescript-eslint/no-explicit-any
  return JSON.parse(await ok(...args, '-o', 'json'))
}

async function until<T> (what: string, f: () => Promise<T | undefined | false>, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    const v = await f()
    if (v !== undefined && v !== false) return v
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${orch.logs().slice(-3000)}`)
    await new Promise(resolve => setTimeout(resolve, 250))
  }
}

function apply (name: string, yaml: string): Promise<string> {
  const p = join(dir, `${name}.yaml`)
  writeFileSync(p, yaml)
  return ok('apply', '-f', p)
}

// The CronJob is made first: its first run comes at the next whole minute, while the other tests run.
await apply('cron', `apiVersion: batch/v1
kind: CronJob
metadata: {name: every-minute}
spec:
  schedule: "* * * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [{name: main, image: "localhost/e2e/tool:1", command: [tool], args: [echo, tick]}]
`)

await until('the node to be Ready', async () => (await kubectl('get', 'node', NODE)).stdout.includes(' Ready'))

t.test('a Deployment made without YAML runs its pods on WebAssembly and rolls out', async t => {
  await ok('create', 'deployment', 'web', '--image=localhost/e2e/tool:1', '--replicas=3', '--', 'tool', 'tick', '1000')
  const status = await ok('rollout', 'status', 'deployment/web', '--timeout=60s')
  t.match(status, /successfully rolled out/)
  const rs = await json('get', 'rs', '-l', 'app=web')
  t.equal(rs.items.length, 1, 'one ReplicaSet')
  t.equal(rs.items[0].metadata.annotations['deployment.kubernetes.io/revision'], '1')
  const pods = await json('get', 'pods', '-l', 'app=web')
  t.equal(pods.items.length, 3)
  for (const p of pods.items) {
    t.equal(p.status.phase, 'Running', `${p.metadata.name} runs`)
    t.equal(p.spec.nodeName, NODE, 'scheduled on the local node')
    t.same(p.status.conditions.find((c: { type: string }) => c.type === 'PodScheduled').status, 'True')
  }
  const events = await ok('get', 'events', '--field-selector', 'reason=Scheduled')
  t.match(events, new RegExp(`Successfully assigned default/web-\\S+ to ${NODE}`))
})

t.test('set image rolls out a new ReplicaSet; history and undo use the revisions', async t => {
  await ok('set', 'image', 'deployment/web', 'tool=localhost/e2e/tool:2')
  t.match(await ok('rollout', 'status', 'deployment/web', '--timeout=60s'), /successfully rolled out/)
  const rs = await json('get', 'rs', '-l', 'app=web')
  t.equal(rs.items.length, 2, 'a second ReplicaSet')
  const byImage = (image: string): any => rs.items.find((r: any) => r.spec.template.spec.containers[0].image === image) // eslint-disable-line @typescript-eslint/no-explicit-any
  t.equal(byImage('localhost/e2e/tool:2').spec.replicas, 3)
  t.equal(byImage('localhost/e2e/tool:1').spec.replicas, 0)
  const history = await ok('rollout', 'history', 'deployment/web')
  t.match(history, /^1\s+<none>$/m)
  t.match(history, /^2\s+<none>$/m)
  await ok('rollout', 'undo', 'deployment/web')
  t.match(await ok('rollout', 'status', 'deployment/web', '--timeout=60s'), /successfully rolled out/)
  const after = await json('get', 'rs', '-l', 'app=web')
  t.equal(after.items.length, 2, 'undo reuses the first ReplicaSet')
  const back = after.items.find((r: any) => r.spec.template.spec.containers[0].image === 'localhost/e2e/tool:1') // eslint-disable-line @typescript-eslint/no-explicit-any
  t.equal(back.spec.replicas, 3)
  t.equal(back.metadata.annotations['deployment.kubernetes.io/revision'], '3', 'its revision becomes the newest')
  const d = await json('get', 'deployment', 'web')
  t.equal(d.status.updatedReplicas, 3)
  t.equal(d.status.availableReplicas, 3)
  t.equal(d.status.conditions.find((c: { type: string }) => c.type === 'Progressing').reason, 'NewReplicaSetAvailable')
})

t.test('scaling up and down, and a deleted pod is replaced', async t => {
  await ok('scale', 'deployment/web', '--replicas=5')
  await until('5 ready replicas', async () => (await json('get', 'deployment', 'web')).status.readyReplicas === 5)
  await ok('scale', 'deployment/web', '--replicas=2')
  await until('2 pods', async () => (await json('get', 'pods', '-l', 'app=web')).items.filter((p: any) => p.metadata.deletionTimestamp === undefined).length === 2) // eslint-disable-line @typescript-eslint/no-explicit-any
  // A pod of the scale-down may still be terminating (and vanish at any moment): the victim is a live one.
  const pods = await json('get', 'pods', '-l', 'app=web')
  const victim = pods.items.find((p: any) => p.metadata.deletionTimestamp === undefined).metadata.name // eslint-disable-line @typescript-eslint/no-explicit-any
  await ok('delete', 'pod', victim, '--wait=false')
  const replaced = await until('a replacement pod', async () => {
    const now = await json('get', 'pods', '-l', 'app=web')
    const live = now.items.filter((p: any) => p.metadata.name !== victim && p.status.phase === 'Running') // eslint-disable-line @typescript-eslint/no-explicit-any
    return live.length === 2 ? live : undefined
  })
  t.equal(replaced.length, 2)
  t.notOk(replaced.some((p: { metadata: { name: string } }) => p.metadata.name === victim))
})

t.test('a Job with two completions completes', async t => {
  await apply('job', `apiVersion: batch/v1
kind: Job
metadata: {name: twice}
spec:
  completions: 2
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: "localhost/e2e/tool:1", command: [tool], args: [echo, done]}]
`)
  await ok('wait', '--for=condition=complete', 'job/twice', '--timeout=60s')
  const job = await json('get', 'job', 'twice')
  t.equal(job.status.succeeded, 2)
  t.notOk(job.status.failed)
  const pods = await json('get', 'pods', '-l', 'job-name=twice')
  t.equal(pods.items.length, 2, 'exactly two pods ran')
  t.ok(pods.items.every((p: { status: { phase: string } }) => p.status.phase === 'Succeeded'))
  t.ok(pods.items.every((p: { metadata: { finalizers?: string[] } }) => (p.metadata.finalizers ?? []).length === 0), 'tracking finalizers removed')
})

t.test('a Service gets Endpoints and an EndpointSlice of its ready pods', async t => {
  await ok('expose', 'deployment/web', '--port=80', '--target-port=8080')
  const ep = await until('endpoints', async () => {
    const e = await json('get', 'endpoints', 'web')
    return (e.subsets?.[0]?.addresses ?? []).length === 2 ? e : undefined
  })
  t.same(ep.subsets[0].ports, [{ port: 8080, protocol: 'TCP' }])
  t.ok(ep.subsets[0].addresses.every((a: { targetRef: { kind: string } }) => a.targetRef.kind === 'Pod'))
  const slices = await json('get', 'endpointslices.discovery.k8s.io', '-l', 'kubernetes.io/service-name=web')
  t.equal(slices.items.length, 1)
  t.equal(slices.items[0].endpoints.length, 2)
  t.ok(slices.items[0].endpoints.every((e: { conditions: { ready: boolean } }) => e.conditions.ready))
})

t.test('an unschedulable pod says why, and is placed once the node has room', async t => {
  await ok('run', 'huge', '--image=localhost/e2e/tool:1', '--overrides={"spec":{"containers":[{"name":"huge","image":"localhost/e2e/tool:1","command":["tool","tick","1000"],"resources":{"requests":{"cpu":"1000"}}}]}}')
  const cond = await until('PodScheduled=False', async () => {
    const p = await json('get', 'pod', 'huge')
    const c = (p.status.conditions ?? []).find((x: { type: string }) => x.type === 'PodScheduled')
    return c?.status === 'False' ? c : undefined
  })
  t.equal(cond.reason, 'Unschedulable')
  t.equal(cond.message, '0/1 nodes are available: 1 Insufficient cpu.')
  t.match(await ok('get', 'events', '--field-selector', 'involvedObject.name=huge'), /FailedScheduling\s+pod\/huge\s+0\/1 nodes are available: 1 Insufficient cpu\./)
  await ok('delete', 'pod', 'huge', '--wait=false')
})

t.test('cordon keeps new pods off the node; uncordon lets them on', async t => {
  await ok('cordon', NODE)
  await ok('run', 'later', '--image=localhost/e2e/tool:1', '--', 'tool', 'tick', '1000')
  const cond = await until('PodScheduled=False', async () => {
    const p = await json('get', 'pod', 'later')
    return (p.status.conditions ?? []).find((x: { type: string, status: string }) => x.type === 'PodScheduled' && x.status === 'False')
  })
  t.equal(cond.message, '0/1 nodes are available: 1 node(s) were unschedulable.')
  await ok('uncordon', NODE)
  const p = await until('the pod to run', async () => {
    const pod = await json('get', 'pod', 'later')
    return pod.status.phase === 'Running' ? pod : undefined
  })
  t.equal(p.spec.nodeName, NODE)
})

t.test('drain evicts through the pods\' disruption budget', async t => {
  await apply('pdb-none', `apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web}
spec: {maxUnavailable: 0, selector: {matchLabels: {app: web}}}
`)
  await until('the budget status', async () => (await json('get', 'pdb', 'web')).status?.expectedPods === 2)
  const refused = await kubectl('drain', NODE, '--pod-selector=app=web', '--timeout=3s')
  t.not(refused.code, 0, 'drain cannot finish')
  t.match(refused.stderr + refused.stdout, /Cannot evict pod as it would violate the pod's disruption budget/)
  const running = await json('get', 'pods', '-l', 'app=web')
  t.equal(running.items.filter((p: any) => p.metadata.deletionTimestamp === undefined).length, 2, 'both pods kept') // eslint-disable-line @typescript-eslint/no-explicit-any
  await ok('delete', 'pdb', 'web')
  await apply('pdb-one', `apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web}
spec: {minAvailable: 1, selector: {matchLabels: {app: web}}}
`)
  const pdb = await until('one disruption allowed', async () => {
    const b = await json('get', 'pdb', 'web')
    return b.status?.disruptionsAllowed === 1 ? b : undefined
  })
  t.equal(pdb.status.currentHealthy, 2)
  t.equal(pdb.status.desiredHealthy, 1)
  // One pod may go; its replacement cannot be placed on the cordoned node, so the second stays.
  const partial = await kubectl('drain', NODE, '--pod-selector=app=web', '--timeout=4s')
  t.not(partial.code, 0)
  t.match(partial.stdout + partial.stderr, /evicted/)
  const left = await json('get', 'pods', '-l', 'app=web')
  const runningOnNode = left.items.filter((p: any) => p.metadata.deletionTimestamp === undefined && p.spec.nodeName === NODE) // eslint-disable-line @typescript-eslint/no-explicit-any
  t.equal(runningOnNode.length, 1, 'the budget kept one pod')
  await ok('uncordon', NODE)
  await until('two ready replicas again', async () => (await json('get', 'deployment', 'web')).status.readyReplicas === 2)
})

t.test('the CronJob fires and its Job completes', async t => {
  const job = await until('a job of the cron job', async () => {
    const jobs = await json('get', 'jobs')
    return jobs.items.find((j: { metadata: { name: string } }) => j.metadata.name.startsWith('every-minute-'))
  }, 90_000)
  t.equal(job.metadata.ownerReferences[0].kind, 'CronJob')
  await ok('wait', '--for=condition=complete', `job/${String(job.metadata.name)}`, '--timeout=60s')
  const cj = await until('lastSuccessfulTime', async () => {
    const c = await json('get', 'cronjob', 'every-minute')
    return c.status.lastSuccessfulTime !== undefined ? c : undefined
  })
  t.ok(cj.status.lastScheduleTime)
})

t.test('a DaemonSet runs one pod on the node; a StatefulSet has ordered, stable pods and rolls by revision', async t => {
  await apply('ds-sts', `apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      terminationGracePeriodSeconds: 1
      containers: [{name: main, image: "localhost/e2e/tool:1", command: [tool], args: [tick, "1000"]}]
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 2
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      terminationGracePeriodSeconds: 1
      containers: [{name: main, image: "localhost/e2e/tool:1", command: [tool], args: [tick, "1000"]}]
`)
  t.match(await ok('rollout', 'status', 'daemonset/agent', '--timeout=60s'), /successfully rolled out/)
  const ds = await json('get', 'pods', '-l', 'app=agent')
  t.equal(ds.items.length, 1, 'one pod for the one node')
  t.equal(ds.items[0].spec.nodeName, NODE)
  await ok('rollout', 'status', 'statefulset/db', '--timeout=60s')
  const sts = await json('get', 'pods', '-l', 'app=db')
  t.same(sts.items.map((p: { metadata: { name: string } }) => p.metadata.name).sort(), ['db-0', 'db-1'])
  t.equal(sts.items[0].spec.hostname, sts.items[0].metadata.name)
  t.equal(sts.items[0].spec.subdomain, 'db')
  await ok('set', 'image', 'statefulset/db', 'main=localhost/e2e/tool:2')
  const rolled = await until('both pods on the new revision', async () => {
    const s = await json('get', 'statefulset', 'db')
    return s.status.updatedReplicas === 2 && s.status.readyReplicas === 2 && s.status.currentRevision === s.status.updateRevision ? s : undefined
  })
  t.equal(rolled.status.currentRevision, rolled.status.updateRevision)
  const revisions = await json('get', 'controllerrevisions', '-l', 'app=db')
  t.equal(revisions.items.length, 2, 'one ControllerRevision per template')
  const pods = await json('get', 'pods', '-l', 'app=db')
  t.ok(pods.items.every((p: any) => p.spec.containers[0].image === 'localhost/e2e/tool:2')) // eslint-disable-line @typescript-eslint/no-explicit-any
})

t.test('a wasm RuntimeClass exists from the start', async t => {
  const rc = await json('get', 'runtimeclass', 'wasm')
  t.equal(rc.handler, 'wasm')
})

t.test('every namespace has a default ServiceAccount', async t => {
  await ok('create', 'namespace', 'team-a')
  const sa = await until('the default account', async () => {
    const r = await kubectl('get', 'serviceaccount', 'default', '-n', 'team-a', '-o', 'json')
    return r.code === 0 ? JSON.parse(r.stdout) : undefined
  })
  t.equal(sa.metadata.name, 'default')
})

t.test("a pod reads its service account's token, CA and namespace from the projected volume, and the token is the pod's", async t => {
  const mount = '/var/run/secrets/kubernetes.io/serviceaccount'
  for (const [name, file] of [['read-token', 'token'], ['read-ns', 'namespace'], ['read-ca', 'ca.crt']]) {
    await ok('run', name, '--image=localhost/e2e/tool:1', '--restart=Never', '--command', '--', 'tool', 'cat', `${mount}/${file}`)
  }
  for (const name of ['read-token', 'read-ns', 'read-ca']) {
    await until(`${name} to finish`, async () => JSON.parse(await ok('get', 'pod', name, '-o', 'json')).status.phase === 'Succeeded')
  }
  t.equal((await ok('logs', 'read-ns')).trim(), 'default')
  t.match(await ok('logs', 'read-ca'), /-----BEGIN CERTIFICATE-----/)
  const token = (await ok('logs', 'read-token')).trim()
  t.match(token, /^eyJ[\w-]+\.[\w-]+\.[\w-]+$/, 'a signed JWT')
  const pod = JSON.parse(await ok('get', 'pod', 'read-token', '-o', 'json'))
  const volume = pod.spec.volumes.find((v: { name: string }) => v.name.startsWith('kube-api-access-'))
  t.ok(volume?.projected, 'ServiceAccount admission added the projected volume')
  const who = await runKubectl('/dev/null', join(dir, 'cache'), ['--server', orch.server, '--certificate-authority', join(dataDir, 'pki', 'ca.crt'), '--token', token, 'auth', 'whoami', '-o', 'json'])
  const user = JSON.parse(who.stdout).status.userInfo
  t.equal(user.username, 'system:serviceaccount:default:default')
  t.same(user.extra['authentication.orch.io/pod-name'], ['read-token'], 'bound to the pod')
})
