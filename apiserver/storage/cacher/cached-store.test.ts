// The watch cache in front of the etcd store on a real 3-member cluster: the conformance suite with
// ConsistentListFromCache on and off, read-your-writes from the cache, and which LISTs the cache answers.
import t from 'tap'
import { runStorageConformance } from '../conformance.js'
import { EtcdStore } from '../etcd/etcd-store.js'
import { startTestEtcd } from '../etcd/etcd-for-tests.js'
import { CachedStore, registryResourceOf } from './cached-store.js'

/** The suite's keys: one resource per first segment ("a/sub/" lives in the cache of "a/"). */
const firstSegment = (prefix: string): string | undefined => /^([^/]+\/)/.exec(prefix)?.[1]

const cluster = startTestEtcd(3)
if ('skip' in cluster) {
  t.plan(0, cluster.skip)
} else {
  t.teardown(() => cluster.stop())
  let n = 0
  const open = async (gate: boolean, prefix = `/cached-${++n}`): Promise<CachedStore> =>
    new CachedStore(await EtcdStore.open({ endpoints: cluster.endpoints, prefix }), { consistentListFromCache: gate, resourceOf: firstSegment })

  t.test('conformance with ConsistentListFromCache on (current LISTs from the cache where etcd\'s progress answers are reliable)', async t => {
    const stores: CachedStore[] = []
    runStorageConformance(t, async () => { const s = await open(true); stores.push(s); return s })
    t.teardown(() => {
      const served = stores.reduce((sum, s) => sum + s.stats.fromCache, 0)
      const fallbacks = stores.reduce((sum, s) => sum + s.stats.fallbacks, 0)
      const watches = stores.reduce((sum, s) => sum + s.stats.watchesFromCache, 0)
      t.comment(`LISTs served from the cache: ${served}, fell back to etcd: ${fallbacks}; watches served from the cache: ${watches}`)
      // On an etcd whose progress answers may run ahead of its events (Debian's 3.4.23) consistent LISTs read etcd.
      const reliable = stores[0]?.reliableProgress === true
      if (reliable && served === 0) throw new Error('no LIST of the suite was served from the cache')
      if (!reliable && served > 0) throw new Error(`${served} consistent LISTs were served from the cache of an etcd before 3.4.24`)
    })
  })

  t.test('conformance with ConsistentListFromCache off', async t => { runStorageConformance(t, async () => await open(false)) })

  t.test('with the gate on a consistent LIST sees the write acknowledged just before it, on this and another API server', async t => {
    const a = await open(true, '/ryw')
    const b = await open(true, '/ryw')
    t.teardown(async () => { await a.close(); await b.close() })
    t.same((await a.list('pods/')).items, [], 'the caches start empty')
    t.same((await b.list('pods/')).items, [])
    const misses: string[] = []
    for (let i = 0; i < 40; i++) {
      const writer = i % 2 === 0 ? a : b
      const kv = await writer.create(`pods/p${i}`, rev => Buffer.from(`p${i}@${rev}`))
      for (const [name, s] of [['a', a], ['b', b]] as const) {
        const res = await s.list('pods/')
        if (res.revision < kv.modRevision || !res.items.some(x => x.key === kv.key)) misses.push(`${name} missed pods/p${i} (list at ${res.revision}, write at ${kv.modRevision})`)
      }
    }
    t.same(misses, [], 'every LIST saw the write before it')
    t.equal(a.stats.fallbacks + b.stats.fallbacks, 0, 'no LIST fell back to etcd')
    // Debian's etcd 3.4.23 may answer progress requests ahead of queued events: there consistent LISTs read etcd.
    if (a.reliableProgress) t.ok(a.stats.fromCache >= 40 && b.stats.fromCache >= 40, `served from the caches (${a.stats.fromCache} / ${b.stats.fromCache})`)
    else t.equal(a.stats.fromCache + b.stats.fromCache, 0, 'an etcd whose progress answers may run ahead: every consistent LIST read etcd')
  })

  t.test('a quiet resource catches up through progress notifications: its list revision is etcd\'s latest', async t => {
    const s = await open(true, '/quiet')
    t.teardown(() => s.close())
    await s.create('quiet/1', rev => Buffer.from(`${rev}`))
    t.equal((await s.list('quiet/')).items.length, 1)
    let last = 0
    for (let i = 0; i < 20; i++) last = (await s.create(`busy/${i}`, rev => Buffer.from(`${rev}`))).modRevision
    const res = await s.list('quiet/')
    t.ok(res.revision >= last, `listed at ${res.revision}, after the last write elsewhere (${last})`)
    t.equal(s.stats.fallbacks, 0)
  })

  t.test('which LISTs the cache answers: "0" and NotOlderThan always, consistent ones only with the gate and no limit', async t => {
    const off = await open(false, '/which')
    const on = await open(true, '/which')
    t.teardown(async () => { await off.close(); await on.close() })
    for (let i = 0; i < 5; i++) await off.create(`w/${i}`, rev => Buffer.from(`${rev}`))
    const count = async (s: CachedStore, fn: () => Promise<unknown>): Promise<number> => { const before = s.stats.fromCache; await fn(); return s.stats.fromCache - before }
    t.equal(await count(off, () => off.list('w/')), 0, 'gate off: a consistent LIST reads etcd')
    t.equal(await count(off, () => off.list('w/', { notOlderThan: 0 })), 1, 'gate off: resourceVersion "0" from the cache')
    const page = await off.list('w/', { notOlderThan: off.currentRevision(), limit: 2 })
    t.same([page.items.length, page.remaining], [2, 3], 'a NotOlderThan page from the cache keeps limit and remaining')
    const reliable = on.reliableProgress
    t.equal(await count(on, () => on.list('w/')), reliable ? 1 : 0,
      reliable ? 'gate on: a consistent LIST from the cache' : 'gate on, etcd before 3.4.24: a consistent LIST reads etcd')
    t.equal(await count(on, () => on.list('w/', { limit: 2 })), 0, 'gate on: a limited consistent LIST reads etcd (as v1.29)')
    t.equal(await count(on, () => on.list('w/', { revision: page.revision })), 0, 'an exact revision reads etcd')
    t.equal(await count(on, () => on.list('w/', { revision: page.revision, startKey: 'w/3', limit: 2 })), 0, 'a continue page reads etcd')
    const first = await on.list('w/', { limit: 2, scan: true })
    const next = await on.list('w/', { revision: first.revision, startKey: 'w/2', limit: 2, scan: true })
    t.same(next.items.map(kv => kv.key), ['w/2', 'w/3'], 'the pages of a scan come from one snapshot')
    t.equal(on.stats.fromCache, reliable ? 3 : 0)
  })

  t.test('watches from the cache: a later start replays its ring, each sees its prefix only, in order, each event once', async t => {
    const s = await open(false, '/watch')
    t.teardown(() => s.close())
    await s.create('r/a/0', rev => Buffer.from(`a0@${rev}`))
    await s.list('r/', { notOlderThan: 0 }) // starts the cache
    const from = s.currentRevision()
    const writes: number[] = []
    for (let i = 1; i <= 4; i++) writes.push((await s.create(`r/${i % 2 === 0 ? 'a' : 'b'}/${i}`, rev => Buffer.from(`${i}@${rev}`))).modRevision)
    const got: Array<{ key: string, rev: number, value: string }> = []
    const onlyA: string[] = []
    const errors: unknown[] = []
    const all = s.watch('r/', from, { onEvents: evs => { for (const e of evs) got.push({ key: e.key, rev: e.revision, value: e.value.toString() }) }, onError: e => errors.push(e) })
    const a = s.watch('r/a/', from, { onEvents: evs => { for (const e of evs) onlyA.push(e.key) }, onError: e => errors.push(e) })
    t.equal(s.stats.watchesFromCache, 2, 'both served from the cache')
    const last = (await s.update('r/a/0', rev => Buffer.from(`a0 again@${rev}`))).modRevision
    for (let i = 0; i < 100 && got.length < 5; i++) await new Promise(resolve => setTimeout(resolve, 20))
    all.stop()
    a.stop()
    t.same(got.map(e => e.rev), [...writes, last], 'every event after the start, in revision order')
    t.same(got.map(e => e.value), ['1@' + writes[0], '2@' + writes[1], '3@' + writes[2], '4@' + writes[3], `a0 again@${last}`], 'the bytes carry their revision')
    t.same(onlyA, ['r/a/2', 'r/a/4', 'r/a/0'])
    t.same(errors, [])
  })

  t.test('registry keys: one cache per /<group>/<plural>/', async t => {
    t.equal(registryResourceOf('/core/pods/default/'), '/core/pods/')
    t.equal(registryResourceOf('/apps/deployments/'), '/apps/deployments/')
    t.equal(registryResourceOf('/core/'), undefined)
    t.equal(registryResourceOf(''), undefined)
  })
  t.test('a get with notOlderThan comes from the cache once it reached that revision; other gets read etcd', async t => {
    const s = await open(false, '/gets')
    t.teardown(() => s.close())
    const kv = await s.create('ns/a', rev => Buffer.from(`{"metadata":{"name":"a","resourceVersion":"${rev}"},"data":{"x":"9007199254740991"}}`))
    // The first such get starts the cache and reads etcd; once the cache has the write, gets come from it.
    t.same(await s.get('ns/a', { notOlderThan: kv.modRevision }), kv, 'the first: from etcd')
    let fromCache: unknown
    for (let i = 0; i < 100 && s.stats.getsFromCache === 0; i++) {
      await new Promise(resolve => setTimeout(resolve, 20))
      fromCache = await s.get('ns/a', { notOlderThan: kv.modRevision })
    }
    t.equal(s.stats.getsFromCache, 1, 'then from the cache')
    t.same(fromCache, kv, 'the same key, value (its revision spliced in once, the data\'s digits kept) and revisions')
    t.equal(await s.get('ns/missing', { notOlderThan: 0 }), undefined, 'a key the cache does not hold: absent')
    const later = await s.update('ns/a', rev => Buffer.from(`{"metadata":{"name":"a","resourceVersion":"${rev}"}}`))
    const consistent = await s.get('ns/a')
    t.equal(consistent?.modRevision, later.modRevision, 'a get without notOlderThan reads etcd: the write just made')
    t.equal(s.stats.getsFromCache, 2, 'and does not count as served from the cache')
  })
}
