import t from 'tap'
import { PolicyIndex, type Binding } from './policy-index.js'
import { ruleAllows } from './rules.js'
import { resourceAttributes, type UserInfo } from '../types.js'

const rb = (namespace: string, name: string, roleRef: Binding['roleRef'], subjects: Binding['subjects']): Binding =>
  ({ kind: 'RoleBinding', namespace, name, roleRef, subjects })
const crb = (name: string, role: string, subjects: Binding['subjects']): Binding =>
  ({ kind: 'ClusterRoleBinding', namespace: '', name, roleRef: { kind: 'ClusterRole', name: role }, subjects })

/** The reason the index would allow `verb resource` in `ns`, or undefined. */
function allowedBy (index: PolicyIndex, user: UserInfo, ns: string, verb: string, resource: string): string | undefined {
  let found: string | undefined
  index.visitRulesFor(user, ns, (source, rule) => {
    if (rule !== undefined && ruleAllows(resourceAttributes(user, { verb, resource, namespace: ns }), rule)) { found = source; return false }
    return true
  })
  return found
}

t.test('bindings are found by user, group and service account, and described as Kubernetes does', async t => {
  const index = new PolicyIndex()
  index.setClusterRole('reader', [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }])
  index.setRole('dev', 'lister', [{ verbs: ['list'], apiGroups: [''], resources: ['pods'] }])
  index.setBinding(crb('readers', 'reader', [{ kind: 'Group', name: 'team' }]))
  index.setBinding(rb('dev', 'listers', { kind: 'Role', name: 'lister' }, [{ kind: 'User', name: 'alice' }, { kind: 'ServiceAccount', name: 'bot' }]))
  const alice = { username: 'alice', groups: ['team'] }
  t.equal(allowedBy(index, alice, 'dev', 'get', 'pods'), 'ClusterRoleBinding "readers" of ClusterRole "reader" to Group "team"')
  t.equal(allowedBy(index, alice, 'dev', 'list', 'pods'), 'RoleBinding "listers/dev" of Role "lister" to User "alice"')
  t.equal(allowedBy(index, alice, 'prod', 'list', 'pods'), undefined, 'a RoleBinding grants only in its namespace')
  t.equal(allowedBy(index, alice, '', 'list', 'pods'), undefined, 'nor at the cluster scope')
  const bot = { username: 'system:serviceaccount:dev:bot', groups: ['system:serviceaccounts', 'system:serviceaccounts:dev'] }
  t.equal(allowedBy(index, bot, 'dev', 'list', 'pods'), 'RoleBinding "listers/dev" of Role "lister" to ServiceAccount "bot/dev"',
    'a subject without namespace is the service account of the binding\'s namespace')
  t.equal(allowedBy(index, { username: 'bob', groups: [] }, 'dev', 'get', 'pods'), undefined)
  index.setBinding(crb('all-dev-accounts', 'reader', [{ kind: 'Group', name: 'system:serviceaccounts:dev' }]))
  t.equal(allowedBy(index, bot, 'prod', 'get', 'pods'), 'ClusterRoleBinding "all-dev-accounts" of ClusterRole "reader" to Group "system:serviceaccounts:dev"',
    'service accounts are in their namespace\'s group')
  index.setBinding(rb('dev', 'other-ns-account', { kind: 'Role', name: 'lister' }, [{ kind: 'ServiceAccount', name: 'bot', namespace: 'ci' }]))
  t.equal(allowedBy(index, { username: 'system:serviceaccount:ci:bot', groups: [] }, 'dev', 'list', 'pods'),
    'RoleBinding "other-ns-account/dev" of Role "lister" to ServiceAccount "bot/ci"', 'a subject may name an account of another namespace')
})

t.test('removing or replacing a binding drops its subjects from the index', async t => {
  const index = new PolicyIndex()
  index.setClusterRole('reader', [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }])
  index.setBinding(crb('b', 'reader', [{ kind: 'User', name: 'alice' }]))
  const alice = { username: 'alice', groups: [] }
  t.ok(allowedBy(index, alice, '', 'get', 'pods'))
  index.setBinding(crb('b', 'reader', [{ kind: 'User', name: 'carol' }]))
  t.equal(allowedBy(index, alice, '', 'get', 'pods'), undefined)
  t.ok(allowedBy(index, { username: 'carol', groups: [] }, '', 'get', 'pods'))
  index.deleteBinding('ClusterRoleBinding', '', 'b')
  t.same(index.size(), { clusterRoles: 1, roles: 0, bindings: 0, subjects: 0 })
})

t.test('a binding to a missing role reports the role as not found', async t => {
  const index = new PolicyIndex()
  index.setBinding(rb('dev', 'b', { kind: 'Role', name: 'gone' }, [{ kind: 'User', name: 'alice' }]))
  index.setBinding(crb('c', 'gone-too', [{ kind: 'User', name: 'alice' }]))
  const errors: string[] = []
  index.visitRulesFor({ username: 'alice', groups: [] }, 'dev', (_, __, err) => { if (err !== undefined) errors.push(err); return true })
  t.same(errors, ['clusterrole.rbac.authorization.k8s.io "gone-too" not found', 'role.rbac.authorization.k8s.io "gone" not found'])
})
