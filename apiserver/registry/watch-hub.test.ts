// Watch hub: shared store watch, shared buffers, batching, selector transitions, replay, 410, slow watchers.
import t from 'tap'
import { body, ctx, eventually, jsonEncoder, openFixture, RecordingSink, type Fixture } from './testing.js'
import type { GenericStore } from './generic-store.js'
import type { WatchEncoder } from './types.js'
import type { WatchBatch } from './watch-batch.js'

let fx: Fixture
let cms: GenericStore
t.beforeEach(async () => {
  fx = await openFixture({ bookmarkIntervalMs: 50, watchList: true })
  cms = fx.registry.store('', 'v1', 'configmaps')!
})
t.afterEach(async () => { await fx.close() })

const cm = (name: string, labels: Record<string, string> = {}): Record<string, unknown> => ({ metadata: { name, labels } })

t.test('N watchers share one store watch and receive the same Buffer per event', async t => {
  let storeWatches = 0
  const orig = fx.store.watch.bind(fx.store)
  fx.store.watch = (prefix, from, cb) => { if (prefix === '/core/configmaps/') storeWatches++; return orig(prefix, from, cb) }
  const from = String(fx.store.currentRevision())
  const sinks = Array.from({ length: 5 }, () => new RecordingSink())
  const subs = await Promise.all(sinks.map(s => cms.watch(ctx(), 'default', { resourceVersion: from }, jsonEncoder, s)))
  t.equal(storeWatches, 1)
  await cms.create(ctx(), 'default', body(cm('a')))
  await cms.create(ctx(), 'default', body(cm('b')))
  for (const s of sinks) await s.waitFor(2)
  for (let i = 0; i < 2; i++) for (const s of sinks) t.equal(s.chunks[i], sinks[0].chunks[i], 'identical Buffer object')
  t.same(sinks[0].events().map(e => e.type), ['ADDED', 'ADDED'])
  for (const s of subs) s.stop()
  t.equal(cms.watchHub.running, false, 'the store watch stops with the last watcher')
})

t.test('events of one tick reach a watcher in one write', async t => {
  const sink = new RecordingSink()
  await cms.watch(ctx(), 'default', { resourceVersion: String(fx.store.currentRevision()) }, jsonEncoder, sink)
  await Promise.all(Array.from({ length: 20 }, (_, i) => cms.create(ctx(), 'default', body(cm(`m${i}`)))))
  await sink.waitFor(20)
  t.ok(sink.writes.length < 20, `batched into ${sink.writes.length} writes`)
})

t.test('encoding happens once per event per encoder key', async t => {
  let calls = 0
  const counting: WatchEncoder = { key: 'count', encode: ev => { calls++; return jsonEncoder.encode(ev) } }
  const sinks = [new RecordingSink(), new RecordingSink(), new RecordingSink()]
  for (const s of sinks) await cms.watch(ctx(), '', { resourceVersion: String(fx.store.currentRevision()) }, counting, s)
  await cms.create(ctx(), 'default', body(cm('once')))
  for (const s of sinks) await s.waitFor(1)
  t.equal(calls, 1)
})

t.test('MODIFIED, DELETED with the delete revision, and namespace filtering', async t => {
  const sink = new RecordingSink()
  await cms.watch(ctx(), 'default', { resourceVersion: String(fx.store.currentRevision()) }, jsonEncoder, sink)
  await cms.create(ctx(), 'orch-system', body(cm('other')))
  const c = await cms.create(ctx(), 'default', body(cm('x')))
  await cms.update(ctx(), 'default', 'x', body({ ...c.object, data: { k: 'v' } }))
  await cms.delete(ctx(), 'default', 'x', {})
  await sink.waitFor(3)
  const evs = sink.events()
  t.same(evs.map(e => e.type), ['ADDED', 'MODIFIED', 'DELETED'])
  t.equal(evs[2].object.metadata.resourceVersion, String(fx.store.currentRevision()))
})

