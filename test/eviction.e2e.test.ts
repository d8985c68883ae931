// Eviction end to end: an orchlet whose memory.available threshold is above the machine's memory reports MemoryPressure,
// carries the memory-pressure taint, refuses a BestEffort pod and evicts a BestEffort pod that tolerates the taint.
import t from 'tap'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { tlsRequester } from './tls-client.js'
import { startOrch } from './orch-process.js'
import { compileFixture } from '../agent/runtime/wasm/fixtures/compile.js'
import { buildWasmImageLayout, layoutTar } from '../agent/runtime/oci/layout-writer.js'

const tls = tlsRequester()
const request = tls.request
t.teardown(async () => await tls.close())
const dir = mkdtempSync(join(tmpdir(), 'orch-eviction-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))

const NODE = 'pressed-node'
const data = join(dir, 'data')
const importDir = join(data, 'orchlet', 'wasm', 'import')
mkdirSync(importDir, { recursive: true })
writeFileSync(join(importDir, 'tool.tar'), layoutTar(buildWasmImageLayout({ module: await compileFixture('tool'), refName: 'localhost/e2e/tool:1' })))
const orch = await startOrch(data, 60_000, ['--node-name', NODE, '--controllers', '*,-replicaset',
  '--orchlet-arg=--eviction-hard=memory.available<1000Ti', '--orchlet-arg=--experimental-allocatable-ignore-eviction=true'])
t.teardown(async () => { await orch.stop() })
tls.use(orch.kubeconfig)

async function getJson (path: string): Promise<Record<string, any>> {
  const r = await request(`${orch.server}${path}`)
  return await r.body.json() as Record<string, any>
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

async function createPod (name: string, extra: Record<string, unknown> = {}): Promise<void> {
  const r = await request(`${orch.server}/api/v1/namespaces/default/pods`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { nodeName: NODE, terminationGracePeriodSeconds: 5, containers: [{ name: 'main', image: 'localhost/e2e/tool:1', command: ['tool'], args: ['spin'] }], ...extra } })
  })
  if (r.statusCode !== 201) throw new Error(`creating ${name}: ${r.statusCode} ${await r.body.text()}`)
  await r.body.dump()
}

t.test('the node reports MemoryPressure and carries the NoSchedule memory-pressure taint', async t => {
  const node = await until('MemoryPressure', async () => {
    const n = await getJson(`/api/v1/nodes/${NODE}`)
    return n.status?.conditions?.find((c: any) => c.type === 'MemoryPressure')?.status === 'True' ? n : undefined
  })
  const cond = node.status.conditions.find((c: any) => c.type === 'MemoryPressure')
  t.equal(cond.reason, 'OrchletHasInsufficientMemory')
  const tainted = await until('the taint', async () => {
    const n = await getJson(`/api/v1/nodes/${NODE}`)
    return (n.spec?.taints ?? []).find((x: any) => x.key === 'node.kubernetes.io/memory-pressure')
  })
  t.same(tainted, { key: 'node.kubernetes.io/memory-pressure', effect: 'NoSchedule' })
  t.equal(node.status.conditions.find((c: any) => c.type === 'Ready')?.status, 'True', 'still Ready')
})

t.test('a new BestEffort pod is refused with the kubelet\'s admission message', async t => {
  await createPod('refused')
  const pod = await until('the refusal', async () => {
    const p = await getJson('/api/v1/namespaces/default/pods/refused')
    return p.status?.phase === 'Failed' ? p : undefined
  })
  t.equal(pod.status.reason, 'Evicted')
  t.equal(pod.status.message, 'Pod was rejected: The node had condition: [MemoryPressure]. ')
})

t.test('a BestEffort pod tolerating the taint is admitted, then evicted: Failed, reason Evicted, the kubelet\'s message', async t => {
  await createPod('tolerating', { tolerations: [{ key: 'node.kubernetes.io/memory-pressure', operator: 'Exists', effect: 'NoSchedule' }] })
  const pod = await until('the eviction', async () => {
    const p = await getJson('/api/v1/namespaces/default/pods/tolerating')
    return p.status?.phase === 'Failed' ? p : undefined
  })
  t.equal(pod.status.reason, 'Evicted')
  t.match(pod.status.message, /^The node was low on resource: memory\. Threshold quantity: 1000Ti, available: \d+(Ki)?\. /)
  const disruption = pod.status.conditions.find((c: any) => c.type === 'DisruptionTarget')
  t.equal(disruption?.reason, 'TerminationByKubelet')
  const events = await getJson('/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3Dtolerating')
  t.ok(events.items.some((e: any) => e.reason === 'Evicted' && e.type === 'Warning'), 'a Warning Evicted event')
})
