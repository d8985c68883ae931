// The etcd store on a real 3-member etcd cluster: the shared conformance suite, then what only etcd brings.
import t from 'tap'
import { runStorageConformance } from '../conformance.js'
import { EtcdStore } from './etcd-store.js'
import { startTestEtcd } from './etcd-for-tests.js'

const cluster = startTestEtcd(3)
if ('skip' in cluster) {
  t.plan(0, cluster.skip)
} else {
  t.teardown(() => cluster.stop())
  let n = 0
  // Every store gets its own prefix on the one cluster; revisions are global, which the suite allows for.
  const open = (): Promise<EtcdStore> => EtcdStore.open({ endpoints: cluster.endpoints, prefix: `/conformance-${++n}` })

  t.test('conformance on a 3-member cluster', async t => { runStorageConformance(t, open) })
}
