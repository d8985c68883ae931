// `orch controller-manager` and `orch scheduler` as processes of their own against `orch apiserver`: configuration
// refused before anything connects, one leader among two controller managers, failover when the leader dies, /metrics.
import t from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { runKubectl, spawnOrch, startOrch, type ComponentProcess } from './orch-process.js'

const dir = mkdtempSync(join(tmpdir(), 'orch-cm-e2e-'))
const api = await startOrch(join(dir, 'data'), 60_000, [], 'apiserver')
const procs: ComponentProcess[] = []
t.teardown(async () => {
  for (const p of procs) await p.stop('SIGKILL')
  await api.stop()
  rmSync(dir, { recursive: true, force: true })
})
const kubectl = (...args: string[]): ReturnType<typeof runKubectl> => runKubectl(api.kubeconfig, join(dir, 'cache'), args)
async function json (...args: string[]): Promise<any> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const r = await kubectl(...args, '-o', 'json')
  if (r.code !== 0) throw new Error(r.stderr)
  return JSON.parse(r.stdout)
}
async function until<T> (what: string, f: () => Promise<T | undefined | false>, ms = 30_000): Promise<T> {
  const end = Date.now() + ms
  for (;;) {
    const v = await f()
    if (v !== undefined && v !== false) return v
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}\n${procs.map(p => p.logs().slice(-1500)).join('\n---\n')}`)
    await new Promise(resolve => setTimeout(resolve, 200))
  }
}
async function freePort (): Promise<number> {
  const srv = createServer()
  await new Promise<void>(resolve => srv.listen(0, '127.0.0.1', () => resolve()))
  const port = (srv.address() as { port: number }).port
  await new Promise(resolve => srv.close(resolve))
  return port
}
const file = (name: string, text: string): string => { const p = join(dir, name); writeFileSync(p, text); return p }

t.test('a bad configuration is refused before anything connects, one line per problem', async t => {
  const bad = file('bad.yaml', `apiVersion: orchcontrollermanager.config.orch.io/v1alpha1
kind: OrchControllerManagerConfiguration
Generic: {Controllers: ["*", "-nosuch"]}
ReplicaSetController: {ConcurrentRSSyncs: 0}
`)
  const p = spawnOrch(['controller-manager', '--kubeconfig', join(dir, 'missing-kubeconfig'), '--config', bad])
  t.equal(await p.exited, 1)
  t.match(p.logs(), `${bad}: ReplicaSetController.ConcurrentRSSyncs: 0: must be at least 1`)
  t.match(p.logs(), `${bad}: Generic.Controllers[1]: "-nosuch": unknown controller`)
  const usage = spawnOrch(['scheduler'])
  t.equal(await usage.exited, 2, 'a missing --kubeconfig is a usage error')
})

t.test('two controller managers: one leads, the other takes over when it dies; the scheduler binds', async t => {
  const config = file('cm.yaml', `apiVersion: orchcontrollermanager.config.orch.io/v1alpha1
kind: OrchControllerManagerConfiguration
Generic:
  Controllers: ["*"]
  LeaderElection: {leaderElect: true, leaseDuration: 3s, renewDeadline: 2s, retryPeriod: 500ms}
ReplicaSetController: {ConcurrentRSSyncs: 2}
`)
  const cmPorts = [await freePort(), await freePort()]
  const cms = cmPorts.map(port => spawnOrch(['controller-manager', '--kubeconfig', api.kubeconfig, '--config', config, '--port', String(port)]))
  procs.push(...cms)
  const healthPort = await freePort()
  const scheduler = spawnOrch(['scheduler', '--kubeconfig', api.kubeconfig, '--leader-elect=false', '--port', String(healthPort)])
  procs.push(scheduler)
  const leader = await until('a leader', async () => cms.find(p => p.logs().includes('became leader')))
  const other = cms.find(p => p !== leader)!
  const lease = await json('get', 'lease', 'orch-controller-manager', '-n', 'orch-system')
  t.ok(lease.spec.holderIdentity, 'the lease names its holder')
  t.notOk(other.logs().includes('became leader'), 'only one leads')

  writeFileSync(join(dir, 'node.json'), JSON.stringify({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' }, status: { allocatable: { cpu: '4', memory: '8Gi', pods: '110' }, conditions: [{ type: 'Ready', status: 'True', lastHeartbeatTime: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z') }] } }))
  t.equal((await kubectl('create', '-f', join(dir, 'node.json'))).code, 0)
  writeFileSync(join(dir, 'rs.yaml'), `apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: web, namespace: default}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: "i:1"}]}
`)
  t.equal((await kubectl('apply', '-f', join(dir, 'rs.yaml'))).code, 0)
  const pods = await until('two bound pods', async () => {
    const list = await json('get', 'pods', '-l', 'app=web')
    return list.items.length === 2 && list.items.every((p: { spec: { nodeName?: string } }) => p.spec.nodeName === 'n1') ? list.items : undefined
  })
  t.equal(pods.length, 2, 'two managers, still exactly the replicas asked for')

  // Each component's /metrics on its health port: the leader's work queues, the scheduler's attempts.
  const metricsOf = async (port: number): Promise<string> => await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()
  // The pods can be bound before the sync that made them has returned (its work duration is observed then).
  const cmMetrics = await until('a finished replicaset sync', async () => {
    const text = await metricsOf(cmPorts[cms.indexOf(leader)]!)
    return /^workqueue_work_duration_seconds_count\{name="replicaset"\} [1-9]/m.test(text) ? text : undefined
  })
  t.match(cmMetrics, /^workqueue_adds_total\{name="replicaset"\} [1-9]/m, 'the replicaset queue counted its adds')
  t.match(cmMetrics, /^workqueue_depth\{name="replicaset"\} \d+/m)
  t.match(cmMetrics, /^workqueue_work_duration_seconds_count\{name="replicaset"\} [1-9]/m)
  t.match(cmMetrics, /^process_cpu_seconds_total /m)
  const schedMetrics = await until('two scheduled attempts', async () => {
    const text = await metricsOf(healthPort)
    const m = /^scheduler_schedule_attempts_total\{result="scheduled",profile="default-scheduler"\} (\d+)/m.exec(text)
    return m !== null && Number(m[1]) >= 2 ? text : undefined
  })
  t.match(schedMetrics, '# HELP scheduler_schedule_attempts_total [STABLE] Number of attempts to schedule pods, by the result.')
  t.match(schedMetrics, /^scheduler_scheduling_attempt_duration_seconds_count\{result="scheduled",profile="default-scheduler"\} [2-9]/m)
  t.match(schedMetrics, /^scheduler_pending_pods\{queue="active"\} 0/m)

  await leader.stop('SIGKILL')
  await until('the other to take over', async () => other.logs().includes('became leader'), 20_000)
  t.equal((await kubectl('scale', 'rs/web', '--replicas=3')).code, 0)
  await until('a third pod', async () => (await json('get', 'pods', '-l', 'app=web')).items.length === 3)
  const after = await json('get', 'lease', 'orch-controller-manager', '-n', 'orch-system')
  t.not(after.spec.holderIdentity, lease.spec.holderIdentity, 'the lease changed hands')
  t.ok(after.spec.leaseTransitions >= 1)
  const healthz = await until('the scheduler health port', async () => await fetch(`http://127.0.0.1:${healthPort}/healthz`).then(async r => [r.status, await r.text()] as const, () => undefined))
  t.same(healthz, [200, 'ok'])
  t.equal(await other.stop(), 0, 'SIGTERM stops cleanly')
  t.equal(await scheduler.stop(), 0)
})
