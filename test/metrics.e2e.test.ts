// `orch up` scraped as an operator would: the API server's /metrics through kubectl (authorized as the path
// /metrics), the in-process controller manager's and scheduler's, the local orchlet's /metrics and /metrics/resource,
// and a bad --show-hidden-metrics-for-version refused.
import t from 'tap'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { request } from 'undici'
import { compileFixture } from '../agent/runtime/wasm/fixtures/compile.js'
import { buildWasmImageLayout, layoutTar } from '../agent/runtime/oci/layout-writer.js'
import { runKubectl, spawnOrch, startOrch } from './orch-process.js'

const NODE = 'metrics-node'
const dir = mkdtempSync(join(tmpdir(), 'orch-metrics-e2e-'))
const dataDir = join(dir, 'data')
mkdirSync(join(dataDir, 'orchlet', 'wasm', 'import'), { recursive: true })
writeFileSync(join(dataDir, 'orchlet', 'wasm', 'import', 'tool.tar'), layoutTar(buildWasmImageLayout({ module: await compileFixture('tool'), refName: 'localhost/e2e/tool:1' })))
const orchletConfig = join(dir, 'orchlet.yaml')
writeFileSync(orchletConfig, `apiVersion: orchlet.config.orch.io/v1beta1
kind: OrchletConfiguration
port: 0
readOnlyPort: 0
healthzPort: 0
`)
async function freePort (): Promise<number> {
  const srv = createServer()
  await new Promise<void>(resolve => srv.listen(0, '127.0.0.1', () => resolve()))
  const port = (srv.address() as { port: number }).port
  await new Promise(resolve => srv.close(resolve))
  return port
}
const cmPort = await freePort()
const schedulerPort = await freePort()
const orch = await startOrch(dataDir, 60_000, ['--node-name', NODE, '--orchlet-config', orchletConfig, '--show-hidden-metrics-for-version', '1.28',
  '--controller-manager-port', String(cmPort), '--scheduler-port', String(schedulerPort)])
t.teardown(async () => { await orch.stop(); rmSync(dir, { recursive: true, force: true }) })
const kubectl = (...args: string[]): ReturnType<typeof runKubectl> => runKubectl(orch.kubeconfig, join(dir, 'cache'), args)

async function until<T> (what: string, f: () => Promise<T | undefined>, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    const v = await f()
    if (v !== undefined) return v
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${orch.logs().slice(-3000)}`)
    await new Promise(resolve => setTimeout(resolve, 200))
  }
}

t.test('kubectl get --raw /metrics shows the API server\'s metrics to the administrator and to system:monitoring', async t => {
  t.equal((await kubectl('create', 'configmap', 'scraped', '--from-literal=k=v')).code, 0)
  const r = await kubectl('get', '--raw', '/metrics')
  t.equal(r.code, 0, r.stderr)
  const text = r.stdout
  t.match(text, /^apiserver_request_total\{verb="POST",dry_run="",group="",version="v1",resource="configmaps",subresource="",scope="namespace",component="apiserver",code="201"\} 1$/m)
  t.match(text, /^apiserver_request_duration_seconds_bucket\{le="0\.005",verb="GET",dry_run="",group="",version="v1",resource="nodes",subresource="",scope="resource",component="apiserver"\} \d+/m,
    'the orchlet\'s node reads are timed')
  // The orchlet watches its pods over HTTPS (the in-process controllers do not go through HTTP).
  const watching = await until('the orchlet\'s pod watch', async () => {
    const again = (await kubectl('get', '--raw', '/metrics')).stdout
    return /^apiserver_registered_watchers\{group="",version="v1",kind="Pod"\} [1-9]/m.test(again) ? again : undefined
  })
  t.match(watching, /^apiserver_longrunning_requests\{verb="WATCH",group="",version="v1",resource="pods",subresource="",scope="cluster",component="apiserver"\} [1-9]/m)
  t.match(watching, '# HELP apiserver_watch_events_total [ALPHA] Number of events sent in watch clients\n')
  t.match(text, /^apiserver_storage_objects\{resource="configmaps"\} [1-9]/m)
  t.notMatch(text, 'resource="subjectaccessreviews', 'kinds never stored are not counted')
  t.match(text, /^apiserver_storage_objects\{resource="clusterroles.rbac.authorization.orch.io"\} [1-9]/m)
  t.match(text, /^etcd_request_duration_seconds_count\{operation="create",type="configmaps"\} [1-9]/m)
  t.match(text, '# HELP etcd_db_total_size_in_bytes [ALPHA] (Deprecated from 1.28) ', 'hidden in 1.29, shown by --show-hidden-metrics-for-version=1.28')
  t.match(text, /^process_resident_memory_bytes \d+/m)
  const monitoring = await kubectl('get', '--raw', '/metrics', '--as=prometheus', '--as-group=system:monitoring')
  t.equal(monitoring.code, 0, monitoring.stderr)
  t.match(monitoring.stdout, /^# TYPE apiserver_request_total counter$/m)
})

t.test('a user without a nonResourceURLs rule on /metrics is refused 403', async t => {
  const r = await kubectl('get', '--raw', '/metrics', '--as=alice')
  t.not(r.code, 0)
  t.match(r.stderr, /Forbidden/)
  t.match(r.stderr, 'User "alice" cannot get path "/metrics"')
  const raw = await kubectl('get', '--raw', '/metrics', '--as=alice', '-v=6')
  t.match(raw.stderr, /GET\s+https:\/\/\S+\/metrics\S*\s+403 Forbidden/)
})

t.test('the local orchlet serves its metrics and resource metrics on its port', async t => {
  const port = await until('the node\'s orchlet port', async () => {
    const r = await kubectl('get', 'node', NODE, '-o', 'jsonpath={.status.daemonEndpoints.kubeletEndpoint.Port}')
    return r.code === 0 && Number(r.stdout) > 0 ? Number(r.stdout) : undefined
  })
  const scrape = async (path: string): Promise<string> => {
    const r = await request(`https://127.0.0.1:${port}${path}`, { dispatcher: orch.dispatcher })
    const body = await r.body.text()
    t.equal(r.statusCode, 200, `${path}: ${body.slice(0, 200)}`)
    return body
  }
  const main = await scrape('/metrics')
  t.match(main, /^kubelet_runtime_operations_total\{operation_type="list_images"\} [1-9]/m, 'node status lists the images')
  t.match(main, /^kubelet_runtime_operations_duration_seconds_count\{operation_type="list_images"\} [1-9]/m)
  t.match(main, '# HELP kubelet_pod_start_duration_seconds [ALPHA] Duration in seconds from kubelet seeing a pod for the first time to the pod starting to run\n')
  const resource = await scrape('/metrics/resource')
  t.match(resource, /^node_cpu_usage_seconds_total \d/m)
  t.match(resource, /^node_memory_working_set_bytes \d/m)
  t.match(await scrape('/metrics/probes'), '# TYPE prober_probe_total counter')
  t.match(await scrape('/metrics/cadvisor'), '# TYPE container_cpu_usage_seconds_total counter')
})

