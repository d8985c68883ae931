// SelfSubjectRulesReview: the resolver's rules for the requesting user, in the shape of authorization/v1.
import t from 'tap'
import { buildRuleResolver } from '../../auth/rule-resolvers.js'
import type { RuleResolver } from '../../auth/types.js'
import { body, ctx, openFixture } from '../testing.js'
import type { RequestContext } from '../types.js'

const review = (spec: Record<string, unknown>): Record<string, unknown> => ({ apiVersion: 'authorization.orch.io/v1', kind: 'SelfSubjectRulesReview', spec })

/** RBAC's place in the chain: "erin" may get and list configmaps named "settings" in "team", and read /metrics. */
const rbac: RuleResolver = {
  async rulesFor (user, namespace) {
    if (user.username === 'broken') throw new Error('roles unavailable')
    if (user.username !== 'erin' || namespace !== 'team') return { resourceRules: [], nonResourceRules: [], incomplete: user.username === 'partial', evaluationError: user.username === 'partial' ? 'one binding unreadable' : undefined }
    return {
      resourceRules: [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['settings'] }],
      nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/metrics'] }],
      incomplete: false
    }
  }
}

t.test('a SelfSubjectRulesReview lists the rules of the requesting user in the namespace it names', async t => {
  const fx = await openFixture({ ruleResolver: buildRuleResolver(['RBAC'], () => rbac) })
  t.teardown(() => fx.close())
  const post = async (c: RequestContext, spec: Record<string, unknown>): Promise<Record<string, any>> =>
    (await fx.registry.creater('authorization.orch.io', 'v1', 'selfsubjectrulesreviews')!.create(c, '', body(review(spec)))).object
  const erin = { ...ctx(), user: { username: 'erin', groups: [] } }
  t.same((await post(erin, { namespace: 'team' })).status, {
    resourceRules: [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['settings'] }],
    nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/metrics'] }],
    incomplete: false
  })
  t.same((await post(erin, { namespace: 'elsewhere' })).status, { resourceRules: [], nonResourceRules: [], incomplete: false })
  const admin = { ...ctx(), user: { username: 'root', groups: ['system:masters'] } }
  t.same((await post(admin, { namespace: 'team' })).status.resourceRules, [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
    'system:masters may do anything')
  t.same((await post({ ...ctx(), user: { username: 'partial', groups: [] } }, { namespace: 'team' })).status,
    { resourceRules: [], nonResourceRules: [], incomplete: true, evaluationError: 'one binding unreadable' })
  t.same((await post({ ...ctx(), user: { username: 'broken', groups: [] } }, { namespace: 'team' })).status,
    { resourceRules: [], nonResourceRules: [], incomplete: true, evaluationError: 'roles unavailable' })
  await t.rejects(post(erin, {}), { code: 400, message: 'no namespace on request' })
})

t.test('the access and rules reviews are not served without their authorizer and resolver', async t => {
  const fx = await openFixture()
  t.teardown(() => fx.close())
  for (const plural of ['subjectaccessreviews', 'selfsubjectaccessreviews', 'localsubjectaccessreviews', 'selfsubjectrulesreviews']) {
    t.equal(fx.registry.creater('authorization.orch.io', 'v1', plural), undefined, plural)
    t.notOk(fx.registry.definitions().some(d => d.plural === plural), `${plural} not in discovery`)
  }
  t.ok(fx.registry.creater('authentication.orch.io', 'v1', 'tokenreviews'), 'TokenReview is always served')
})
