// A whole orchlet against a real API server, shut down as on SIGTERM: WebAssembly pods stopped by priority band within
// shutdownGracePeriod, the Node not Ready meanwhile, every pod reported as stopped by the node shutdown; and its tracing.
import t, { type Test } from 'tap'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startTestApiServer } from '../test/api-server-fixture.js'
import { createApiClient, type JsonObject } from '../apiserver/client/rest-client.js'
import { compileFixture } from './runtime/wasm/fixtures/compile.js'
import { buildWasmImageLayout, layoutTar } from './runtime/oci/layout-writer.js'
import { loadOrchletConfig } from './config/load.js'
import { runAgent } from './agent.js'
import type { PodStatus } from './pods/pod-types.js'
import { startTestCollector, type CollectedSpan } from '../test/otlp-collector.js'

const IMAGE = 'localhost/orch-test/tool:1'

const api = await startTestApiServer(t)
const dir = mkdtempSync(join(tmpdir(), 'orchlet-shutdown-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))
const client = createApiClient({ connection: { server: api.url, insecureSkipTlsVerify: false }, qps: 0, burst: 0, contentType: 'application/json', userAgent: 'test' })
t.teardown(() => client.close())

const kubeconfig = join(dir, 'kubeconfig')
writeFileSync(kubeconfig, `apiVersion: v1
kind: Config
clusters: [{name: test, cluster: {server: "${api.url}"}}]
users: [{name: test, user: {}}]
contexts: [{name: test, context: {cluster: test, user: test}}]
current-context: test
`)

/** One orchlet with its own root; the image is dropped in the import folder it reads at start. */
async function startOrchlet (name: string, shutdownFields: string): Promise<{ agent: Awaited<ReturnType<typeof runAgent>>, logs: Array<{ msg: string, obj: Record<string, unknown> }> }> {
  const root = join(dir, name)
  mkdirSync(join(root, 'wasm', 'import'), { recursive: true })
  writeFileSync(join(root, 'wasm', 'import', 'tool.tar'), layoutTar(buildWasmImageLayout({ module: await compileFixture('tool'), refName: IMAGE })))
  const file = join(root, 'orchlet.yaml')
  writeFileSync(file, `apiVersion: orchlet.config.orch.io/v1beta1
kind: OrchletConfiguration
address: 127.0.0.1
port: 0
readOnlyPort: 0
healthzPort: 0
${shutdownFields}
`)
  const config = await loadOrchletConfig(['--config', file, '--orchconfig', kubeconfig, '--root-dir', root, '--cert-dir', join(root, 'pki'), '--hostname-override', name,
    // No containerd here (the shared one is left alone): every pod runs on the built-in WebAssembly runtime.
    '--container-runtime-endpoint', `unix://${join(root, 'no-containerd.sock')}`], {}, { logger: { warn () {} } })
  const logs: Array<{ msg: string, obj: Record<string, unknown> }> = []
  const log = (obj: object | string, msg?: string): void => { logs.push(typeof obj === 'string' ? { msg: obj, obj: {} } : { msg: msg ?? '', obj: obj as Record<string, unknown> }) }
  const agent = await runAgent(config, { logger: { info: log, warn: log, error: log }, relistMs: 100 })
  return { agent, logs }
}

async function createPod (node: string, name: string, spec: JsonObject): Promise<void> {
  await client.create('/api/v1/namespaces/default/pods', {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: { nodeName: node, containers: [{ name: 'main', image: IMAGE, command: ['tool'], args: ['spin'] }], ...spec }
  })
}

async function podStatus (name: string): Promise<PodStatus | undefined> {
  return (await client.get(`/api/v1/namespaces/default/pods/${name}`)).status as PodStatus | undefined
}

async function until (what: string, check: () => Promise<boolean>, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!await check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise(resolve => setTimeout(resolve, 100))
  }
}

function checkShutdownStatus (t: Test, name: string, st: PodStatus | undefined): void {
  t.equal(st?.phase, 'Failed', `${name} Failed`)
  t.equal(st?.reason, 'Terminated', `${name} reason`)
  t.equal(st?.message, 'Pod was terminated in response to imminent node shutdown.', `${name} message`)
  const target = st?.conditions?.find(c => c.type === 'DisruptionTarget')
  t.same([target?.status, target?.reason], ['True', 'TerminationByKubelet'], `${name} DisruptionTarget`)
}

t.test('SIGTERM with shutdownGracePeriod: regular pods are cut at its regular part, critical pods go last, the node says it is shutting down', async t => {
  await client.create('/apis/scheduling.orch.io/v1/priorityclasses', { apiVersion: 'scheduling.orch.io/v1', kind: 'PriorityClass', metadata: { name: 'system-node-critical' }, value: 2000001000 })
  const NODE = 'banded'
  const { agent, logs } = await startOrchlet(NODE, 'shutdownGracePeriod: 5s\nshutdownGracePeriodCriticalPods: 2s')
  await createPod(NODE, 'long-grace', { terminationGracePeriodSeconds: 3600 })
  await createPod(NODE, 'short-grace', { terminationGracePeriodSeconds: 1 })
  await createPod(NODE, 'critical', { priorityClassName: 'system-node-critical', terminationGracePeriodSeconds: 3600 })
  for (const name of ['long-grace', 'short-grace', 'critical']) await until(`${name} to run`, async () => (await podStatus(name))?.phase === 'Running')

  const started = Date.now()
  await agent.stop({ shutdown: true })
  const took = Date.now() - started
  t.comment(`shutdown took ${took} ms`)
  t.ok(took < 5000, 'within shutdownGracePeriod, though a pod asked for an hour')

  const steps = logs.filter(l => l.msg.startsWith('shutdown manager')).map(l => `${l.msg.slice('shutdown manager '.length)} ${String(l.obj.pod)}${l.obj.gracePeriodSeconds === undefined ? '' : ` ${String(l.obj.gracePeriodSeconds)}`}`)
  t.same(steps.slice(0, 4).sort(), [
    'finished killing pod default/long-grace', 'finished killing pod default/short-grace',
    'killing pod with gracePeriod default/long-grace 3', 'killing pod with gracePeriod default/short-grace 1'
  ], 'regular pods first, with min(terminationGracePeriodSeconds, 5s - 2s)')
  t.same(steps.slice(4), ['killing pod with gracePeriod default/critical 2', 'finished killing pod default/critical'], 'the critical pod last, within shutdownGracePeriodCriticalPods')

  for (const name of ['long-grace', 'short-grace', 'critical']) checkShutdownStatus(t, name, await podStatus(name))
  const node = await client.get(`/api/v1/nodes/${NODE}`)
  const ready = ((node.status as JsonObject).conditions as Array<{ type: string, status: string, message: string }>).find(c => c.type === 'Ready')
  t.same([ready?.status, ready?.message], ['False', 'node is shutting down'])
  const events = (await client.get('/api/v1/namespaces/default/events')).items as Array<{ involvedObject: { kind: string, name: string }, reason: string, message: string }>
  t.ok(events.some(e => e.involvedObject.kind === 'Node' && e.involvedObject.name === NODE && e.reason === 'Shutdown' && e.message === 'Shutdown manager detected shutdown event'), 'the kubelet\'s Shutdown event on the Node')
})

t.test('SIGTERM without shutdownGracePeriod: WebAssembly pods, which die with the orchlet, still end reported as stopped by the shutdown', async t => {
  const NODE = 'off'
  const { agent, logs } = await startOrchlet(NODE, '')
  await createPod(NODE, 'plain', { terminationGracePeriodSeconds: 2 })
  await until('plain to run', async () => (await podStatus('plain'))?.phase === 'Running')
  await agent.stop({ shutdown: true })
  checkShutdownStatus(t, 'plain', await podStatus('plain'))
  t.same(logs.filter(l => l.msg === 'shutdown manager killing pod with gracePeriod').map(l => l.obj.gracePeriodSeconds), [2], 'its own grace period')
  const node = await client.get(`/api/v1/nodes/${NODE}`)
  const ready = ((node.status as JsonObject).conditions as Array<{ type: string, status: string }>).find(c => c.type === 'Ready')
  t.equal(ready?.status, 'True', 'graceful node shutdown off: the node is not marked')
})

t.test('OrchletTracing: a pod sync is a syncPod span with the CRI calls it makes as children, exported over OTLP', async t => {
  const collector = await startTestCollector()
  t.teardown(() => collector.close())
  const { agent } = await startOrchlet('traced', `tracing: {endpoint: "${collector.endpoint}", samplingRatePerMillion: 1000000}`)
  await createPod('traced', 'traced-pod', {})
  const started = (all: CollectedSpan[]): CollectedSpan | undefined => all.find(s => s.name === 'runtime.v1.RuntimeService/StartContainer')
  const spans = await collector.waitFor(all => started(all) !== undefined && all.some(p => p.spanId === started(all)!.parentSpanId), 30_000)
  const sync = spans.find(s => s.spanId === started(spans)!.parentSpanId)!
  t.equal(sync.name, 'syncPod')
  t.equal(sync.service, 'orchlet')
  t.equal(sync.attributes['k8s.pod'], 'traced-pod')
  t.ok(spans.some(s => s.name === 'runtime.v1.RuntimeService/RunPodSandbox' && s.traceId === sync.traceId), 'the sandbox is made in a traced sync')
  await agent.stop({ shutdown: true })
})
