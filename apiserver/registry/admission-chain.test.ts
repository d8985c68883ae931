import t from 'tap'
import { body, ctx, openFixture } from './testing.js'
import type { WriteAttributes } from './admission.js'

t.test('mutating admission runs before validation (which sees its changes), validating admission after', async t => {
  const order: string[] = []
  const fx = await openFixture({
    mutatingAdmission: [{
      async admit (a: WriteAttributes) {
        if (a.definition.kind !== 'ConfigMap') return
        order.push(`mutate ${a.operation}`)
        const meta = a.object.metadata as { labels?: Record<string, string> }
        meta.labels = { ...meta.labels, mutated: 'yes' }
        if (meta.labels.break === 'yes') meta.labels['not a valid key!'] = 'x'
      }
    }],
    admission: [{
      async admit (a: WriteAttributes) {
        if (a.definition.kind !== 'ConfigMap') return
        order.push(`validate ${a.operation} ${(a.object.metadata as { labels?: Record<string, string> }).labels?.mutated ?? ''}`)
      }
    }]
  })
  t.teardown(() => fx.close())
  const cms = fx.registry.handler('', 'v1', 'configmaps')!
  const made = await cms.create(ctx(), 'default', body({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' } }))
  t.same((made.object.metadata as { labels: unknown }).labels, { mutated: 'yes' }, 'stored as mutated')
  await cms.update(ctx(), 'default', 'a', body({ ...made.object, data: { k: 'v' } }))
  t.same(order, ['mutate CREATE', 'validate CREATE yes', 'mutate UPDATE', 'validate UPDATE yes'])
  const bad = await cms.create(ctx(), 'default', body({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'b', labels: { break: 'yes' } } })).catch(e => e)
  t.equal(bad.code, 422, 'what a mutating plugin breaks is refused by validation')
  t.match(bad.message, /metadata\.labels/)
})

t.test('a DELETE passes mutating admission (which may refuse; its changes are not stored), then validating admission', async t => {
  const order: string[] = []
  const fx = await openFixture({
    mutatingAdmission: [{
      async admit (a: WriteAttributes) {
        if (a.definition.kind !== 'ConfigMap') return
        order.push(`mutate ${a.operation}`)
        const meta = a.object.metadata as { name: string, labels?: Record<string, string>, finalizers?: string[] }
        if (a.operation === 'DELETE' && meta.name === 'kept') throw Object.assign(new Error('refused by a mutating plugin'), { code: 403 })
        if (a.operation === 'DELETE') meta.finalizers = ['mutated.example.com/never']
      }
    }],
    admission: [{ async admit (a: WriteAttributes) { if (a.definition.kind === 'ConfigMap') order.push(`validate ${a.operation}`) } }]
  })
  t.teardown(() => fx.close())
  const cms = fx.registry.handler('', 'v1', 'configmaps')!
  await cms.create(ctx(), 'default', body({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'gone' } }))
  await cms.create(ctx(), 'default', body({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'kept' } }))
  order.length = 0
  const deleted = await cms.delete(ctx(), 'default', 'gone', {})
  t.equal(deleted.deleted, true, 'deleted at once: the finalizer the plugin added to its copy was not stored')
  t.same(order, ['mutate DELETE', 'validate DELETE'])
  await t.rejects(cms.delete(ctx(), 'default', 'kept', {}), { message: 'refused by a mutating plugin' })
  t.ok(await cms.get(ctx(), 'default', 'kept', {}), 'a refused delete leaves the object')
})
