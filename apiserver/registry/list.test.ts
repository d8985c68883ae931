// LIST: paging snapshots, selectors, the resourceVersion table, expired tokens and compaction.
import t from 'tap'
import { body, ctx, openFixture, type Fixture } from './testing.js'
import type { ResourceHandler } from './types.js'
import { isStatusError } from '../errors/status-error.js'
import { encodeContinue } from './continue-token.js'

let fx: Fixture
let cms: ResourceHandler
t.before(async () => {
  fx = await openFixture()
  cms = fx.registry.handler('', 'v1', 'configmaps')!
  for (let i = 0; i < 10; i++) {
    await cms.create(ctx(), 'default', body({ metadata: { name: `cm-${i}`, labels: { parity: i % 2 === 0 ? 'even' : 'odd' } }, data: {} }))
  }
  await cms.create(ctx(), 'orch-system', body({ metadata: { name: 'elsewhere' } }))
})
t.teardown(async () => { await fx.close() })

async function code (p: Promise<unknown>): Promise<number> {
  try { await p } catch (err) { if (isStatusError(err)) return err.code; throw err }
  return 200
}
const names = (items: Buffer[]): string[] => items.map(b => JSON.parse(b.toString()).metadata.name)

t.test('lists a namespace or all namespaces with the current resourceVersion', async t => {
  const ns = await cms.list(ctx(), 'default', {})
  t.equal(ns.items.length, 10)
  t.equal(ns.resourceVersion, String(fx.store.currentRevision()))
  t.equal(ns.continue, '')
  t.equal(ns.remainingItemCount, undefined)
  const all = await cms.list(ctx(), '', {})
  t.equal(all.items.length, 11)
})

t.test('paging returns a consistent snapshot across chunks', async t => {
  const first = await cms.list(ctx(), 'default', { limit: 4 })
  t.equal(first.items.length, 4); t.not(first.continue, ''); t.equal(first.remainingItemCount, 6)
  await cms.create(ctx(), 'default', body({ metadata: { name: 'cm-99' } }))
  await cms.delete(ctx(), 'default', 'cm-8', {})
  const second = await cms.list(ctx(), 'default', { limit: 4, continue: first.continue })
  t.equal(second.remainingItemCount, 2, 'counted at the snapshot, from the token')
  const third = await cms.list(ctx(), 'default', { limit: 4, continue: second.continue })
  t.equal(third.continue, '')
  t.equal(second.resourceVersion, first.resourceVersion); t.equal(third.resourceVersion, first.resourceVersion)
  t.same([...names(first.items), ...names(second.items), ...names(third.items)], Array.from({ length: 10 }, (_, i) => `cm-${i}`))
  await cms.create(ctx(), 'default', body({ metadata: { name: 'cm-8', labels: { parity: 'even' } } }))
  await cms.delete(ctx(), 'default', 'cm-99', {})
})

t.test('selectors filter while scanning and omit remainingItemCount', async t => {
  const even = await cms.list(ctx(), 'default', { labelSelector: 'parity=even' })
  t.same(names(even.items), ['cm-0', 'cm-2', 'cm-4', 'cm-6', 'cm-8'])
  const page = await cms.list(ctx(), 'default', { labelSelector: 'parity=odd', limit: 2 })
  t.same(names(page.items), ['cm-1', 'cm-3']); t.not(page.continue, ''); t.equal(page.remainingItemCount, undefined)
  const rest = await cms.list(ctx(), 'default', { labelSelector: 'parity=odd', limit: 10, continue: page.continue })
  t.same(names(rest.items), ['cm-5', 'cm-7', 'cm-9'])
  const byName = await cms.list(ctx(), '', { fieldSelector: 'metadata.name=elsewhere' })
  t.same(names(byName.items), ['elsewhere'])
  t.equal(await code(cms.list(ctx(), '', { fieldSelector: 'data.x=1' })), 400)
})

