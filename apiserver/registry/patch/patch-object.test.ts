import t from 'tap'
import { body, ctx, openFixture } from '../testing.js'
import { applyMergePatch } from './merge-patch.js'
import type { Json } from './json-pointer.js'

const merge = (patch: Json) => (cur: Record<string, unknown>) => applyMergePatch(cur as Json, patch) as Record<string, unknown>

t.test('concurrent patches all land: a conflict re-reads and re-applies the patch', async t => {
  const fx = await openFixture()
  t.teardown(() => fx.close())
  const cms = fx.registry.handler('', 'v1', 'configmaps')!
  await cms.create(ctx(), 'default', body({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' } }))
  const n = 8
  await Promise.all(Array.from({ length: n }, async (_, i) =>
    await cms.patch(ctx(), 'default', 'a', merge({ metadata: { labels: { [`l${i}`]: String(i) } } }))))
  const got = await cms.get(ctx(), 'default', 'a', {})
  const labels = ((got as unknown as { object: { metadata: { labels: Record<string, string> } } }).object.metadata.labels)
  t.equal(Object.keys(labels).length, n)
})

t.test('the patch sees the current object with its resourceVersion, and a stale one is 409 without retry', async t => {
  const fx = await openFixture()
  t.teardown(() => fx.close())
  const cms = fx.registry.handler('', 'v1', 'configmaps')!
  const created = await cms.create(ctx(), 'default', body({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' }, data: { k: 'v' } }))
  const rv = (created.object.metadata as { resourceVersion: string }).resourceVersion
  let calls = 0
  const seen: string[] = []
  await cms.patch(ctx(), 'default', 'a', cur => { calls++; seen.push((cur.metadata as { resourceVersion: string }).resourceVersion); return { ...cur, data: { k: 'w' } } })
  t.same(seen, [rv])
  calls = 0
  await t.rejects(cms.patch(ctx(), 'default', 'a', merge({ metadata: { resourceVersion: rv }, data: { k: 'x' } })), { code: 409 })
  await t.rejects(cms.patch(ctx(), 'default', 'a', cur => { calls++; return { ...cur, metadata: { ...(cur.metadata as object), resourceVersion: rv } } }), { code: 409 })
  t.equal(calls, 1)
  await t.rejects(cms.patch(ctx(), 'default', 'gone', merge({})), { code: 404 })
})

t.test('patching /status of a kind without a status subresource is 404', async t => {
  const fx = await openFixture()
  t.teardown(() => fx.close())
  const cms = fx.registry.handler('', 'v1', 'configmaps')!
  await cms.create(ctx(), 'default', body({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' } }))
  await t.rejects(cms.patch(ctx(), 'default', 'a', merge({}), 'status'), { code: 404 })
})
