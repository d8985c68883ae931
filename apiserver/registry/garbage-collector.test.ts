// Garbage collection on a real LMDB store: Background, Foreground and Orphan cascades, dangling owners, restarts, custom kinds.
import t from 'tap'
import { body, ctx, eventually, openFixture, silentLogger, type Fixture } from './testing.js'
import { createRegistry } from './registry.js'
import type { GenericStore } from './generic-store.js'
import type { Obj } from './object-meta.js'

let fx: Fixture
t.beforeEach(async () => { fx = await openFixture() })
t.afterEach(async () => { await fx.close() })

const cms = (): GenericStore => fx.registry.store('', 'v1', 'configmaps')!

interface Ref { apiVersion: string, kind: string, name: string, uid: string, blockOwnerDeletion?: boolean }
const refTo = (o: Obj, block = false): Ref => ({
  apiVersion: String(o.apiVersion), kind: String(o.kind), name: String((o.metadata as Obj).name), uid: String((o.metadata as Obj).uid),
  ...(block ? { blockOwnerDeletion: true } : {})
})

async function configMap (name: string, owners: Ref[] = [], finalizers?: string[]): Promise<Obj> {
  const metadata: Obj = { name, ...(owners.length > 0 ? { ownerReferences: owners } : {}), ...(finalizers ? { finalizers } : {}) }
  return (await cms().create(ctx(), 'default', body({ apiVersion: 'v1', kind: 'ConfigMap', metadata, data: { a: 'b' } }))).object
}

async function read (h: GenericStore, name: string, ns = 'default'): Promise<Obj | undefined> {
  try { return (await h.get(ctx(), ns, name, {}) as { object: Obj }).object } catch (err) {
    if ((err as { code?: number }).code === 404) return undefined
    throw err
  }
}
const gone = (h: GenericStore, name: string, ns = 'default') => async () => (await read(h, name, ns)) === undefined
const meta = (o: Obj | undefined): Obj => (o?.metadata ?? {}) as Obj
const sleep = async (ms: number): Promise<void> => await new Promise(resolve => setTimeout(resolve, ms))

t.test('background: a ConfigMap owned by a ConfigMap is deleted when its owner is, and the cascade continues', async t => {
  const owner = await configMap('owner')
  const child = await configMap('child', [refTo(owner)])
  await configMap('grandchild', [refTo(child)])
  const bystander = await configMap('bystander')
  await cms().delete(ctx(), 'default', 'owner', {})
  await eventually(gone(cms(), 'child'))
  await eventually(gone(cms(), 'grandchild'))
  t.ok(await read(cms(), 'bystander'), 'unrelated objects stay')
  t.equal(meta(bystander).name, 'bystander')
})

t.test('never deletes an object one of whose owners exists; drops the reference to the gone owner', async t => {
  const a = await configMap('a')
  const b = await configMap('b')
  await configMap('shared', [refTo(a), refTo(b)])
  await cms().delete(ctx(), 'default', 'a', { propagationPolicy: 'Background' })
  await eventually(async () => ((meta(await read(cms(), 'shared')).ownerReferences as Ref[]) ?? []).length === 1)
  const shared = await read(cms(), 'shared')
  t.same((meta(shared).ownerReferences as Ref[]).map(r => r.name), ['b'])
  await fx.registry.garbageCollector().idle()
  t.ok(await read(cms(), 'shared'), 'still there')
})

t.test('foreground: the owner waits for a blocking dependent held by its own finalizer, then goes', async t => {
  const owner = await configMap('owner')
  await configMap('blocker', [refTo(owner, true)], ['example.com/hold'])
  await configMap('loose', [refTo(owner)])
  const res = await cms().delete(ctx(), 'default', 'owner', { propagationPolicy: 'Foreground' })
  t.equal(res.deleted, false)
  await eventually(async () => Boolean(meta(await read(cms(), 'blocker')).deletionTimestamp))
  await eventually(gone(cms(), 'loose'))
  await fx.registry.garbageCollector().idle()
  await sleep(100)
  const waiting = await read(cms(), 'owner')
  t.ok(waiting, 'owner stays while a blocking dependent exists')
  t.same(meta(waiting).finalizers, ['foregroundDeletion'])
  await cms().updateInternal(ctx(), 'default', 'blocker', o => { delete (o.metadata as Obj).finalizers; return true })
  await eventually(gone(cms(), 'blocker'))
  await eventually(gone(cms(), 'owner'))
  t.equal(await read(cms(), 'owner'), undefined, 'owner removed once its blocking dependent is gone')
})

