// Two `orch up` on one 3-member etcd cluster: the in-process controllers and scheduler run once, in the server holding
// the orch-control-plane Lease, and the other takes over when the leader dies.
import t from 'tap'
import { cpSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runKubectl, startOrch } from './orch-process.js'
import { startTestEtcd } from '../apiserver/storage/etcd/etcd-for-tests.js'

const cluster = startTestEtcd(3)
if ('skip' in cluster) {
  t.plan(0, cluster.skip)
} else {
  const dir = mkdtempSync(join(tmpdir(), 'orch-etcd-le-'))
  t.teardown(() => { cluster.stop(); rmSync(dir, { recursive: true, force: true }) })
  const etcdArgs = ['--etcd-servers', cluster.endpoints.join(',')]

  t.test('two orch up on one etcd run their controllers once, through leader election', async t => {
    const args = [...etcdArgs, '--etcd-prefix', '/e2e-up', '--orchlet=false']
    const a = await startOrch(join(dir, 'up-a'), 60_000, args, 'up')
    t.teardown(() => a.stop())
    cpSync(join(dir, 'up-a', 'pki'), join(dir, 'up-b', 'pki'), { recursive: true })
    const b = await startOrch(join(dir, 'up-b'), 60_000, args, 'up')
    t.teardown(() => b.stop())
    const cache = join(dir, 'kubectl-cache-up')
    const holder = async (): Promise<string> => (await runKubectl(a.kubeconfig, cache, ['--server', b.server, 'get', 'lease', '-n', 'kube-system',
      'orch-control-plane', '-o', 'jsonpath={.spec.holderIdentity}'])).stdout
    let first = await holder()
    for (let i = 0; i < 40 && first === ''; i++) { await new Promise(resolve => setTimeout(resolve, 250)); first = await holder() }
    t.not(first, '', 'one server holds the control-plane Lease')
    const leaderLogs = (p: typeof a): boolean => p.logs().includes('became leader')
    t.equal([leaderLogs(a), leaderLogs(b)].filter(x => x).length, 1, 'exactly one of the two leads')
    const [leader, other] = leaderLogs(a) ? [a, b] : [b, a]
    leader.child.kill('SIGKILL')
    let next = first
    for (let i = 0; i < 120 && (next === first || next === ''); i++) {
      await new Promise(resolve => setTimeout(resolve, 500))
      next = (await runKubectl(a.kubeconfig, cache, ['--server', other.server, 'get', 'lease', '-n', 'kube-system', 'orch-control-plane', '-o', 'jsonpath={.spec.holderIdentity}'])).stdout
    }
    t.not(next, first, 'when the leader dies the other server takes the Lease over')
    t.ok(leaderLogs(other), 'and starts the controllers')
  })

}
