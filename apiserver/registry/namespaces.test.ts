// Namespace lifecycle: initial namespaces, admission of creates, termination and finalization.
import t from 'tap'
import { body, ctx, eventually, openFixture, StoreTap, type Fixture } from './testing.js'
import type { ResourceHandler } from './types.js'
import { isStatusError } from '../errors/status-error.js'

let fx: Fixture
let nss: ResourceHandler
let cms: ResourceHandler
t.beforeEach(async () => {
  fx = await openFixture()
  nss = fx.registry.handler('', 'v1', 'namespaces')!
  cms = fx.registry.handler('', 'v1', 'configmaps')!
})
t.afterEach(async () => { await fx.close() })

async function failure (p: Promise<unknown>): Promise<{ code: number, message: string, causes?: unknown[] }> {
  try { await p } catch (err) { if (isStatusError(err)) return { code: err.code, message: err.message, causes: err.details?.causes }; throw err }
  throw new Error('expected failure')
}

t.test('the initial namespaces exist (also under Kubernetes\' names), Active with the orch finalizer, and start is idempotent', async t => {
  const list = await nss.list(ctx(), '', {})
  const names = list.items.map(b => JSON.parse(b.toString()).metadata.name)
  t.same(names, ['default', 'kube-node-lease', 'kube-public', 'kube-system', 'orch-node-lease', 'orch-public', 'orch-system'])
  const d = JSON.parse(list.items[0].toString())
  t.equal(d.status.phase, 'Active'); t.same(d.spec.finalizers, ['orch'])
  const { createRegistry } = await import('./registry.js')
  const { silentLogger } = await import('./testing.js')
  const second = createRegistry({ store: fx.store, logger: silentLogger })
  await second.start()
  t.equal((await nss.list(ctx(), '', {})).items.length, 7, 'a restart on the same store creates nothing new')
  await second.stop()
})

t.test('namespace names must be DNS-1123 labels', async t => {
  const e = await failure(nss.create(ctx(), '', body({ metadata: { name: 'a.b' } })))
  t.equal(e.code, 422)
})

t.test('creating in a missing namespace is 404', async t => {
  const e = await failure(cms.create(ctx(), 'nowhere', body({ metadata: { name: 'x' } })))
  t.equal(e.code, 404); t.equal(e.message, 'namespaces "nowhere" not found')
})

t.test('deleting a namespace terminates it, empties it honouring finalizers, then removes it', async t => {
  await nss.create(ctx(), '', body({ metadata: { name: 'doomed' } }))
  await cms.create(ctx(), 'doomed', body({ metadata: { name: 'plain' } }))
  await cms.create(ctx(), 'doomed', body({ metadata: { name: 'held', finalizers: ['example.com/hold'] } }))
  const del = await nss.delete(ctx(), '', 'doomed', {})
  t.equal(del.deleted, false)
  t.equal((del.object.status as any).phase, 'Terminating')
  t.ok((del.object.metadata as any).deletionTimestamp)
  const e = await failure(cms.create(ctx(), 'doomed', body({ metadata: { name: 'late' } })))
  t.equal(e.code, 403)
  t.same(e.causes, [{ reason: 'NamespaceTerminating', message: 'namespace doomed is being terminated', field: 'metadata.namespace' }])
  t.equal(e.message, 'configmaps "late" is forbidden: unable to create new content in namespace doomed because it is being terminated')
  await eventually(async () => (await cms.list(ctx(), 'doomed', {})).items.length === 1)
  const held = (await cms.get(ctx(), 'doomed', 'held', {}) as any).object
  t.ok(held.metadata.deletionTimestamp, 'the finalized object waits')
  t.ok((await nss.get(ctx(), '', 'doomed', {}) as any).object, 'the namespace waits for it')
  await cms.update(ctx(), 'doomed', 'held', body({ ...held, metadata: { ...held.metadata, finalizers: [] } }))
  await eventually(async () => (await failure(nss.get(ctx(), '', 'doomed', {})).catch(() => ({ code: 200 }))).code === 404)
})