t.test('selector watchers see objects enter (ADDED) and leave (DELETED)', async t => {
  const sink = new RecordingSink()
  await cms.watch(ctx(), 'default', { resourceVersion: String(fx.store.currentRevision()), labelSelector: 'app=web' }, jsonEncoder, sink)
  const c = await cms.create(ctx(), 'default', body(cm('s1', { app: 'db' })))
  const u1 = await cms.update(ctx(), 'default', 's1', body({ ...c.object, metadata: { ...(c.object.metadata as object), labels: { app: 'web' } } }))
  const u2 = await cms.update(ctx(), 'default', 's1', body({ ...u1.object, data: { a: 'b' } }))
  await cms.update(ctx(), 'default', 's1', body({ ...u2.object, metadata: { ...(u2.object.metadata as object), labels: { app: 'db' } } }))
  await sink.waitFor(3)
  const evs = sink.events()
  t.same(evs.map(e => e.type), ['ADDED', 'MODIFIED', 'DELETED'])
  t.equal(evs[2].object.metadata.labels.app, 'web', 'DELETED carries the object before it left')
  t.equal(evs[2].object.metadata.resourceVersion, String(fx.store.currentRevision()))
})

t.test('a watch without resourceVersion starts with synthetic ADDED; sendInitialEvents ends with the bookmark', async t => {
  await cms.create(ctx(), 'default', body(cm('e1')))
  await cms.create(ctx(), 'default', body(cm('e2')))
  const plain = new RecordingSink()
  await cms.watch(ctx(), 'default', {}, jsonEncoder, plain)
  await plain.waitFor(2)
  t.same(plain.events().map(e => `${e.type} ${e.object.metadata.name}`), ['ADDED e1', 'ADDED e2'])
  const streaming = new RecordingSink()
  await cms.watch(ctx(), 'default', { sendInitialEvents: true, resourceVersionMatch: 'NotOlderThan', allowWatchBookmarks: true }, jsonEncoder, streaming)
  await streaming.waitFor(3)
  const evs = streaming.events()
  t.equal(evs[2].type, 'BOOKMARK')
  t.same(evs[2].object.metadata.annotations, { 'orch.io/initial-events-end': 'true', 'k8s.io/initial-events-end': 'true' })
  t.equal(evs[2].object.metadata.resourceVersion, String(fx.store.currentRevision()))
  await cms.create(ctx(), 'default', body(cm('e3')))
  await plain.waitFor(3)
  t.equal(plain.events()[2].object.metadata.name, 'e3')
})

t.test('periodic bookmarks when allowed', async t => {
  const sink = new RecordingSink()
  await cms.watch(ctx(), 'default', { resourceVersion: String(fx.store.currentRevision()), allowWatchBookmarks: true }, jsonEncoder, sink)
  await sink.waitFor(1)
  t.equal(sink.events()[0].type, 'BOOKMARK')
})

t.test('a watcher from an old revision replays history then joins the shared stream', async t => {
  const live = new RecordingSink()
  const start = fx.store.currentRevision()
  await cms.create(ctx(), 'default', body(cm('h1')))
  await cms.watch(ctx(), 'default', { resourceVersion: String(fx.store.currentRevision()) }, jsonEncoder, live)
  await cms.create(ctx(), 'default', body(cm('h2')))
  await live.waitFor(1)
  const late = new RecordingSink()
  await cms.watch(ctx(), 'default', { resourceVersion: String(start) }, jsonEncoder, late)
  await cms.create(ctx(), 'default', body(cm('h3')))
  await late.waitFor(3)
  await live.waitFor(2)
  t.same(late.events().map(e => e.object.metadata.name), ['h1', 'h2', 'h3'])
  await eventually(() => cms.watchHub.size === 2)
  t.equal(late.chunks[2], live.chunks[1], 'after joining, the shared Buffer')
})

t.test('a watch from a compacted revision is 410', async t => {
  const old = fx.store.currentRevision()
  await cms.create(ctx(), 'default', body(cm('c1')))
  await cms.create(ctx(), 'default', body(cm('c2')))
  await fx.store.compact(fx.store.currentRevision())
  const err = await cms.watch(ctx(), 'default', { resourceVersion: String(old) }, jsonEncoder, new RecordingSink()).catch(e => e)
  t.equal(err.code, 410); t.match(err.message, /^too old resource version: \d+ \(\d+\)$/)
})