t.test('the in-process controller manager and scheduler serve /metrics on their ports', async t => {
  writeFileSync(join(dir, 'pod.yaml'), `apiVersion: v1
kind: Pod
metadata: {name: scheduled, namespace: default}
spec:
  runtimeClassName: wasm
  terminationGracePeriodSeconds: 1
  containers: [{name: main, image: "localhost/e2e/tool:1", command: [tool], args: [spin]}]
`)
  t.equal((await kubectl('apply', '-f', join(dir, 'pod.yaml'))).code, 0)
  const scheduler = await until('the pod scheduled', async () => {
    const text = await (await fetch(`http://127.0.0.1:${schedulerPort}/metrics`)).text()
    return /^scheduler_schedule_attempts_total\{result="scheduled",profile="default-scheduler"\} [1-9]/m.test(text) ? text : undefined
  })
  t.match(scheduler, /^scheduler_scheduling_attempt_duration_seconds_count\{result="scheduled",profile="default-scheduler"\} [1-9]/m)
  t.notMatch(scheduler, 'workqueue_', 'the scheduler\'s registry is its own')
  const cm = await (await fetch(`http://127.0.0.1:${cmPort}/metrics`)).text()
  t.match(cm, /^workqueue_adds_total\{name="serviceaccount"\} [1-9]/m, 'the default service accounts were queued')
  t.match(cm, /^workqueue_queue_duration_seconds_bucket\{le="\+Inf",name="serviceaccount"\} \d+/m)
  t.notMatch(cm, 'scheduler_', 'the controller manager\'s registry is its own')
  t.equal((await fetch(`http://127.0.0.1:${cmPort}/healthz`)).status, 200)
  // The pod's readiness on the node then shows in the orchlet's pod start latency.
  const port = Number((await kubectl('get', 'node', NODE, '-o', 'jsonpath={.status.daemonEndpoints.kubeletEndpoint.Port}')).stdout)
  const orchlet = await until('the pod start observed', async () => {
    const r = await request(`https://127.0.0.1:${port}/metrics`, { dispatcher: orch.dispatcher })
    const text = await r.body.text()
    return /^kubelet_pod_start_duration_seconds_count [1-9]/m.test(text) ? text : undefined
  })
  t.match(orchlet, /^kubelet_pod_start_duration_seconds_bucket\{le="\+Inf"\} [1-9]/m, 'kubelet_pod_start_duration_seconds counted the pod')
})

t.test('--show-hidden-metrics-for-version accepts only the previous minor release', async t => {
  const p = spawnOrch(['apiserver', '--data-dir', join(dir, 'other'), '--port', '0', '--show-hidden-metrics-for-version', '1.27'])
  t.equal(await p.exited, 1)
  t.match(p.logs(), "--show-hidden-metrics-for-version must be omitted or have the value '1.28'. Only the previous minor version is allowed")
})