t.test('users cannot drop spec.finalizers by update', async t => {
  const n = await nss.create(ctx(), '', body({ metadata: { name: 'keep' } }))
  const u = await nss.update(ctx(), '', 'keep', body({ ...n.object, spec: { finalizers: [] } }))
  t.same((u.object.spec as any).finalizers, ['orch'])
})

t.test('default, orch-system and orch-public may not be deleted', async t => {
  for (const name of ['default', 'orch-system', 'orch-public']) {
    const e = await failure(nss.delete(ctx(), '', name, {}))
    t.equal(e.code, 403); t.equal(e.message, `namespaces "${name}" is forbidden: this namespace may not be deleted`)
  }
})

t.test('a namespace carries the immutable orch.io/metadata.name and kubernetes.io/metadata.name labels and no generation', async t => {
  const n = await nss.create(ctx(), '', body({ metadata: { name: 'labelled', labels: { team: 'a' } } }))
  const meta = n.object.metadata as any
  t.same(meta.labels, { team: 'a', 'orch.io/metadata.name': 'labelled', 'kubernetes.io/metadata.name': 'labelled' })
  t.equal(meta.generation, undefined)
  const u = await nss.update(ctx(), '', 'labelled', body({ ...n.object, metadata: { ...meta, labels: { 'orch.io/metadata.name': 'other' } } }))
  t.same((u.object.metadata as any).labels, { 'orch.io/metadata.name': 'labelled', 'kubernetes.io/metadata.name': 'labelled' }, 'restored on update')
  t.equal((u.object.metadata as any).generation, undefined)
  const g = await nss.create(ctx(), '', body({ metadata: { generateName: 'gen-' } }))
  const gm = g.object.metadata as any
  t.equal(gm.labels['orch.io/metadata.name'], gm.name, 'generated names are labelled too')
  t.equal(gm.labels['kubernetes.io/metadata.name'], gm.name)
})

t.test('without the upstream names only orch\'s initial namespaces are made', async t => {
  const { openFixture } = await import('./testing.js')
  const own = await openFixture({ upstreamAliases: false })
  t.teardown(() => own.close())
  const list = await own.registry.handler('', 'v1', 'namespaces')!.list(ctx(), '', {})
  t.same(list.items.map(b => JSON.parse(b.toString()).metadata.name), ['default', 'orch-node-lease', 'orch-public', 'orch-system'])
  t.equal(own.registry.handler('apiextensions.k8s.io', 'v1', 'customresourcedefinitions'), undefined, 'no alias groups')
})

t.test('the namespace gate follows the stored bytes it reads, create after create (its verdict is kept per bytes)', async t => {
  const { namespaceAdmission } = await import('./namespaces.js')
  let stored: Buffer | undefined
  const store = { get: async () => stored === undefined ? undefined : { key: '/core/namespaces/ns', value: stored, modRevision: 1, createRevision: 1, version: 1 } }
  const gate = namespaceAdmission(store as unknown as Parameters<typeof namespaceAdmission>[0], { group: '', resource: 'configmaps' })
  const ns = (extra: Record<string, unknown>): Buffer => Buffer.from(JSON.stringify({ metadata: { name: 'ns' }, ...extra }))
  stored = ns({ status: { phase: 'Active' } })
  await gate('ns', 'a')
  await gate('ns', 'b')
  stored = ns({ status: { phase: 'Terminating' } })
  t.equal((await failure(gate('ns', 'c'))).code, 403, 'a namespace turning Terminating refuses at once')
  stored = ns({ status: { phase: 'Active' } })
  await gate('ns', 'd')
  stored = Buffer.from(JSON.stringify({ metadata: { name: 'ns', deletionTimestamp: '2026-01-01T00:00:00Z' } }))
  t.equal((await failure(gate('ns', 'e'))).code, 403, 'a deletionTimestamp refuses')
  stored = undefined
  t.equal((await failure(gate('ns', 'f'))).code, 404)
  stored = Buffer.from('{not json')
  await t.rejects(gate('ns', 'g'), SyntaxError, 'bytes that do not parse fail as before')
})

