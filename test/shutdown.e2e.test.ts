// SIGTERM on `orch up`: a prompt exit with code 0, open watches ended with a clean end of stream, every acknowledged
// write kept across the restart. The time from signal to exit is printed, not asserted (the machine is shared).
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

const dir = mkdtempSync(join(tmpdir(), 'orch-shutdown-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))

t.test('SIGTERM ends watches cleanly, exits 0 promptly and keeps acknowledged writes', async t => {
  const data = join(dir, 'data')
  const orch = await startOrch(data)
  tls.use(orch.kubeconfig)
  // Labelled, as the namespace holds the published kube-root-ca.crt too.
  const cms = `${orch.server}/api/v1/namespaces/default/configmaps`
  for (let i = 0; i < 20; i++) {
    const r = await request(cms, { method: 'POST', body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `c${i}`, labels: { e2e: 'shutdown' } }, data: { i: String(i) } }), headers: { 'content-type': 'application/json' } })
    t.equal(r.statusCode, 201)
    await r.body.dump()
  }
  const watch = await request(`${cms}?watch=1&labelSelector=e2e%3Dshutdown`)
  t.equal(watch.statusCode, 200)
  let text = ''
  const ended = new Promise<'end' | 'error'>(resolve => {
    watch.body.on('data', (d: Buffer) => { text += d.toString() })
    watch.body.on('end', () => resolve('end'))
    watch.body.on('error', () => resolve('error'))
  })
  await new Promise(resolve => setTimeout(resolve, 300))
  const started = Date.now()
  const code = await Promise.race([orch.stop(), new Promise<string>(resolve => setTimeout(() => resolve('hung'), 15_000))])
  t.comment(`SIGTERM to exit: ${Date.now() - started} ms`)
  t.equal(code, 0, 'exits with code 0')
  t.equal(await ended, 'end', 'the watch stream ended cleanly (chunked end, no reset)')
  t.equal(text.trim().split('\n').length, 20, 'the watch had sent its initial events whole')

  const again = await startOrch(data)

  tls.use(again.kubeconfig)
  t.teardown(() => again.stop())
  const list = await request(`${again.server}/api/v1/namespaces/default/configmaps?labelSelector=e2e%3Dshutdown`)
  const items = (await list.body.json() as { items: unknown[] }).items
  t.equal(items.length, 20, 'every acknowledged write is there after the restart')
})

// WASI preview1 has no signals, so a module cannot use a grace period: the runtime stops it at once, which is
// within any grace period; what matters is the prompt exit and the status the API server keeps.
t.test('SIGTERM with a running WebAssembly pod: a prompt exit, and the pod reported as stopped by a node shutdown', async t => {
  const data = join(dir, 'wasm-data')
  const importDir = join(data, 'orchlet', 'wasm', 'import')
  mkdirSync(importDir, { recursive: true })
  writeFileSync(join(importDir, 'tool.tar'), layoutTar(buildWasmImageLayout({ module: await compileFixture('tool'), refName: 'localhost/e2e/tool:1' })))
  const orch = await startOrch(data, 60_000, ['--node-name', 'sd-node', '--controllers', '*,-replicaset'])
  tls.use(orch.kubeconfig)
  const pods = `${orch.server}/api/v1/namespaces/default/pods`
  const r = await request(pods, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'spinner' },
    spec: { terminationGracePeriodSeconds: 2, containers: [{ name: 'main', image: 'localhost/e2e/tool:1', command: ['tool'], args: ['spin'] }] } }) })
  t.equal(r.statusCode, 201)
  await r.body.dump()
  const deadline = Date.now() + 60_000
  for (;;) {
    const got = await request(`${pods}/spinner`)
    const pod = await got.body.json() as { status?: { phase?: string } }
    if (pod.status?.phase === 'Running') break
    if (Date.now() > deadline) throw new Error(`the pod did not run\n${orch.logs().slice(-2000)}`)
    await new Promise(resolve => setTimeout(resolve, 200))
  }
  const started = Date.now()
  const code = await Promise.race([orch.stop(), new Promise<string>(resolve => setTimeout(() => resolve('hung'), 20_000))])
  const took = Date.now() - started
  t.comment(`SIGTERM to exit with a 2 s grace period: ${took} ms`)
  t.equal(code, 0)
  t.ok(took < 7000, 'exit within the longest grace period + 5 s')
  const api = await startOrch(data, 60_000, [], 'apiserver')
  tls.use(api.kubeconfig)
  t.teardown(() => api.stop())
  const after = await (await request(`${api.server}/api/v1/namespaces/default/pods/spinner`)).body.json() as { status: { phase: string, reason: string, message: string, conditions: Array<{ type: string, reason?: string }> } }
  t.equal(after.status.phase, 'Failed')
  t.equal(after.status.reason, 'Terminated')
  t.equal(after.status.message, 'Pod was terminated in response to imminent node shutdown.')
  t.ok(after.status.conditions.some(c => c.type === 'DisruptionTarget' && c.reason === 'TerminationByKubelet'))
})