t.test('foreground: a dependent with blocking dependents of its own is deleted in the foreground too', async t => {
  const owner = await configMap('owner')
  const child = await configMap('child', [refTo(owner, true)])
  await configMap('grandchild', [refTo(child, true)], ['example.com/hold'])
  await cms().delete(ctx(), 'default', 'owner', { propagationPolicy: 'Foreground' })
  await eventually(async () => (meta(await read(cms(), 'child')).finalizers as string[] | undefined)?.includes('foregroundDeletion') === true)
  await eventually(async () => Boolean(meta(await read(cms(), 'grandchild')).deletionTimestamp))
  t.ok(await read(cms(), 'owner'))
  await cms().updateInternal(ctx(), 'default', 'grandchild', o => { delete (o.metadata as Obj).finalizers; return true })
  await eventually(gone(cms(), 'child'))
  await eventually(gone(cms(), 'owner'))
})

t.test('foreground: two objects owning each other with blocking references both go (the cycle is broken)', async t => {
  const a = await configMap('a')
  const b = await configMap('b', [refTo(a, true)])
  await cms().updateInternal(ctx(), 'default', 'a', o => { (o.metadata as Obj).ownerReferences = [refTo(b, true)]; return true })
  await cms().delete(ctx(), 'default', 'a', { propagationPolicy: 'Foreground' })
  await eventually(gone(cms(), 'a'))
  await eventually(gone(cms(), 'b'))
  t.equal(await read(cms(), 'b'), undefined, 'b is gone')
})

t.test('foreground with no dependents removes the finalizer at once', async t => {
  await configMap('alone')
  await cms().delete(ctx(), 'default', 'alone', { propagationPolicy: 'Foreground' })
  await eventually(gone(cms(), 'alone'))
  t.equal(await read(cms(), 'alone'), undefined, 'alone is gone')
})

t.test('orphan: the dependent stays without the ownerReference, the owner goes', async t => {
  const owner = await configMap('owner')
  const other = await configMap('other')
  await configMap('dep', [refTo(owner, true), refTo(other)])
  await configMap('dep2', [refTo(owner)])
  await cms().delete(ctx(), 'default', 'owner', { orphanDependents: true })
  await eventually(gone(cms(), 'owner'))
  t.same((meta(await read(cms(), 'dep')).ownerReferences as Ref[]).map(r => r.name), ['other'])
  const dep2 = await read(cms(), 'dep2')
  t.ok(dep2, 'orphaned dependent stays')
  t.equal(meta(dep2).ownerReferences, undefined)
  await fx.registry.garbageCollector().idle()
  t.ok(await read(cms(), 'dep2'), 'and is not collected later')
})

t.test('a dependent whose owner never existed is deleted; a reference matches kind as well as uid', async t => {
  await configMap('orphaned', [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'nobody', uid: 'c0ffee00-0000-4000-8000-000000000000' }])
  const owner = await configMap('owner')
  // Same name and uid as a live ConfigMap, but it names a Secret: no such Secret, so the owner is gone.
  await configMap('wrongkind', [{ ...refTo(owner), apiVersion: 'v1', kind: 'Secret' }])
  await configMap('wronguid', [{ ...refTo(owner), uid: 'c0ffee00-0000-4000-8000-000000000001' }])
  await configMap('rightful', [refTo(owner)])
  await eventually(gone(cms(), 'orphaned'))
  await eventually(gone(cms(), 'wrongkind'))
  await eventually(gone(cms(), 'wronguid'))
  await fx.registry.garbageCollector().idle()
  t.ok(await read(cms(), 'rightful'))
  t.ok(await read(cms(), 'owner'))
})