t.test('the gate answers from the controller\'s watch without a store read, as the store would, at every step', async t => {
  const { namespaceAdmission } = await import('./namespaces.js')
  // The reference: the same gate reading the store every time.
  const storeGate = namespaceAdmission(fx.store, { group: '', resource: 'configmaps' })
  let namespaceReads = 0
  const get = fx.store.get.bind(fx.store)
  fx.store.get = async (key, opts) => { if (key.startsWith('/core/namespaces/')) namespaceReads++; return await get(key, opts) }
  const verdict = async (p: Promise<unknown>): Promise<number> => { try { await p; return 0 } catch (err) { if (isStatusError(err)) return err.code; throw err } }
  const cm = (name: string): ReturnType<typeof body> => body({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, finalizers: ['test/hold'] } })
  const compare = async (step: string): Promise<void> => {
    for (const ns of ['default', 'x', 'never']) {
      const want = await verdict(storeGate(ns, 'probe'))
      const before = namespaceReads
      const got = await verdict(cms.create(ctx('Strict', true), ns, cm('probe')))
      t.equal(got, want, `${step}: ${ns}`)
      // A namespace that exists is answered from memory; a missing one is read (it may have been created a moment ago).
      if (want !== 404) t.equal(namespaceReads, before, `${step}: ${ns} answered without a store read`)
    }
  }
  await compare('start')
  await nss.create(ctx(), '', body({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'x' } }))
  await compare('created')
  await cms.create(ctx(), 'x', cm('held'))
  await nss.delete(ctx(), '', 'x', {})
  // No turn of the event loop in between: the store's watchers had the change before the delete returned.
  t.equal(await verdict(cms.create(ctx('Strict', true), 'x', cm('right-after'))), 403, 'terminating at once')
  await compare('terminating')
  await cms.patch(ctx(), 'x', 'held', cur => ({ ...cur, metadata: { ...(cur.metadata as object), finalizers: [] } }))
  await eventually(async () => await verdict(storeGate('x', 'probe')) === 404)
  // A read sees a commit before it is flushed; the store's watchers are handed it once flushed (until then the gate
  // still refuses with 403 from what the watch last said).
  await eventually(async () => await verdict(cms.create(ctx('Strict', true), 'x', cm('probe'))) === 404)
  await compare('removed')
})

t.test('the namespace controller lists and watches again after its watch fails, and finalizes what was deleted meanwhile', async t => {
  await fx.close()
  const tap = new StoreTap()
  fx = await openFixture({ tap })
  nss = fx.registry.handler('', 'v1', 'namespaces')!
  cms = fx.registry.handler('', 'v1', 'configmaps')!
  const prefix = '/core/namespaces/'
  t.equal(tap.count(prefix), 1)

  // The store ends the watch (as it does for a watcher too slow to keep up); the next two lists fail.
  tap.failing.set(prefix, 2)
  const listsBefore = tap.lists.get(prefix) ?? 0
  tap.fail(prefix)
  await nss.create(ctx(), '', body({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'gap' } }))
  await nss.delete(ctx(), '', 'gap', {})

  await eventually(() => tap.count(prefix) === 2)
  t.equal((tap.lists.get(prefix) ?? 0) - listsBefore, 3, 'two failed lists, then one that started the new watch')
  await eventually(async () => (await fx.store.get(`${prefix}gap`)) === undefined)
  t.pass('the namespace deleted while no watch ran was finalized')
  // The new watch hands the gate the removal once flushed (a read sees it before).
  await eventually(async () => (await failure(cms.create(ctx(), 'gap', body({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } })))).code === 404)
})
