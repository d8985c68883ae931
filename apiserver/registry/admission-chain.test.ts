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