t.test('a watcher that falls too far behind is ended with an error', async t => {
  await fx.close()
  fx = await openFixture()
  const store = fx.registry.store('', 'v1', 'configmaps')!
  const slow = new RecordingSink()
  // maxPending is per tick; 10k+ events of one tick overflow it only with a tiny cap, so use a hub of our own.
  const { WatchHub } = await import('./watch-hub.js')
  const hub = new WatchHub({ store: fx.store, prefix: '/core/configmaps/', apiVersion: 'v1', kind: 'ConfigMap', logger: store.core.logger, translate: () => { throw new Error('x') }, maxPending: 3, defer: () => {} })
  hub.subscribe({ keyPrefix: '/core/configmaps/', encoder: jsonEncoder, sink: slow, allowBookmarks: false }, fx.store.currentRevision())
  for (let i = 0; i < 5; i++) await store.create(ctx(), 'default', body(cm(`slow${i}`)))
  await eventually(() => slow.ended)
  t.equal(slow.error?.code, 410)
  t.equal(hub.size, 0)
  hub.stop()
})

t.test('a watch of one object sees only that object', async t => {
  const sink = new RecordingSink()
  await cms.watch(ctx(), 'default', { resourceVersion: String(fx.store.currentRevision()), name: 'only' }, jsonEncoder, sink)
  await cms.create(ctx(), 'default', body(cm('only-not')))
  await cms.create(ctx(), 'default', body(cm('only')))
  await sink.waitFor(1)
  await new Promise(resolve => setTimeout(resolve, 30))
  t.same(sink.events().map(e => e.object.metadata.name), ['only'])
})

t.test('watch query rules: sendInitialEvents needs NotOlderThan and bookmarks; match alone is 400', async t => {
  const code = async (q: Record<string, unknown>): Promise<number> =>
    await cms.watch(ctx(), 'default', q, jsonEncoder, new RecordingSink()).then(() => 200, e => e.code)
  t.equal(await code({ sendInitialEvents: true, allowWatchBookmarks: true }), 400)
  t.equal(await code({ sendInitialEvents: true, resourceVersionMatch: 'NotOlderThan' }), 400)
  t.equal(await code({ resourceVersion: '1', resourceVersionMatch: 'NotOlderThan' }), 400)
  t.equal(await code({ resourceVersion: String(fx.store.currentRevision() + 100) }), 504)
})

t.test('watchers selecting one field value (pods by node) get only their pods, indexed', async t => {
  const pods = fx.registry.store('', 'v1', 'pods')!
  const from = String(fx.store.currentRevision())
  const n1 = new RecordingSink(); const n2 = new RecordingSink(); const all = new RecordingSink()
  await pods.watch(ctx(), '', { resourceVersion: from, fieldSelector: 'spec.nodeName=n1' }, jsonEncoder, n1)
  await pods.watch(ctx(), '', { resourceVersion: from, fieldSelector: 'spec.nodeName=n2' }, jsonEncoder, n2)
  await pods.watch(ctx(), '', { resourceVersion: from }, jsonEncoder, all)
  const pod = (name: string, nodeName: string): Record<string, unknown> =>
    ({ metadata: { name }, spec: { nodeName, containers: [{ name: 'c', image: 'x:1' }] } })
  await pods.create(ctx(), 'default', body(pod('a', 'n1')))
  await pods.create(ctx(), 'default', body(pod('b', 'n2')))
  await pods.delete(ctx(), 'default', 'a', {})
  await pods.delete(ctx(), 'default', 'a', { gracePeriodSeconds: 0 })
  await all.waitFor(4)
  await n1.waitFor(3)
  t.same(n1.events().map(e => `${e.type} ${e.object.metadata.name}`), ['ADDED a', 'MODIFIED a', 'DELETED a'])
  t.same(n2.events().map(e => `${e.type} ${e.object.metadata.name}`), ['ADDED b'])
})

