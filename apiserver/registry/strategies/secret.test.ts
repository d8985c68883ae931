import t from 'tap'
import { body, ctx, openFixture } from '../testing.js'

t.test('the stringData of a Secret is merged into data as base64 and never stored', async t => {
  const fx = await openFixture()
  t.teardown(() => fx.close())
  const secrets = fx.registry.handler('', 'v1', 'secrets')!
  const created = await secrets.create(ctx(), 'default', body({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, data: { a: Buffer.from('one').toString('base64') }, stringData: { b: 'two', a: 'override' } }))
  t.same(created.object.data, { a: Buffer.from('override').toString('base64'), b: Buffer.from('two').toString('base64') })
  t.notOk('stringData' in created.object)
  t.equal(created.object.type, 'Opaque')
  const updated = await secrets.update(ctx(), 'default', 's', body({ ...created.object, stringData: { c: 'three' } }))
  t.equal((updated.object.data as Record<string, string>).c, Buffer.from('three').toString('base64'))
  t.notOk('stringData' in updated.object)
})
