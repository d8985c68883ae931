import t from 'tap'
import { body, ctx } from '../../registry/testing.js'
import { admissionFixture, pod } from '../testing.js'
import { inProcessClient } from '../../controllers/client/in-process.js'
import { listObjects } from '../lookup.js'
import { resourceQuotaPlugin } from './resource-quota.js'
import { FENCE_MS, QuotaLister } from './quota-lister.js'
import type { Registry } from '../../registry/types.js'
import type { Fixture } from '../../registry/testing.js'

const QUOTAS = { group: '', version: 'v1', resource: 'resourcequotas', namespaced: true }
const quota = (name: string, hard: Record<string, string>): Record<string, unknown> =>
  ({ apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name }, spec: { hard } })

function listerOf (registry: () => Registry, now?: () => number): QuotaLister {
  return new QuotaLister(() => inProcessClient(registry(), 'test').resource(QUOTAS), now)
}

/** A fixture admitting through ResourceQuota with `lister` (built on the fixture's own registry). */
async function fixture (now?: () => number): Promise<{ fx: Fixture, lister: QuotaLister }> {
  let fx: Fixture | undefined
  const lister = listerOf(() => fx!.registry, now)
  fx = await admissionFixture(['ResourceQuota'], { ResourceQuota: deps => resourceQuotaPlugin(deps, lister) })
  return { fx, lister }
}

const turn = async (): Promise<void> => await new Promise(resolve => setImmediate(resolve))

/** Waits until memory answers for `ns` (synced, nothing fenced), at most 200 turns. */
async function answered (lister: QuotaLister, ns: string): Promise<readonly Record<string, any>[] | undefined> { // eslint-disable-line @typescript-eslint/no-explicit-any
  for (let i = 0; i < 200; i++) {
    const q = lister.quotas(ns)
    if (q !== undefined) return q
    await turn()
  }
  return undefined
}

const summary = (qs: readonly Record<string, any>[]): unknown => qs.map(q => [q.metadata.name, q.metadata.resourceVersion, q.spec, q.status ?? null]) // eslint-disable-line @typescript-eslint/no-explicit-any