t.test('a watcher whose encoder throws ends alone; the others keep their watch', async t => {
  const fx2 = await openFixture()
  t.teardown(() => fx2.close())
  const cms2 = fx2.registry.handler('', 'v1', 'configmaps')!
  const good = new RecordingSink()
  const bad = new RecordingSink()
  const throwing = { key: 'broken', encode: () => { throw new Error('printer failed') } }
  const rv = (await cms2.list(ctx(), 'default', {})).resourceVersion
  await cms2.watch(ctx(), 'default', { resourceVersion: rv }, jsonEncoder, good)
  await cms2.watch(ctx(), 'default', { resourceVersion: rv }, throwing, bad)
  await cms2.create(ctx(), 'default', body({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'one' } }))
  await cms2.create(ctx(), 'default', body({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'two' } }))
  await good.waitFor(2)
  t.equal(bad.ended, true, 'the broken watcher ended')
  t.equal(bad.error?.code, 500)
  t.same(good.events().map(e => e.object.metadata.name), ['one', 'two'], 'the healthy watcher saw every event')
  t.equal(good.ended, false)
})

/** Records the batch objects handed to `writeShared`, as the HTTP sink receives them. */
class SharedSink extends RecordingSink {
  batches: WatchBatch[] = []
  writeShared (batch: WatchBatch): void { this.batches.push(batch); this.write([...batch.chunks]) }
}

t.test('watchers receiving the same events in a tick are handed the same batch object', async t => {
  const from = String(fx.store.currentRevision())
  const sinks = [new SharedSink(), new SharedSink(), new SharedSink()]
  await cms.watch(ctx(), 'default', { resourceVersion: from }, jsonEncoder, sinks[0])
  await cms.watch(ctx(), 'default', { resourceVersion: from }, jsonEncoder, sinks[1])
  await cms.watch(ctx(), '', { resourceVersion: from }, jsonEncoder, sinks[2])
  await Promise.all(Array.from({ length: 10 }, (_, i) => cms.create(ctx(), 'default', body(cm(`s${i}`)))))
  for (const s of sinks) await s.waitFor(10)
  t.equal(sinks[0].batches.length, sinks[1].batches.length)
  sinks[0].batches.forEach((b, i) => {
    t.equal(sinks[1].batches[i], b, `batch ${i} shared by the namespace watchers`)
    t.equal(sinks[2].batches[i], b, `batch ${i} shared with the all-namespaces watcher`)
  })
  t.same(sinks[2].events().map(e => e.object.metadata.name).sort(), Array.from({ length: 10 }, (_, i) => `s${i}`).sort())
})

t.test('watchers filtering different events in one tick each get theirs, in revision order', async t => {
  const from = String(fx.store.currentRevision())
  const all = new SharedSink()
  const def = new SharedSink()
  const sel = new SharedSink()
  await cms.watch(ctx(), '', { resourceVersion: from }, jsonEncoder, all)
  await cms.watch(ctx(), 'default', { resourceVersion: from }, jsonEncoder, def)
  await cms.watch(ctx(), '', { resourceVersion: from, labelSelector: 'pick=yes' }, jsonEncoder, sel)
  const writes = Array.from({ length: 12 }, (_, i) =>
    cms.create(ctx(), i % 3 === 0 ? 'orch-system' : 'default', body(cm(`f${i}`, i % 2 === 0 ? { pick: 'yes' } : {}))))
  await Promise.all(writes)
  await all.waitFor(12)
  await def.waitFor(8)
  await sel.waitFor(6)
  const rvs = (s: RecordingSink): number[] => s.events().map(e => Number(e.object.metadata.resourceVersion))
  const ascending = (xs: number[]): boolean => xs.every((x, i) => i === 0 || xs[i - 1] < x)
  t.equal(all.events().length, 12)
  t.ok(ascending(rvs(all)), 'all-namespaces watcher in order')
  t.same(def.events().map(e => e.object.metadata.namespace), Array(8).fill('default'))
  t.ok(ascending(rvs(def)), 'namespace watcher in order')
  t.same(sel.events().map(e => e.object.metadata.labels.pick), Array(6).fill('yes'))
  t.ok(ascending(rvs(sel)), 'selector watcher in order')
})

