// The etcd store on a real 3-member etcd cluster: the shared conformance suite, then what only etcd brings.
import t from 'tap'
import { runStorageConformance } from '../conformance.js'
import { isStorageError } from '../store.js'
import { startCompactor } from './compactor.js'
import { EtcdStore, progressIsReliable } from './etcd-store.js'
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

  t.test('progress answers are trusted from etcd 3.4.24 and 3.5.8 on, as learned from the member at open', async t => {
    const s = await open()
    t.teardown(() => s.close())
    const version = await s.serverVersion()
    t.match(version, /^\d+\.\d+\.\d+/)
    t.equal(s.reliableProgress, progressIsReliable(version), `etcd ${version}`)
    const cases: Array<[string, boolean]> = [['3.4.23', false], ['3.4.24', true], ['3.5.7', false], ['3.5.8', true], ['3.6.0', true], ['3.3.27', false], ['', false], ['4.0.0', true]]
    for (const [v, want] of cases) t.equal(progressIsReliable(v), want, `${v || '(none)'}: ${want}`)
  })

  t.test('the compactor keeps one interval of history: it compacts to the revision seen a tick before', async t => {
    const s = await open()
    t.teardown(() => s.close())
    const before = s.currentRevision()
    for (let i = 0; i < 5; i++) await s.create(`c/${i}`, rev => Buffer.from(`${rev}`))
    const errors: unknown[] = []
    const stop = startCompactor(s, 150, err => errors.push(err))
    t.teardown(stop)
    const mark = s.currentRevision()
    await s.create('c/late', rev => Buffer.from(`${rev}`))
    for (let i = 0; i < 100 && s.compactedRevision() < mark; i++) await new Promise(resolve => setTimeout(resolve, 50))
    stop()
    t.same(errors, [])
    t.ok(s.compactedRevision() >= mark && s.compactedRevision() > before, `compacted to ${s.compactedRevision()} (mark ${mark})`)
    t.equal((await s.list('c/', { revision: s.compactedRevision() })).items.length >= 5, true, 'the compacted revision itself stays readable')
    const err = await s.list('c/', { revision: mark - 1 }).catch(e => e)
    t.ok(isStorageError(err, 'Compacted'), 'reads from before the compaction answer Compacted')
  })

  t.test('a store with no reachable member fails with Unavailable', async t => {
    const err = await EtcdStore.open({ endpoints: ['http://127.0.0.1:1'], callTimeoutMs: 500 }).catch(e => e)
    t.ok(isStorageError(err, 'Unavailable'), String(err))
  })
}
