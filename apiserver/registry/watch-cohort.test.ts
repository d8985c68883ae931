// Watch cohorts: watchers without a filter of their own get, through their cohort, exactly what the per-watcher path gives.
import t from 'tap'
import { body, ctx, eventually, jsonEncoder, openFixture, RecordingSink, type Fixture } from './testing.js'
import type { GenericStore } from './generic-store.js'
import type { WatchEncoder } from './types.js'
import { WatchHub } from './watch-hub.js'

let fx: Fixture
let cms: GenericStore
t.beforeEach(async () => {
  fx = await openFixture()
  cms = fx.registry.store('', 'v1', 'configmaps')!
})
t.afterEach(async () => { await fx.close() })

const cm = (name: string, labels: Record<string, string> = {}): Record<string, unknown> => ({ metadata: { name, labels } })
const seen = (s: RecordingSink): string[] => s.events().map(e => `${e.type} ${String(e.object.metadata.namespace)}/${String(e.object.metadata.name)}@${String(e.object.metadata.resourceVersion)}`)
// A selector matching every object keeps a watcher on the per-watcher path: the reference the cohorts must equal.
const EVERYTHING = '!never-set'

t.test('cohort members receive exactly what per-watcher watchers receive, over many ticks, joiners included', async t => {
  const from = String(fx.store.currentRevision())
  const watch = async (ns: string, selector?: string, rv = from): Promise<RecordingSink> => {
    const s = new RecordingSink()
    await cms.watch(ctx(), ns, { resourceVersion: rv, ...(selector !== undefined ? { labelSelector: selector } : {}) }, jsonEncoder, s)
    return s
  }
  const def = [await watch('default'), await watch('default')]
  const defRef = await watch('default', EVERYTHING)
  const all = await watch('')
  const allRef = await watch('', EVERYTHING)
  let late: RecordingSink | undefined
  let lateRef: RecordingSink | undefined
  for (let round = 0; round < 6; round++) {
    await Promise.all(Array.from({ length: 5 }, (_, i) => cms.create(ctx(), (round + i) % 2 === 0 && i !== 1 ? 'orch-system' : 'default', body(cm(`r${round}-${i}`)))))
    const first = await cms.get(ctx(), 'default', `r${round}-1`, {}) as { object: Record<string, any> } // eslint-disable-line @typescript-eslint/no-explicit-any
    await cms.update(ctx(), 'default', `r${round}-1`, body({ ...first.object, data: { round: String(round) } }))
    if (round % 2 === 1) await cms.delete(ctx(), 'default', `r${round}-1`, {})
    if (round === 2) {
      // Joiners from an older revision replay from the ring, then join the stream (and later their cohort).
      late = await watch('default', undefined, from)
      lateRef = await watch('default', EVERYTHING, from)
    }
    await new Promise(resolve => setImmediate(resolve))
  }
  await eventually(() => seen(defRef).length === seen(def[0]).length && seen(allRef).length === seen(all).length && seen(lateRef!).length === seen(late!).length && seen(def[0]).length > 20)
  await new Promise(resolve => setTimeout(resolve, 50))
  t.ok(cms.watchHub.inCohorts >= 4, `the unfiltered watchers are in cohorts (${cms.watchHub.inCohorts})`)
  t.same(seen(def[0]), seen(defRef))
  t.same(seen(def[1]), seen(defRef))
  t.same(seen(all), seen(allRef))
  t.same(seen(late!), seen(lateRef!))
  t.same(seen(late!), seen(defRef), 'the joiner replayed everything since its revision')
})

t.test('a member that stops or whose sink fails leaves the others their stream', async t => {
  const from = String(fx.store.currentRevision())
  const sinks = [new RecordingSink(), new RecordingSink(), new RecordingSink()]
  const subs = await Promise.all(sinks.map(async s => await cms.watch(ctx(), 'default', { resourceVersion: from }, jsonEncoder, s)))
  await cms.create(ctx(), 'default', body(cm('a')))
  for (const s of sinks) await s.waitFor(1)
  await eventually(() => cms.watchHub.inCohorts === 3)
  subs[0].stop()
  sinks[1].write = () => { throw new Error('socket gone') }
  await cms.create(ctx(), 'default', body(cm('b')))
  await sinks[2].waitFor(2)
  t.same(sinks[2].events().map(e => e.object.metadata.name), ['a', 'b'])
  t.same(sinks[0].events().map(e => e.object.metadata.name), ['a'], 'the stopped one got nothing more')
  t.equal(sinks[1].ended, true, 'the failed one ended')
  t.equal(cms.watchHub.inCohorts, 1)
  await cms.create(ctx(), 'default', body(cm('c')))
  await sinks[2].waitFor(3)
  t.same(sinks[2].events().map(e => e.object.metadata.name), ['a', 'b', 'c'])
})

t.test('a cohort too far behind ends every member with 410; an encoder failure ends them with 500 after what came before', async t => {
  const store = fx.registry.store('', 'v1', 'configmaps')!
  let flush: (() => void) | undefined
  const hub = new WatchHub({ store: fx.store, prefix: '/core/configmaps/', apiVersion: 'v1', kind: 'ConfigMap', logger: store.core.logger, translate: () => { throw new Error('x') }, maxPending: 3, defer: fn => { flush = fn } })
  t.teardown(() => hub.stop())
  const failing: WatchEncoder = { key: 'fails-on-bad', encode: ev => { if ((ev.object() as any).metadata.name === 'bad') throw new Error('cannot print'); return jsonEncoder.encode(ev) } } // eslint-disable-line @typescript-eslint/no-explicit-any
  const slow = [new RecordingSink(), new RecordingSink()]
  const broken = [new RecordingSink(), new RecordingSink()]
  for (const s of slow) hub.subscribe({ keyPrefix: '/core/configmaps/', encoder: jsonEncoder, sink: s, allowBookmarks: false }, fx.store.currentRevision())
  for (const s of broken) hub.subscribe({ keyPrefix: '/core/configmaps/default/', encoder: failing, sink: s, allowBookmarks: false }, fx.store.currentRevision())
  await store.create(ctx(), 'default', body(cm('first')))
  await eventually(() => flush !== undefined)
  flush!(); flush = undefined
  t.equal(hub.inCohorts, 4, 'all four joined their cohorts at the flush')
  await store.create(ctx(), 'default', body(cm('ok')))
  await store.create(ctx(), 'default', body(cm('bad')))
  for (let i = 0; i < 3; i++) await store.create(ctx(), 'orch-system', body(cm(`more${i}`)))
  await eventually(() => slow.every(s => s.ended) && broken.every(s => s.ended))
  for (const s of slow) {
    t.equal(s.error?.code, 410)
    t.same(s.events().map(e => e.type), ['ADDED', 'ERROR'], 'the first tick, then the error')
  }
  for (const s of broken) {
    t.equal(s.error?.code, 500)
    t.same(s.events().map(e => e.object.metadata?.name ?? e.type), ['first', 'ok', 'ERROR'], 'what came before, then the ERROR event')
  }
  t.equal(hub.size, 0)
})