t.test('a bookmark queued after shared events follows them in the same watcher\'s stream', async t => {
  const sink = new SharedSink()
  await cms.watch(ctx(), 'default', { resourceVersion: String(fx.store.currentRevision()), allowWatchBookmarks: true }, jsonEncoder, sink)
  await cms.create(ctx(), 'default', body(cm('b1')))
  await eventually(() => sink.events().some(e => e.type === 'BOOKMARK'), 3000)
  const types = sink.events().map(e => e.type)
  t.equal(types[0], 'ADDED')
  t.equal(types.indexOf('BOOKMARK') > 0, true)
})

t.test('without the WatchList gate sendInitialEvents is 422 naming meta.orch.io; without aliases the bookmark carries only orch.io', async t => {
  const off = await openFixture()
  t.teardown(() => off.close())
  const err = await off.registry.store('', 'v1', 'configmaps')!.watch(ctx(), 'default',
    { sendInitialEvents: true, resourceVersionMatch: 'NotOlderThan', allowWatchBookmarks: true }, jsonEncoder, new RecordingSink()).then(() => undefined, e => e)
  t.equal(err?.code, 422)
  t.equal(err?.message, 'ListOptions.meta.orch.io "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled')
  const plain = await openFixture({ watchList: true, upstreamAliases: false })
  t.teardown(() => plain.close())
  const sink = new RecordingSink()
  await plain.registry.store('', 'v1', 'configmaps')!.watch(ctx(), 'default',
    { sendInitialEvents: true, resourceVersionMatch: 'NotOlderThan', allowWatchBookmarks: true }, jsonEncoder, sink)
  await sink.waitFor(1)
  t.same(sink.events()[0].object.metadata.annotations, { 'orch.io/initial-events-end': 'true' })
})

t.test('label-indexed watchers get exactly what a scanning watcher with the same selector gets', async t => {
  const from = String(fx.store.currentRevision())
  // `app=web,tier!=cache` is indexed by app=web; `app in (web,none),tier!=cache` selects the same objects unindexed.
  const indexed = new RecordingSink(); const scanned = new RecordingSink(); const other = new RecordingSink()
  await cms.watch(ctx(), '', { resourceVersion: from, labelSelector: 'app=web,tier!=cache' }, jsonEncoder, indexed)
  await cms.watch(ctx(), '', { resourceVersion: from, labelSelector: 'app in (web,none),tier!=cache' }, jsonEncoder, scanned)
  await cms.watch(ctx(), '', { resourceVersion: from, labelSelector: 'app=db' }, jsonEncoder, other)
  const relabel = async (name: string, labels: Record<string, string>): Promise<void> => {
    const cur = await cms.get(ctx(), 'default', name, {}) as { object: Record<string, unknown> }
    await cms.update(ctx(), 'default', name, body({ ...cur.object, metadata: { ...(cur.object.metadata as object), labels } }))
  }
  await cms.create(ctx(), 'default', body(cm('a', { app: 'web' })))
  await cms.create(ctx(), 'default', body(cm('b', { app: 'web', tier: 'cache' })))
  await cms.create(ctx(), 'default', body(cm('c', { app: 'db' })))
  await cms.create(ctx(), 'default', body(cm('d')))
  await relabel('b', { app: 'web' }) // enters
  await relabel('a', { app: 'db' }) // leaves web, enters db
  await relabel('d', { app: 'web' }) // enters from no label at all
  await cms.delete(ctx(), 'default', 'b', {})
  await cms.delete(ctx(), 'default', 'c', {})
  await scanned.waitFor(5)
  await indexed.waitFor(5)
  await other.waitFor(3)
  const seen = (s: RecordingSink): string[] => s.events().map(e => `${e.type} ${e.object.metadata.name} ${e.object.metadata.resourceVersion}`)
  t.same(seen(indexed), seen(scanned))
  t.same(indexed.events().map(e => `${e.type} ${e.object.metadata.name}`), ['ADDED a', 'ADDED b', 'DELETED a', 'ADDED d', 'DELETED b'])
  t.same(other.events().map(e => `${e.type} ${e.object.metadata.name}`), ['ADDED c', 'ADDED a', 'DELETED c'])
})