t.test('memory holds what the registry holds after every kind of quota write, in every namespace', async t => {
  const { fx, lister } = await fixture()
  t.teardown(async () => { lister.stop(); await fx.close() })
  const r = fx.registry
  const quotas = r.handler('', 'v1', 'resourcequotas')!
  const cms = r.handler('', 'v1', 'configmaps')!
  t.equal(lister.quotas('default'), undefined, 'not synced before the first use')
  t.same(await answered(lister, 'default'), [], 'synced: a namespace without quotas')
  const namespaces = ['default', 'kube-system']
  let n = 0
  const steps: Array<() => Promise<unknown>> = [
    async () => await quotas.create(ctx(), 'default', body(quota('b', { 'count/configmaps': '100' }))),
    async () => await quotas.create(ctx(), 'default', body(quota('a', { configmaps: '50' }))),
    async () => await cms.create(ctx(), 'default', body({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm${n++}` } })),
    async () => await quotas.create(ctx(), 'kube-system', body(quota('c', { secrets: '1' }))),
    async () => await quotas.patch(ctx(), 'default', 'a', cur => ({ ...cur, spec: { hard: { configmaps: '60' } } })),
    async () => await quotas.patch(ctx(), 'default', 'b', cur => ({ ...cur, status: { hard: { 'count/configmaps': '100' }, used: { 'count/configmaps': '7' } } }), 'status'),
    async () => await cms.create(ctx(), 'default', body({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm${n++}` } })),
    async () => await quotas.delete(ctx(), 'default', 'a', {}),
    async () => await cms.create(ctx(), 'default', body({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm${n++}` } })),
    async () => await quotas.delete(ctx(), 'kube-system', 'c', {})
  ]
  for (const [i, step] of steps.entries()) {
    await step()
    for (const ns of namespaces) {
      const fresh = await listObjects(r, '', 'v1', 'resourcequotas', ns)
      let mem = await answered(lister, ns)
      // The watch may be a turn behind a status write (not fenced): wait for it, then the two must agree.
      for (let k = 0; k < 50 && JSON.stringify(summary(mem ?? [])) !== JSON.stringify(summary(fresh)); k++) { await turn(); mem = lister.quotas(ns) }
      t.same(summary(mem ?? []), summary(fresh), `step ${i}, namespace ${ns}`)
    }
  }
})

t.test('a quota written through this server is enforced by the very next create; memory answers once the watch showed it', async t => {
  const { fx, lister } = await fixture()
  t.teardown(async () => { lister.stop(); await fx.close() })
  const r = fx.registry
  t.same(await answered(lister, 'default'), [])
  await r.handler('', 'v1', 'resourcequotas')!.create(ctx(), 'default', body(quota('q', { pods: '1' })))
  t.equal(lister.quotas('default'), undefined, 'fenced until the watch shows the new quota')
  await r.handler('', 'v1', 'pods')!.create(ctx(), 'default', body(pod('a')))
  const err = await r.handler('', 'v1', 'pods')!.create(ctx(), 'default', body(pod('b'))).catch(e => e)
  t.equal(err.message, 'pods "b" is forbidden: exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1')
  const mem = await answered(lister, 'default')
  t.same(mem?.map(q => [q.metadata.name, q.status?.used]), [['q', { pods: '1' }]], 'memory has the quota and the charge')
  const again = await r.handler('', 'v1', 'pods')!.create(ctx(), 'default', body(pod('c'))).catch(e => e)
  t.equal(again.code, 403, 'enforced from memory')
})

t.test('a quota made elsewhere is in memory once its watch event arrives, and is enforced from then on', async t => {
  // The registry admits without this lister's plugin: as a quota written through another API server.
  let fx: Fixture | undefined
  const lister = listerOf(() => fx!.registry)
  fx = await admissionFixture([])
  t.teardown(async () => { lister.stop(); await fx!.close() })
  t.same(await answered(lister, 'default'), [])
  await fx.registry.handler('', 'v1', 'resourcequotas')!.create(ctx(), 'default', body(quota('q', { pods: '1' })))
  let turns = 0
  while ((lister.quotas('default') ?? []).length === 0 && turns < 100) { await turn(); turns++ }
  t.ok(turns <= 2, `seen within two event-loop turns of the commit (took ${turns})`)
  t.same(lister.quotas('default')?.map(q => q.metadata.name), ['q'])
})

t.test('a refusal from stale memory is confirmed against the registry: a recount that lowered the usage is honoured', async t => {
  const { fx, lister } = await fixture()
  t.teardown(async () => { lister.stop(); await fx.close() })
  const r = fx.registry
  const quotas = r.handler('', 'v1', 'resourcequotas')!
  const cms = r.handler('', 'v1', 'configmaps')!
  await quotas.create(ctx(), 'default', body(quota('q', { configmaps: '2' })))
  const cm = (name: string): Parameters<typeof cms.create>[2] => body({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } })
  await cms.create(ctx(), 'default', cm('a'))
  await cms.create(ctx(), 'default', cm('b'))
  t.same((await answered(lister, 'default'))?.map(q => q.status.used), [{ configmaps: '2' }])
  // The quota controller recounts (one was deleted): memory still says 2 for a turn.
  await quotas.patch(ctx(), 'default', 'q', cur => ({ ...cur, status: { hard: { configmaps: '2' }, used: { configmaps: '1' } } }), 'status')
  t.same(lister.quotas('default')?.map(q => q.status.used), [{ configmaps: '2' }], 'memory is stale here')
  await cms.create(ctx(), 'default', cm('c'))
  const q = (await quotas.get(ctx(), 'default', 'q', {})) as { object: any } // eslint-disable-line @typescript-eslint/no-explicit-any
  t.same(q.object.status.used, { configmaps: '2' })
  const err = await cms.create(ctx(), 'default', cm('d')).catch(e => e)
  t.equal(err.message, 'configmaps "d" is forbidden: exceeded quota: q, requested: configmaps=1, used: configmaps=2, limited: configmaps=2')
})

t.test('a fence of a write that never landed lifts after FENCE_MS; a stopped lister starts over', async t => {
  let now = 1_000_000
  const { fx, lister } = await fixture(() => now)
  t.teardown(async () => { lister.stop(); await fx.close() })
  const r = fx.registry
  const quotas = r.handler('', 'v1', 'resourcequotas')!
  await quotas.create(ctx(), 'default', body(quota('q', { pods: '5' })))
  const names = async (): Promise<unknown> => (await answered(lister, 'default'))?.map(q => q.metadata.name)
  t.same(await names(), ['q'])
  const dup = await quotas.create(ctx(), 'default', body(quota('q', { pods: '1' }))).catch(e => e)
  t.equal(dup.code, 409, 'the write failed after admission fenced it')
  for (let i = 0; i < 5; i++) await turn()
  t.equal(lister.quotas('default'), undefined, 'still fenced: the watch never shows that write')
  now += FENCE_MS
  t.same(lister.quotas('default')?.map(q => q.metadata.name), ['q'])
  lister.stop()
  t.equal(lister.quotas('default'), undefined, 'stopped: the registry answers')
  t.same(await names(), ['q'], 'and the next use syncs again')
})