t.test('resourceVersion table: Exact, NotOlderThan, invalid combinations', async t => {
  const snap = await cms.list(ctx(), 'default', {})
  await cms.create(ctx(), 'default', body({ metadata: { name: 'later' } }))
  const exact = await cms.list(ctx(), 'default', { resourceVersion: snap.resourceVersion, resourceVersionMatch: 'Exact' })
  t.equal(exact.resourceVersion, snap.resourceVersion)
  t.equal(exact.items.length, snap.items.length, 'Exact reads the old snapshot')
  const paged = await cms.list(ctx(), 'default', { resourceVersion: snap.resourceVersion, limit: 100 })
  t.equal(paged.resourceVersion, snap.resourceVersion, 'rv with limit and no match is Exact')
  const newer = await cms.list(ctx(), 'default', { resourceVersion: snap.resourceVersion, resourceVersionMatch: 'NotOlderThan' })
  t.equal(newer.items.length, snap.items.length + 1)
  const any = await cms.list(ctx(), 'default', { resourceVersion: '0' })
  t.equal(any.items.length, snap.items.length + 1)
  t.equal(await code(cms.list(ctx(), 'default', { resourceVersionMatch: 'Exact' })), 400, 'match without rv')
  t.equal(await code(cms.list(ctx(), 'default', { resourceVersion: '0', resourceVersionMatch: 'Exact' })), 400)
  const page = await cms.list(ctx(), 'default', { limit: 1 })
  t.equal(await code(cms.list(ctx(), 'default', { limit: 1, continue: page.continue, resourceVersion: '5' })), 400, 'continue with rv')
  t.equal(await code(cms.list(ctx(), 'default', { limit: 1, continue: page.continue, resourceVersion: '0' })), 200, 'continue with rv 0 is the token')
  t.equal(await code(cms.list(ctx(), 'default', { resourceVersion: String(fx.store.currentRevision() + 50), resourceVersionMatch: 'Exact' })), 504)
  t.equal(await code(cms.list(ctx(), 'default', { continue: 'garbage!' })), 400)
  await cms.delete(ctx(), 'default', 'later', {})
})

t.test('an expired continue token is 410 carrying a token that continues inconsistently at the newest revision', async t => {
  const stale = encodeContinue({ rv: fx.store.currentRevision(), start: 'default/cm-1', issuedAt: Date.now() - 6 * 60 * 1000 })
  const err = await cms.list(ctx(), 'default', { limit: 2, continue: stale }).catch(e => e)
  t.ok(isStatusError(err)); t.equal(err.code, 410); t.equal(err.reason, 'Expired')
  const fresh = err.toStatus().metadata.continue
  t.type(fresh, 'string', 'the Status carries a continue token, as its message says')
  const rest = await cms.list(ctx(), 'default', { limit: 2, continue: fresh })
  t.ok(rest.items.length > 0, 'the fresh token continues the list')
  t.equal(rest.resourceVersion, String(fx.store.currentRevision()), 'at the newest revision')
})

t.test('a continue token whose snapshot was compacted gets the same 410 with a fresh token', async t => {
  const page = await cms.list(ctx(), 'default', { limit: 1 })
  await cms.create(ctx(), 'default', body({ metadata: { name: 'after-page' } }))
  await fx.store.compact(fx.store.currentRevision())
  const err = await cms.list(ctx(), 'default', { limit: 1, continue: page.continue }).catch(e => e)
  t.equal(err.code, 410)
  t.match(err.message, /use the continue token in this response/)
  t.type(err.toStatus().metadata.continue, 'string')
  await cms.delete(ctx(), 'default', 'after-page', {})
})

t.test('a compacted Exact resourceVersion is 410', async t => {
  const old = fx.store.currentRevision()
  await cms.create(ctx(), 'default', body({ metadata: { name: 'compact-me' } }))
  await fx.store.compact(fx.store.currentRevision())
  const err = await cms.list(ctx(), 'default', { resourceVersion: String(old), resourceVersionMatch: 'Exact' }).catch(e => e)
  t.ok(isStatusError(err)); t.equal(err.code, 410)
  t.equal(err.message, 'The resourceVersion for the provided list is too old.')
})

t.test('NotOlderThan with limit is 410 when the version is older than the retained history; without limit it reads the newest', async t => {
  const old = fx.store.currentRevision()
  await cms.create(ctx(), 'default', body({ metadata: { name: 'compact-me-too' } }))
  await fx.store.compact(fx.store.currentRevision())
  const err = await cms.list(ctx(), 'default', { resourceVersion: String(old), resourceVersionMatch: 'NotOlderThan', limit: 1 }).catch(e => e)
  t.ok(isStatusError(err)); t.equal(err.code, 410)
  t.equal(err.message, 'The resourceVersion for the provided list is too old.')
  const all = await cms.list(ctx(), 'default', { resourceVersion: String(old), resourceVersionMatch: 'NotOlderThan' })
  t.equal(all.resourceVersion, String(fx.store.currentRevision()))
  const fresh = await cms.list(ctx(), 'default', { resourceVersion: String(fx.store.currentRevision()), resourceVersionMatch: 'NotOlderThan', limit: 1 })
  t.equal(fresh.items.length, 1)
})
