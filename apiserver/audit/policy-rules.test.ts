// Audit policy matching as Kubernetes' policy checker does it: selectors, wildcards, first match wins.
import t from 'tap'
import { nonResourceAttributes, resourceAttributes, type Attributes, type UserInfo } from '../auth/types.js'
import { parsePolicy, type PolicyRule } from './policy.js'
import { PolicyEvaluator, ruleMatches } from './policy-rules.js'

const alice: UserInfo = { username: 'alice', groups: ['devs', 'system:authenticated'] }
const rule = (r: Partial<PolicyRule>): PolicyRule => ({ level: 'Metadata', users: [], userGroups: [], verbs: [], resources: [], namespaces: [], nonResourceURLs: [], omitStages: [], ...r })
const res = (a: Partial<Omit<Attributes, 'user'>> & { verb: string }, user = alice): Attributes => resourceAttributes(user, a)
const pods = { verb: 'get', resource: 'pods', namespace: 'ns', name: 'p1', apiVersion: 'v1' }

const cases: Array<[string, Partial<PolicyRule>, Attributes, boolean]> = [
  ['an empty rule matches anything', {}, res(pods), true],
  ['an empty rule matches non-resource requests', {}, nonResourceAttributes(alice, 'get', '/healthz'), true],
  ['users', { users: ['alice'] }, res(pods), true],
  ['other users', { users: ['bob'] }, res(pods), false],
  ['userGroups', { userGroups: ['devs'] }, res(pods), true],
  ['other groups', { userGroups: ['ops'] }, res(pods), false],
  ['verbs', { verbs: ['get', 'list'] }, res(pods), true],
  ['other verbs', { verbs: ['create'] }, res(pods), false],
  ['namespaces', { namespaces: ['ns'] }, res(pods), true],
  ['other namespaces', { namespaces: ['kube-system'] }, res(pods), false],
  ['"" namespace is cluster scope', { namespaces: [''] }, res({ verb: 'get', resource: 'nodes', name: 'n1' }), true],
  ['namespaces never match non-resource requests', { namespaces: ['ns'] }, nonResourceAttributes(alice, 'get', '/healthz'), false],
  ['group and resource', { resources: [{ group: '', resources: ['pods'], resourceNames: [] }] }, res(pods), true],
  ['another group', { resources: [{ group: 'apps', resources: ['pods'], resourceNames: [] }] }, res(pods), false],
  ['a group without resources matches all of it', { resources: [{ group: 'apps', resources: [], resourceNames: [] }] }, res({ verb: 'list', apiGroup: 'apps', resource: 'deployments' }), true],
  ['orch and k8s spellings of a group are one group', { resources: [{ group: 'rbac.authorization.k8s.io', resources: ['roles'], resourceNames: [] }] }, res({ verb: 'list', apiGroup: 'rbac.authorization.orch.io', resource: 'roles' }), true],
  ['and the other way', { resources: [{ group: 'rbac.authorization.orch.io', resources: ['roles'], resourceNames: [] }] }, res({ verb: 'list', apiGroup: 'rbac.authorization.k8s.io', resource: 'roles' }), true],
  ['a resource does not cover its subresources', { resources: [{ group: '', resources: ['pods'], resourceNames: [] }] }, res({ ...pods, subresource: 'log' }), false],
  ['pods/log', { resources: [{ group: '', resources: ['pods/log'], resourceNames: [] }] }, res({ ...pods, subresource: 'log' }), true],
  ['pods/log is not pods', { resources: [{ group: '', resources: ['pods/log'], resourceNames: [] }] }, res(pods), false],
  ['* covers subresources', { resources: [{ group: '', resources: ['*'], resourceNames: [] }] }, res({ ...pods, subresource: 'status' }), true],
  ['*/status', { resources: [{ group: '', resources: ['*/status'], resourceNames: [] }] }, res({ ...pods, subresource: 'status' }), true],
  ['*/status is not the resource itself', { resources: [{ group: '', resources: ['*/status'], resourceNames: [] }] }, res(pods), false],
  ['pods/*', { resources: [{ group: '', resources: ['pods/*'], resourceNames: [] }] }, res({ ...pods, subresource: 'exec' }), true],
  ['pods/* is not services/x', { resources: [{ group: '', resources: ['pods/*'], resourceNames: [] }] }, res({ ...pods, resource: 'services', subresource: 'proxy' }), false],
  ['resourceNames', { resources: [{ group: '', resources: ['pods'], resourceNames: ['p1'] }] }, res(pods), true],
  ['other names', { resources: [{ group: '', resources: ['pods'], resourceNames: ['p2'] }] }, res(pods), false],
  ['resources never match non-resource requests', { resources: [{ group: '', resources: ['*'], resourceNames: [] }] }, nonResourceAttributes(alice, 'get', '/api'), false],
  ['nonResourceURLs exact', { nonResourceURLs: ['/healthz'] }, nonResourceAttributes(alice, 'get', '/healthz'), true],
  ['nonResourceURLs exact only', { nonResourceURLs: ['/healthz'] }, nonResourceAttributes(alice, 'get', '/healthz/etcd'), false],
  ['nonResourceURLs trailing *', { nonResourceURLs: ['/healthz*'] }, nonResourceAttributes(alice, 'get', '/healthz/etcd'), true],
  ['nonResourceURLs /*', { nonResourceURLs: ['/*'] }, nonResourceAttributes(alice, 'get', '/version'), true],
  ['nonResourceURLs *', { nonResourceURLs: ['*'] }, nonResourceAttributes(alice, 'get', '/version'), true],
  ['nonResourceURLs never match resource requests', { nonResourceURLs: ['/*'] }, res(pods), false],
  ['every selector must match', { users: ['alice'], verbs: ['delete'] }, res(pods), false]
]

t.test('rule matching', async t => {
  for (const [what, r, attrs, want] of cases) t.equal(ruleMatches(rule(r), attrs), want, what)
})

t.test('the first matching rule wins; stages are the policy\'s plus the rule\'s; none matching is level None', async t => {
  const p = parsePolicy(`apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
omitManagedFields: true
rules:
- level: None
  users: [system:kube-proxy]
- level: RequestResponse
  resources: [{group: "", resources: [pods]}]
  omitStages: [ResponseStarted]
  omitManagedFields: false
- level: Metadata
  resources: [{group: "", resources: [pods, secrets]}]
`)
  const ev = new PolicyEvaluator(p)
  t.same(ev.evaluate(res(pods)), { level: 'RequestResponse', omitStages: ['RequestReceived', 'ResponseStarted'], omitManagedFields: false })
  t.same(ev.evaluate(res({ ...pods, resource: 'secrets' })), { level: 'Metadata', omitStages: ['RequestReceived'], omitManagedFields: true })
  t.same(ev.evaluate(res(pods, { username: 'system:kube-proxy', groups: [] })), { level: 'None', omitStages: ['RequestReceived'], omitManagedFields: true })
  t.equal(ev.evaluate(res({ verb: 'list', resource: 'nodes' })).level, 'None')
})
