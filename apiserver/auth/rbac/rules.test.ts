import t from 'tap'
import { nonResourceAttributes, resourceAttributes } from '../types.js'
import { compactRules, compactString, ruleAllows, uncoveredRules, type PolicyRule } from './rules.js'

const alice = { username: 'alice', groups: [] }

t.test('a resource rule allows by verb, group, resource, subresource and name, with wildcards', async t => {
  const cases: Array<[string, PolicyRule, Parameters<typeof resourceAttributes>[1], boolean]> = [
    ['exact', { verbs: ['get'], apiGroups: [''], resources: ['pods'] }, { verb: 'get', resource: 'pods' }, true],
    ['other verb', { verbs: ['get'], apiGroups: [''], resources: ['pods'] }, { verb: 'list', resource: 'pods' }, false],
    ['verb *', { verbs: ['*'], apiGroups: [''], resources: ['pods'] }, { verb: 'delete', resource: 'pods' }, true],
    ['other group', { verbs: ['get'], apiGroups: ['apps'], resources: ['pods'] }, { verb: 'get', resource: 'pods' }, false],
    ['group *', { verbs: ['get'], apiGroups: ['*'], resources: ['deployments'] }, { verb: 'get', apiGroup: 'apps', resource: 'deployments' }, true],
    ['resource *', { verbs: ['get'], apiGroups: [''], resources: ['*'] }, { verb: 'get', resource: 'pods', subresource: 'log' }, true],
    ['pods does not grant pods/log', { verbs: ['get'], apiGroups: [''], resources: ['pods'] }, { verb: 'get', resource: 'pods', subresource: 'log' }, false],
    ['pods/log', { verbs: ['get'], apiGroups: [''], resources: ['pods/log'] }, { verb: 'get', resource: 'pods', subresource: 'log' }, true],
    ['*/scale', { verbs: ['get'], apiGroups: ['*'], resources: ['*/scale'] }, { verb: 'get', apiGroup: 'apps', resource: 'deployments', subresource: 'scale' }, true],
    ['*/scale not status', { verbs: ['get'], apiGroups: ['*'], resources: ['*/scale'] }, { verb: 'get', apiGroup: 'apps', resource: 'deployments', subresource: 'status' }, false],
    ['resourceNames match', { verbs: ['get'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['a'] }, { verb: 'get', resource: 'configmaps', name: 'a' }, true],
    ['resourceNames other', { verbs: ['get'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['a'] }, { verb: 'get', resource: 'configmaps', name: 'b' }, false],
    ['resourceNames list', { verbs: ['list'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['a'] }, { verb: 'list', resource: 'configmaps' }, false],
    ['k8s.io rule, orch.io request', { verbs: ['get'], apiGroups: ['coordination.k8s.io'], resources: ['leases'] }, { verb: 'get', apiGroup: 'coordination.orch.io', resource: 'leases' }, true],
    ['orch.io rule, k8s.io request', { verbs: ['get'], apiGroups: ['rbac.authorization.orch.io'], resources: ['roles'] }, { verb: 'get', apiGroup: 'rbac.authorization.k8s.io', resource: 'roles' }, true]
  ]
  for (const [name, rule, attrs, want] of cases) t.equal(ruleAllows(resourceAttributes(alice, attrs), rule), want, name)
})

t.test('a non-resource rule matches paths exactly or by a trailing *', async t => {
  const rule: PolicyRule = { verbs: ['get'], nonResourceURLs: ['/healthz', '/apis/*'] }
  t.ok(ruleAllows(nonResourceAttributes(alice, 'get', '/healthz'), rule))
  t.notOk(ruleAllows(nonResourceAttributes(alice, 'get', '/healthz/etcd'), rule))
  t.ok(ruleAllows(nonResourceAttributes(alice, 'get', '/apis/apps/v1'), rule))
  t.notOk(ruleAllows(nonResourceAttributes(alice, 'post', '/apis/apps/v1'), rule))
  t.ok(ruleAllows(nonResourceAttributes(alice, 'get', '/anything'), { verbs: ['*'], nonResourceURLs: ['*'] }))
  t.notOk(ruleAllows(resourceAttributes(alice, { verb: 'get', resource: 'pods' }), rule), 'non-resource rules never allow resource requests')
})

t.test('covering: owners grant what they hold, names narrow, wildcards widen', async t => {
  const owner: PolicyRule[] = [
    { verbs: ['get', 'list'], apiGroups: [''], resources: ['pods', 'pods/log'] },
    { verbs: ['get'], apiGroups: [''], resources: ['secrets'], resourceNames: ['s1'] },
    { verbs: ['get'], nonResourceURLs: ['/logs/*'] }
  ]
  t.same(uncoveredRules(owner, [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }]), [])
  t.same(uncoveredRules(owner, [{ verbs: ['get'], apiGroups: [''], resources: ['secrets'], resourceNames: ['s1'] }]), [])
  t.equal(uncoveredRules(owner, [{ verbs: ['get'], apiGroups: [''], resources: ['secrets'] }]).length, 1, 'all secrets are more than s1')
  t.same(uncoveredRules(owner, [{ verbs: ['get'], nonResourceURLs: ['/logs/kubelet'] }]), [])
  t.same(uncoveredRules(owner, [{ verbs: ['get', 'delete'], apiGroups: [''], resources: ['pods'] }]),
    [{ apiGroups: [''], resources: ['pods'], verbs: ['delete'], resourceNames: [] }])
  t.same(uncoveredRules([{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }], [{ verbs: ['get'], apiGroups: ['apps'], resources: ['deployments/scale'] }]), [])
  t.same(uncoveredRules([{ verbs: ['get'], apiGroups: ['*'], resources: ['*/scale'] }], [{ verbs: ['get'], apiGroups: ['apps'], resources: ['deployments/scale'] }]), [])
})

t.test('missing rules are compacted and printed as Kubernetes prints them', async t => {
  const missing = uncoveredRules([], [{ verbs: ['get', 'list'], apiGroups: ['', 'apps'], resources: ['pods'] }, { verbs: ['get'], nonResourceURLs: ['/x'] }])
  t.same(compactRules(missing).map(compactString), [
    '{APIGroups:[""], Resources:["pods"], Verbs:["get" "list"]}',
    '{APIGroups:["apps"], Resources:["pods"], Verbs:["get" "list"]}',
    '{NonResourceURLs:["/x"], Verbs:["get"]}'
  ])
  t.equal(compactString({ verbs: ['get'], apiGroups: [''], resources: ['secrets'], resourceNames: ['a'] }), '{APIGroups:[""], Resources:["secrets"], ResourceNames:["a"], Verbs:["get"]}')
})
