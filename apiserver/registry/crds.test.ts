// CRD lifecycle: create, serve, validate custom objects, multi-version, delete, restart.
import t from 'tap'
import { body, ctx, eventually, openFixture, StoreTap, type Fixture } from './testing.js'
import { isStatusError } from '../errors/status-error.js'

let fx: Fixture
t.beforeEach(async () => { fx = await openFixture() })
t.afterEach(async () => { await fx.close() })

const crd = (scope = 'Namespaced'): Record<string, unknown> => ({
  apiVersion: 'apiextensions.orch.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.example.com' },
  spec: {
    group: 'example.com',
    scope,
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
    versions: [{
      name: 'v1',
      served: true,
      storage: true,
      subresources: { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' } },
      schema: {
        openAPIV3Schema: {
          type: 'object',
          properties: {
            spec: { type: 'object', properties: { size: { type: 'integer', default: 3 }, replicas: { type: 'integer' } }, required: ['replicas'] },
            status: { type: 'object', properties: { replicas: { type: 'integer' } } }
          }
        }
      }
    }]
  }
})

async function code (p: Promise<unknown>): Promise<number> {
  try { await p } catch (err) { if (isStatusError(err)) return err.code; throw err }
  return 200
}

t.test('a CRD is served once created, Established, and its objects are validated, pruned and defaulted', async t => {
  const crds = fx.registry.handler('apiextensions.orch.io', 'v1', 'customresourcedefinitions')!
  let changes = 0
  fx.registry.onDefinitionsChanged(() => { changes++ })
  const created = await crds.create(ctx(), '', body(crd()))
  t.same((created.object.metadata as any).finalizers, ['customresourcecleanup.apiextensions.orch.io'])
  await eventually(() => fx.registry.handler('example.com', 'v1', 'widgets') !== undefined)
  t.ok(changes >= 1)
  t.ok(fx.registry.definitions().some(d => d.kind === 'Widget'))
  await eventually(async () => {
    const c = (await crds.get(ctx(), '', 'widgets.example.com', {}) as any).object
    return (c.status?.conditions ?? []).some((x: any) => x.type === 'Established' && x.status === 'True')
  })
  const got = (await crds.get(ctx(), '', 'widgets.example.com', {}) as any).object
  t.equal(got.status.acceptedNames.kind, 'Widget')

  const widgets = fx.registry.handler('example.com', 'v1', 'widgets')!
  const w = await widgets.create(ctx('Ignore'), 'default', body({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w1' }, spec: { replicas: 1, junk: true } }))
  t.same(w.object.spec, { replicas: 1, size: 3 }, 'pruned and defaulted')
  t.equal(await code(widgets.create(ctx(), 'default', body({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w2' }, spec: { replicas: 'x' } }))), 422)
  t.equal(await code(widgets.create(ctx(), 'default', body({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w3' }, spec: {} }))), 422)
  const s = await widgets.update(ctx(), 'default', 'w1', body({ kind: 'Scale', apiVersion: 'autoscaling/v1', metadata: { name: 'w1' }, spec: { replicas: 5 } }), 'scale')
  t.equal((s.object.spec as any).replicas, 5)
})

t.test('deleting a CRD removes its objects, stops serving it, then removes it', async t => {
  const crds = fx.registry.handler('apiextensions.orch.io', 'v1', 'customresourcedefinitions')!
  await crds.create(ctx(), '', body(crd()))
  await eventually(() => fx.registry.handler('example.com', 'v1', 'widgets') !== undefined)
  const widgets = fx.registry.handler('example.com', 'v1', 'widgets')!
  for (const n of ['a', 'b']) await widgets.create(ctx(), 'default', body({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: n }, spec: { replicas: 1 } }))
  const del = await crds.delete(ctx(), '', 'widgets.example.com', {})
  t.equal(del.deleted, false)
  await eventually(() => fx.registry.handler('example.com', 'v1', 'widgets') === undefined)
  await eventually(async () => await code(crds.get(ctx(), '', 'widgets.example.com', {})) === 404)
  t.equal((await fx.store.list('/example.com/widgets/')).items.length, 0)
})

t.test('a CRD being deleted reports the Terminating condition while its objects remain', async t => {
  const crds = fx.registry.handler('apiextensions.orch.io', 'v1', 'customresourcedefinitions')!
  const created = await crds.create(ctx(), '', body(crd()))
  t.equal((created.object.metadata as any).generation, 1, 'CRDs track generation')
  await eventually(() => fx.registry.handler('example.com', 'v1', 'widgets') !== undefined)
  const widgets = fx.registry.handler('example.com', 'v1', 'widgets')!
  const w = await widgets.create(ctx(), 'default', body({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'held', finalizers: ['example.com/hold'] }, spec: { replicas: 1 } }))
  t.equal((w.object.metadata as any).generation, 1, 'custom resources track generation')
  await crds.delete(ctx(), '', 'widgets.example.com', {})
  const terminating = async (): Promise<any> => ((await crds.get(ctx(), '', 'widgets.example.com', {}) as any).object.status.conditions ?? [])
    .find((c: any) => c.type === 'Terminating')
  await eventually(async () => (await terminating())?.reason === 'InstanceDeletionCheck')
  const cond = await terminating()
  t.equal(cond.status, 'True')
  t.match(cond.message, /could not confirm zero CustomResources remaining/)
  const held = (await widgets.get(ctx(), 'default', 'held', {}) as any).object
  t.ok(held.metadata.deletionTimestamp)
  t.equal(held.metadata.generation, 2, 'the start of a graceful deletion bumps the generation')
  await widgets.update(ctx(), 'default', 'held', body({ ...held, metadata: { ...held.metadata, finalizers: [] } }))
  await eventually(async () => await code(crds.get(ctx(), '', 'widgets.example.com', {})) === 404)
})

t.test('existing CRDs are served again after a restart of the registry', async t => {
  const crds = fx.registry.handler('apiextensions.orch.io', 'v1', 'customresourcedefinitions')!
  await crds.create(ctx(), '', body(crd('Cluster')))
  await eventually(() => fx.registry.handler('example.com', 'v1', 'widgets') !== undefined)
  const { createRegistry } = await import('./registry.js')
  const { silentLogger } = await import('./testing.js')
  const again = createRegistry({ store: fx.store, logger: silentLogger })
  await again.start()
  t.ok(again.handler('example.com', 'v1', 'widgets'))
  t.equal(again.handler('example.com', 'v1', 'widgets')!.definition.namespaced, false)
  await again.stop()
})

t.test('an invalid CRD is 422', async t => {
  const crds = fx.registry.handler('apiextensions.orch.io', 'v1', 'customresourcedefinitions')!
  const bad = crd() as any
  bad.metadata.name = 'wrong.name'
  t.equal(await code(crds.create(ctx(), '', body(bad))), 422)
})

t.test('every served version of a CRD reads the same objects with its own apiVersion', async t => {
  const crds = fx.registry.handler('apiextensions.orch.io', 'v1', 'customresourcedefinitions')!
  const two = crd() as any
  const v1 = two.spec.versions[0]
  two.spec.versions = [{ ...structuredClone(v1), name: 'v1beta1', storage: false }, v1]
  await crds.create(ctx(), '', body(two))
  await eventually(() => fx.registry.handler('example.com', 'v1beta1', 'widgets') !== undefined && fx.registry.handler('example.com', 'v1', 'widgets') !== undefined)
  const beta = fx.registry.handler('example.com', 'v1beta1', 'widgets')!
  const ga = fx.registry.handler('example.com', 'v1', 'widgets')!
  const made = await beta.create(ctx(), 'default', body({ apiVersion: 'example.com/v1beta1', kind: 'Widget', metadata: { name: 'mv' }, spec: { replicas: 1 } }))
  t.equal(made.object.apiVersion, 'example.com/v1beta1')
  t.equal(JSON.parse(made.bytes.toString()).apiVersion, 'example.com/v1beta1')
  const stored = await fx.store.get('/example.com/widgets/default/mv')
  t.equal(JSON.parse(stored!.value.toString()).apiVersion, 'example.com/v1', 'stored at the storage version')
  t.equal(JSON.parse((await ga.get(ctx(), 'default', 'mv', {}) as any).bytes.toString()).apiVersion, 'example.com/v1')
  t.equal(JSON.parse((await beta.list(ctx(), 'default', {})).items[0].toString()).apiVersion, 'example.com/v1beta1')
})

t.test('the CRD controller lists and watches again after its watch fails, and serves what was created meanwhile', async t => {
  await fx.close()
  const tap = new StoreTap()
  fx = await openFixture({ tap })
  const prefix = '/apiextensions.orch.io/customresourcedefinitions/'
  t.equal(tap.count(prefix), 1)
  tap.failing.set(prefix, 1)
  tap.fail(prefix)
  const crds = fx.registry.handler('apiextensions.orch.io', 'v1', 'customresourcedefinitions')!
  await crds.create(ctx(), '', body(crd()))
  await eventually(() => tap.count(prefix) === 2)
  t.equal(tap.lists.get(prefix), 3, 'the first list, a refused one, then the one the new watch started from')
  await eventually(() => fx.registry.handler('example.com', 'v1', 'widgets') !== undefined)
  const widgets = fx.registry.handler('example.com', 'v1', 'widgets')!
  t.equal(await code(widgets.create(ctx(), 'default', body({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'a' }, spec: { replicas: 1 } }))), 200)
})
