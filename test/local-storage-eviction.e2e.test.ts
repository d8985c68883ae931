// Local storage eviction end to end: a WebAssembly pod whose container writes logs past its ephemeral-storage limit is
// evicted by the orchlet (localStorageCapacityIsolation is on by default): Failed, reason Evicted, the kubelet's message.
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
const dir = mkdtempSync(join(tmpdir(), 'orch-local-storage-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))

const NODE = 'storage-node'
const data = join(dir, 'data')
const importDir = join(data, 'orchlet', 'wasm', 'import')
mkdirSync(importDir, { recursive: true })
writeFileSync(join(importDir, 'tool.tar'), layoutTar(buildWasmImageLayout({ module: await compileFixture('tool'), refName: 'localhost/e2e/tool:1' })))
const orch = await startOrch(data, 60_000, ['--node-name', NODE, '--controllers', '*,-replicaset'])
t.teardown(async () => { await orch.stop() })
tls.use(orch.kubeconfig)

async function getJson (path: string): Promise<Record<string, any>> {
  const r = await request(`${orch.server}${path}`)
  return await r.body.json() as Record<string, any>
}

async function until<T> (what: string, f: () => Promise<T | undefined | false>, ms = 90_000): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    const v = await f()
    if (v !== undefined && v !== false) return v
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${orch.logs().slice(-3000)}`)
    await new Promise(resolve => setTimeout(resolve, 250))
  }
}

t.test('a container logging past its ephemeral-storage limit: the pod ends Failed, reason Evicted, with the kubelet\'s message', async t => {
  const containers = [
    { name: 'app', image: 'localhost/e2e/tool:1', command: ['tool'], args: ['tick', '1'], resources: { limits: { 'ephemeral-storage': '64Ki' } } },
    // A quiet sidecar with room to spare: the pod's total stays within the sum of limits, so the container's own limit is what is passed.
    { name: 'side', image: 'localhost/e2e/tool:1', command: ['tool'], args: ['spin'], resources: { limits: { 'ephemeral-storage': '10Mi' } } }
  ]
  const r = await request(`${orch.server}/api/v1/namespaces/default/pods`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'chatty' }, spec: { nodeName: NODE, terminationGracePeriodSeconds: 5, containers } })
  })
  t.equal(r.statusCode, 201, await r.body.text())
  const pod = await until('the eviction', async () => {
    const p = await getJson('/api/v1/namespaces/default/pods/chatty')
    return p.status?.phase === 'Failed' ? p : undefined
  })
  t.equal(pod.status.reason, 'Evicted')
  t.equal(pod.status.message, 'Container app exceeded its local ephemeral storage limit "64Ki". ')
  t.notOk((pod.status.conditions ?? []).some((c: any) => c.type === 'DisruptionTarget'), 'no DisruptionTarget condition for a local storage eviction')
  const events = await until('the Evicted event', async () => {
    const e = await getJson('/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3Dchatty')
    return e.items.some((x: any) => x.reason === 'Evicted') ? e : undefined
  })
  const evicted = events.items.find((x: any) => x.reason === 'Evicted')
  t.equal(evicted.type, 'Warning')
  t.equal(evicted.message, 'Container app exceeded its local ephemeral storage limit "64Ki". ')
})