t.test('references to kinds that are not served never delete anything', async t => {
  await configMap('unknown', [{ apiVersion: 'nowhere.example.com/v1', kind: 'Ghost', name: 'g', uid: 'c0ffee00-0000-4000-8000-000000000002' }])
  await fx.registry.garbageCollector().idle()
  await sleep(50)
  t.ok(await read(cms(), 'unknown'))
})

t.test('a registry restarted mid-cascade finishes the job from the stored state', async t => {
  const fg = await configMap('fg-owner')
  await configMap('fg-dep', [refTo(fg, true)])
  const bg = await configMap('bg-owner')
  await configMap('bg-dep', [refTo(bg)])
  const or = await configMap('or-owner')
  await configMap('or-dep', [refTo(or)])
  await fx.registry.stop()
  // The server is down for the collector: deletions are only recorded.
  const offline = createRegistry({ store: fx.store, logger: silentLogger })
  const h = offline.store('', 'v1', 'configmaps')!
  await h.delete(ctx(), 'default', 'fg-owner', { propagationPolicy: 'Foreground' })
  await h.delete(ctx(), 'default', 'bg-owner', { propagationPolicy: 'Background' })
  await h.delete(ctx(), 'default', 'or-owner', { propagationPolicy: 'Orphan' })
  t.ok(await read(h, 'fg-owner'))
  t.ok(await read(h, 'bg-dep'))
  await offline.stop()
  const restarted = createRegistry({ store: fx.store, logger: silentLogger, controllerRetryMs: 20 })
  await restarted.start()
  try {
    const r = restarted.store('', 'v1', 'configmaps')!
    await eventually(gone(r, 'fg-dep'))
    await eventually(gone(r, 'fg-owner'))
    await eventually(gone(r, 'bg-dep'))
    await eventually(gone(r, 'or-owner'))
    const orphan = await read(r, 'or-dep')
    t.ok(orphan)
    t.equal(meta(orphan).ownerReferences, undefined)
  } finally {
    await restarted.stop()
  }
})

const widgetCRD = {
  apiVersion: 'apiextensions.orch.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.example.com' },
  spec: {
    group: 'example.com',
    scope: 'Namespaced',
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
    versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } } } } }]
  }
}

t.test('custom resources are owners and dependents like built-in kinds', async t => {
  await fx.registry.handler('apiextensions.orch.io', 'v1', 'customresourcedefinitions')!.create(ctx(), '', body(widgetCRD))
  await eventually(() => fx.registry.store('example.com', 'v1', 'widgets') !== undefined)
  const widgets = fx.registry.store('example.com', 'v1', 'widgets')!
  const widget = async (name: string, owners: Ref[] = []): Promise<Obj> => (await widgets.create(ctx(), 'default', body({
    apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name, ...(owners.length > 0 ? { ownerReferences: owners } : {}) }, spec: { size: 1 }
  }))).object
  const w = await widget('w-owner')
  await configMap('cm-of-widget', [refTo(w, true)])
  const cm = await configMap('cm-owner')
  await widget('widget-of-cm', [refTo(cm)])
  await widgets.delete(ctx(), 'default', 'w-owner', { propagationPolicy: 'Foreground' })
  await eventually(gone(cms(), 'cm-of-widget'))
  await eventually(gone(widgets, 'w-owner'))
  await cms().delete(ctx(), 'default', 'cm-owner', {})
  await eventually(gone(widgets, 'widget-of-cm'))
  t.equal(await read(widgets, 'widget-of-cm'), undefined, 'widget-of-cm is gone')
})

t.test('a cluster-scoped owner collects namespaced dependents', async t => {
  const ns = fx.registry.store('', 'v1', 'namespaces')!
  const owner = (await fx.registry.store('', 'v1', 'persistentvolumes')!.create(ctx(), '', body({
    apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: 'pv1' },
    spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/tmp/x' } }
  }))).object
  await configMap('of-pv', [refTo(owner)])
  t.ok(await read(ns, 'default', ''))
  await fx.registry.store('', 'v1', 'persistentvolumes')!.delete(ctx(), '', 'pv1', {})
  await eventually(gone(cms(), 'of-pv'))
  t.equal(await read(cms(), 'of-pv'), undefined, 'of-pv is gone')
})
