// The rules of each authorization mode, joined in chain order as Kubernetes' union rule resolver joins them.
import t from 'tap'
import { allowAllRules, buildRuleResolver, denyAllRules, unionRuleResolver } from './rule-resolvers.js'
import type { RuleResolver } from './types.js'

const dev = { username: 'dev', groups: ['system:authenticated'] }
const root = { username: 'root', groups: ['system:masters'] }

t.test('AlwaysAllow grants every verb on everything, AlwaysDeny nothing, both completely', async t => {
  t.same(await allowAllRules.rulesFor(dev, 'x'), {
    resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], resourceNames: [] }], nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }], incomplete: false
  })
  t.same(await denyAllRules.rulesFor(dev, 'x'), { resourceRules: [], nonResourceRules: [], incomplete: false })
})

t.test('the modes are joined behind system:masters, with incompleteness and errors kept', async t => {
  const failing: RuleResolver = { rulesFor: async () => { throw new Error('roles unavailable') } }
  const partial: RuleResolver = { rulesFor: () => ({ resourceRules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'], resourceNames: [] }], nonResourceRules: [], incomplete: true, evaluationError: 'one binding unreadable' }) }
  const denyThenRbac = buildRuleResolver(['AlwaysDeny', 'RBAC'], () => partial)
  t.same(await denyThenRbac.rulesFor(dev, 'x'), {
    resourceRules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'], resourceNames: [] }], nonResourceRules: [], incomplete: true, evaluationError: 'one binding unreadable'
  })
  t.equal((await denyThenRbac.rulesFor(root, 'x')).resourceRules[0].verbs[0], '*', 'system:masters first')
  const both = unionRuleResolver([partial, failing])
  t.same(await both.rulesFor(dev, 'x'), {
    resourceRules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'], resourceNames: [] }], nonResourceRules: [], incomplete: true,
    evaluationError: '[one binding unreadable, roles unavailable]'
  })
})
