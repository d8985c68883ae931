// Server-side apply of custom resources: unstructured objects (every key owned as itself), list markers honoured,
// and entries recording the version each manager applied at in a two-version CRD.
import t from 'tap'
import { body, ctx, eventually, openFixture } from '../testing.js'
import { isStatusError } from '../../errors/status-error.js'

const version = (name: string, storage: boolean): Record<string, unknown> => ({
  name,
  served: true,
  storage,
  schema: {
    openAPIV3Schema: {
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          properties: {
            size: { type: 'integer' },
            tags: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' },
            ports: { type: 'array', items: { type: 'object', properties: { port: { type: 'integer' }, name: { type: 'string' } } } }
          }
        }
      }
    }
  }
})

t.test('custom resources: granular objects, list markers, atomic lists, one entry version per manager', async t => {
  const fx = await openFixture()
  t.teardown(() => fx.close())
  const crds = fx.registry.handler('apiextensions.orch.io', 'v1', 'customresourcedefinitions')!
  await crds.create(ctx(), '', body({
    apiVersion: 'apiextensions.orch.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'widgets.example.com' },
    spec: { group: 'example.com', scope: 'Namespaced', names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' }, versions: [version('v1', true), version('v2', false)] }
  }))
  await eventually(() => fx.registry.handler('example.com', 'v2', 'widgets') !== undefined)
  const v1 = fx.registry.handler('example.com', 'v1', 'widgets')!
  const v2 = fx.registry.handler('example.com', 'v2', 'widgets')!
  const widget = (apiVersion: string, spec: Record<string, unknown>): Record<string, unknown> =>
    ({ apiVersion, kind: 'Widget', metadata: { name: 'w', namespace: 'default' }, spec })
  const a = await v1.apply({ ...ctx(), fieldManager: 'alice' }, 'default', 'w', widget('example.com/v1', { size: 1, tags: ['x'], ports: [{ port: 80 }] }), false)
  const entry = (a.object.metadata as any).managedFields[0]
  t.same(entry.fieldsV1, { 'f:spec': { '.': {}, 'f:ports': {}, 'f:size': {}, 'f:tags': { '.': {}, 'v:"x"': {} } } },
    'objects granular with "." for owned keys; a set per element; an unmarked list atomic')
  t.equal(entry.apiVersion, 'example.com/v1')
  const b = await v2.apply({ ...ctx(), fieldManager: 'bob' }, 'default', 'w', widget('example.com/v2', { tags: ['y'] }), false)
  t.same((b.object.spec as any).tags, ['x', 'y'], 'set elements of two managers merge')
  const bob = (b.object.metadata as any).managedFields.find((e: any) => e.manager === 'bob')
  t.equal(bob.apiVersion, 'example.com/v2', 'the entry records the version bob applied at')
  try {
    await v2.apply({ ...ctx(), fieldManager: 'bob' }, 'default', 'w', widget('example.com/v2', { size: 2, tags: ['y'] }), false)
    t.fail('size belongs to alice')
  } catch (err) {
    t.ok(isStatusError(err) && err.code === 409 && err.message === 'Apply failed with 1 conflict: conflict with "alice": .spec.size')
  }
})
