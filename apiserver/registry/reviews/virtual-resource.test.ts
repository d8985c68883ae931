// Create-only resources in the registry: how they are served, and the decode checks every review gets.
import t from 'tap'
import { body, ctx, openFixture } from '../testing.js'

t.test('reviews are served with only the create verb, under both group names, with no store behind them', async t => {
  const fx = await openFixture()
  t.teardown(() => fx.close())
  for (const group of ['authentication.orch.io', 'authentication.k8s.io']) {
    const def = fx.registry.definitions().find(d => d.group === group && d.version === 'v1' && d.plural === 'tokenreviews')
    t.ok(def, group)
    t.same(def?.verbs, ['create'])
    t.equal(def?.virtual, true)
    t.equal(fx.registry.handler(group, 'v1', 'tokenreviews'), undefined, 'no get, list or watch')
    t.equal(fx.registry.store(group, 'v1', 'tokenreviews'), undefined, 'nothing stored')
  }
})

t.test('a review body is checked as a decoder checks it', async t => {
  const fx = await openFixture()
  t.teardown(() => fx.close())
  const creater = fx.registry.creater('authentication.k8s.io', 'v1', 'selfsubjectreviews')!
  const post = async (object: Record<string, unknown>, c = ctx('Strict')): Promise<Record<string, any>> => (await creater.create(c, '', body(object))).object
  await t.rejects(post({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview' }),
    { code: 400, message: 'the kind in the data (TokenReview) does not match the expected kind (SelfSubjectReview)' })
  await t.rejects(post({ apiVersion: 'authentication.orch.io/v1', kind: 'SelfSubjectReview' }),
    { code: 400, message: 'the API version in the data (authentication.orch.io/v1) does not match the expected API version (authentication.k8s.io/v1)' })
  await t.rejects(post({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview', color: 'blue' }),
    { code: 400, message: 'SelfSubjectReview in version "v1" cannot be handled as a SelfSubjectReview: strict decoding error: unknown field "color"' })
  const warn = ctx('Warn')
  const r = await post({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview', color: 'blue' }, warn)
  t.equal(r.kind, 'SelfSubjectReview')
  t.equal(r.color, undefined)
  t.same(warn.warnings, ['unknown field "color"'])
  const dry = await post({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }, ctx('Strict', true))
  t.equal(dry.status.userInfo.username, 'tester', 'a dry run answers the same, there being nothing to write')
})
