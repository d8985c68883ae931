// The etcd store when a member dies: writes fail over, every acknowledged write stays readable, watches resume.
import t from 'tap'
import { collect } from '../conformance.js'
import { isStorageError } from '../store.js'
import { EtcdStore } from './etcd-store.js'
import { startTestEtcd } from './etcd-for-tests.js'

const cluster = startTestEtcd(3)
if ('skip' in cluster) {
  t.plan(0, cluster.skip)
} else {
  t.teardown(() => cluster.stop())

  t.test('killing the member a store talks to during writes loses no acknowledged write and no watch event', async t => {
    // endpoints[0] first: the store talks to member 0 until it dies.
    const logs: string[] = []
    const s = await EtcdStore.open({ endpoints: cluster.endpoints, prefix: '/failover', callTimeoutMs: 2000, log: m => logs.push(m) })
    t.teardown(() => s.close())
    const w = collect(s, 'k/', s.currentRevision())
    const acked = new Map<string, string>()
    let failed = 0
    let killed = false
    let ackedAfterKill = 0
    const writer = async (id: number): Promise<void> => {
      for (let i = 0; i < 60; i++) {
        const key = `k/${id}-${i}`
        try {
          const kv = await s.create(key, rev => Buffer.from(`${key}@${rev}`))
          acked.set(key, kv.value.toString())
          if (killed) ackedAfterKill++
        } catch (err) {
          if (!isStorageError(err)) throw err
          failed++
        }
      }
    }
    const writers = [0, 1, 2, 3].map(writer)
    await new Promise(resolve => setTimeout(resolve, 150))
    cluster.kill(0)
    killed = true
    await Promise.all(writers)
    t.ok(ackedAfterKill > 0, `writes went on after the kill (${ackedAfterKill} acknowledged after it)`)
    t.ok(acked.size >= 200, `most writes were acknowledged (${acked.size} acknowledged, ${failed} failed)`)
    const listed = await s.list('k/')
    const stored = new Map(listed.items.map(kv => [kv.key, kv.value.toString()]))
    const missing = [...acked].filter(([k, v]) => stored.get(k) !== v)
    t.same(missing, [], 'every acknowledged write is readable with the bytes acknowledged')
    const misencoded = listed.items.filter(kv => kv.value.toString() !== `${kv.key}@${kv.modRevision}`).map(kv => kv.key)
    t.same(misencoded, [], 'every stored value carries the revision it committed at')
    await w.until(() => w.events.length >= stored.size, 15_000)
    const seen = w.events.map(e => e.key)
    t.equal(new Set(seen).size, seen.length, 'the watch delivered no event twice')
    t.same([...new Set(seen)].sort(), [...stored.keys()].sort(), 'the watch delivered every stored write')
    t.same(w.errors, [])
    t.ok(logs.some(m => m.includes('resuming from revision')), 'the watch broke with the member and resumed on another')
    w.handle.stop()
    cluster.restart(0)
  })
}
