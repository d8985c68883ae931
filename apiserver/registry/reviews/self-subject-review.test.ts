// SelfSubjectReview: the requesting user, in every served version, under both group names.
import t from 'tap'
import { body, ctx, openFixture } from '../testing.js'

t.test('a SelfSubjectReview answers the requesting user and the time of the review', async t => {
  let now = Date.parse('2026-01-02T03:04:05Z')
  const fx = await openFixture({ clock: { now: () => now } })
  t.teardown(() => fx.close())
  const user = { username: 'dave', uid: 'u-1', groups: ['team', 'system:authenticated'], extra: { scopes: ['a', 'b'] } }
  for (const [group, version] of [['authentication.orch.io', 'v1'], ['authentication.k8s.io', 'v1'], ['authentication.k8s.io', 'v1beta1'], ['authentication.orch.io', 'v1alpha1']]) {
    const creater = fx.registry.creater(group, version, 'selfsubjectreviews')
    t.ok(creater, `${group}/${version}`)
    const r = await creater!.create({ ...ctx(), user }, '', body({ apiVersion: `${group}/${version}`, kind: 'SelfSubjectReview' }))
    t.same(r.object, {
      apiVersion: `${group}/${version}`, kind: 'SelfSubjectReview', metadata: { creationTimestamp: new Date(now).toISOString().replace('.000Z', 'Z') },
      status: { userInfo: { username: 'dave', uid: 'u-1', groups: ['team', 'system:authenticated'], extra: { scopes: ['a', 'b'] } } }
    })
    now += 1000
  }
  const bare = await fx.registry.creater('authentication.orch.io', 'v1', 'selfsubjectreviews')!.create({ ...ctx(), user: { username: 'x', groups: [] } }, '', body({}))
  t.same(bare.object.status, { userInfo: { username: 'x', groups: [] } }, 'an empty body is a SelfSubjectReview; no uid, no extra')
})