t.test('after kill -9 and a restart on the same data dir, a pod bound to the node runs again with a restart recorded', async t => {
  const data = join(dir, 'kill-data')
  const importDir = join(data, 'orchlet', 'wasm', 'import')
  mkdirSync(importDir, { recursive: true })
  writeFileSync(join(importDir, 'tool.tar'), layoutTar(buildWasmImageLayout({ module: await compileFixture('tool'), refName: 'localhost/e2e/tool:1' })))
  const first = await startOrch(data, 60_000, ['--node-name', 'kill-node'])
  tls.use(first.kubeconfig)
  const pods = (server: string): string => `${server}/api/v1/namespaces/default/pods`
  const r = await request(pods(first.server), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'survivor' },
    spec: { terminationGracePeriodSeconds: 1, containers: [{ name: 'main', image: 'localhost/e2e/tool:1', command: ['tool'], args: ['tick', '500'] }] } }) })
  t.equal(r.statusCode, 201)
  await r.body.dump()
  type PodView = { status?: { phase?: string, containerStatuses?: Array<{ restartCount: number, state: Record<string, unknown> }> } }
  const waitFor = async (server: string, ok: (p: PodView) => boolean, what: string, logs: () => string): Promise<PodView> => {
    const deadline = Date.now() + 60_000
    for (;;) {
      const p = await (await request(`${pods(server)}/survivor`)).body.json() as PodView
      if (ok(p)) return p
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; the pod: ${JSON.stringify(p.status)}\n${logs().slice(-3000)}`)
      await new Promise(resolve => setTimeout(resolve, 250))
    }
  }
  await waitFor(first.server, p => p.status?.phase === 'Running', 'the pod to run', first.logs)
  first.child.kill('SIGKILL')
  await new Promise(resolve => first.child.once('exit', resolve))
  // kill -9 leaves the old kubeconfig; the harness waits for the new one (orch up removes the stale one as it starts).
  rmSync(join(data, 'kubeconfig'), { force: true })
  const started = Date.now()
  const again = await startOrch(data, 60_000, ['--node-name', 'kill-node'])
  tls.use(again.kubeconfig)
  t.teardown(() => again.stop())
  const back = await waitFor(again.server, p => p.status?.phase === 'Running' && (p.status.containerStatuses?.[0]?.restartCount ?? 0) >= 1 &&
    p.status.containerStatuses?.[0]?.state.running !== undefined, 'the pod to run again', again.logs)
  t.comment(`restart to running again: ${Date.now() - started} ms`)
  t.ok((back.status?.containerStatuses?.[0]?.restartCount ?? 0) >= 1, 'the restart is recorded')
})

t.test('--shutdown-delay-duration: after SIGTERM /readyz fails at once while requests are still served, then it exits', async t => {
  const orch = await startOrch(join(dir, 'delay-data'), 30_000, ['--shutdown-delay-duration=3s'], 'apiserver')
  tls.use(orch.kubeconfig)
  t.equal((await (await request(`${orch.server}/readyz`)).body.text()), 'ok')
  const signalled = Date.now()
  const exited = orch.stop()
  await new Promise(resolve => setTimeout(resolve, 300))
  const ready = await request(`${orch.server}/readyz`)
  await ready.body.dump()
  t.equal(ready.statusCode, 500, 'not ready during the delay')
  const list = await request(`${orch.server}/api/v1/namespaces`)
  t.equal(list.statusCode, 200, 'still serving during the delay')
  await list.body.dump()
  t.equal(await exited, 0)
  t.ok(Date.now() - signalled >= 3000, 'the server waited for the delay before exiting')
})
