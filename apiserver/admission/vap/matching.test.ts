import t from 'tap'
import type { ResourceDefinition } from '../../schema/types.js'
import { matches, ruleMatches, type MatchRequest } from './matching.js'

const def = (group: string, plural: string, namespaced = true): ResourceDefinition =>
  ({ group, version: 'v1', plural, namespaced, kind: 'K' }) as unknown as ResourceDefinition
const req = (d: ResourceDefinition, o: Partial<MatchRequest> = {}): MatchRequest =>
  ({ definition: d, operation: 'CREATE', subresource: '', name: 'x', labels: [{}], namespaceLabels: {}, ...o })
const rule = { apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['deployments'] }

t.test('a rule names the group as orch spells it, as Kubernetes does, or bare', async t => {
  t.ok(ruleMatches(rule, req(def('apps', 'deployments')), false))
  t.ok(ruleMatches({ ...rule, apiGroups: ['coordination.k8s.io'], resources: ['leases'] }, req(def('coordination.orch.io', 'leases')), false))
  t.ok(ruleMatches({ ...rule, apiGroups: ['coordination.orch.io'], resources: ['leases'] }, req(def('coordination.orch.io', 'leases')), false))
  t.notOk(ruleMatches(rule, req(def('', 'pods')), false))
})

t.test('operations, versions, subresources, scope and resourceNames narrow a rule', async t => {
  const d = def('apps', 'deployments')
  t.notOk(ruleMatches(rule, req(d, { operation: 'DELETE' }), false))
  t.notOk(ruleMatches({ ...rule, apiVersions: ['v2'] }, req(d), false), 'Exact needs the version')
  t.ok(ruleMatches({ ...rule, apiVersions: ['v2'] }, req(d), true), 'Equivalent does not')
  t.notOk(ruleMatches(rule, req(d, { subresource: 'status' }), false), 'a resource does not select its subresources')
  t.ok(ruleMatches({ ...rule, resources: ['deployments/*'] }, req(d, { subresource: 'status' }), false))
  t.ok(ruleMatches({ ...rule, resources: ['*/status'] }, req(d, { subresource: 'status' }), false))
  t.notOk(ruleMatches({ ...rule, resources: ['*'] }, req(d, { subresource: 'scale' }), false))
  t.notOk(ruleMatches({ ...rule, scope: 'Cluster' }, req(d), false))
  t.ok(ruleMatches({ ...rule, scope: 'Namespaced' }, req(d), false))
  t.notOk(ruleMatches({ ...rule, resourceNames: ['other'] }, req(d), false))
})

t.test('selectors and exclusions', async t => {
  const d = def('apps', 'deployments')
  const m = { resourceRules: [rule], namespaceSelector: { matchLabels: { env: 'prod' } }, objectSelector: { matchExpressions: [{ key: 'skip', operator: 'DoesNotExist' }] } }
  t.ok(matches(m, req(d, { namespaceLabels: { env: 'prod' } }), true))
  t.notOk(matches(m, req(d, { namespaceLabels: { env: 'dev' } }), true))
  t.notOk(matches(m, req(d, { namespaceLabels: { env: 'prod' }, labels: [{ skip: 'yes' }] }), true))
  t.ok(matches(m, req(d, { namespaceLabels: { env: 'prod' }, labels: [{ skip: 'yes' }, {}] }), true), 'the old object matching is enough')
  t.ok(matches(m, req(d, { namespaceLabels: { env: 'dev' } }), true, true), 'rules only: selectors are not looked at')
  t.notOk(matches({ ...m, excludeResourceRules: [rule] }, req(d, { namespaceLabels: { env: 'prod' } }), true))
  t.notOk(matches(undefined, req(d), true), 'a policy without matchConstraints matches nothing')
  t.ok(matches(undefined, req(d), false), 'a binding without matchResources narrows nothing')
})
