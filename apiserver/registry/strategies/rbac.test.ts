import t from 'tap'
import { body, openFixture } from '../testing.js'
import { internalContext } from '../internal-context.js'

const G = 'rbac.authorization.orch.io'
const admin = internalContext('test-admin')

t.test('roles and bindings are validated as Kubernetes validates them', async t => {
  const f = await openFixture()
  t.teardown(f.close)
  const h = (plural: string) => f.registry.handler(G, 'v1', plural)!
  const causes = async (p: Promise<unknown>): Promise<string[]> => {
    try { await p } catch (err) { return ((err as { details?: { causes?: Array<{ field: string, message: string }> } }).details?.causes ?? []).map(c => `${c.field}: ${c.message}`) }
    return ['accepted']
  }
  t.same(await causes(h('roles').create(admin, 'default', body({ metadata: { name: 'r' }, rules: [{ verbs: [], apiGroups: [], resources: ['pods'] }] }))), [
    'rules[0].verbs: Required value: verbs must contain at least one value',
    'rules[0].apiGroups: Required value: resource rules must supply at least one api group'
  ])
  t.same(await causes(h('roles').create(admin, 'default', body({ metadata: { name: 'r' }, rules: [{ verbs: ['get'], nonResourceURLs: ['/x'] }] }))),
    ['rules[0].nonResourceURLs: Invalid value: []string{"/x"}: namespaced rules cannot apply to non-resource URLs'])
  t.same(await causes(h('clusterroles').create(admin, '', body({ metadata: { name: 'c' }, rules: [{ verbs: ['get'], nonResourceURLs: ['/x'], resources: ['pods'] }] }))),
    ['rules[0].nonResourceURLs: Invalid value: []string{"/x"}: rules cannot apply to both regular resources and non-resource URLs'])
  t.same(await causes(h('clusterroles').create(admin, '', body({ metadata: { name: 'c' }, aggregationRule: { clusterRoleSelectors: [] } }))),
    ['aggregationRule.clusterRoleSelectors: Required value: at least one clusterRoleSelector required if aggregationRule is non-nil'])
  t.same(await causes(h('roles').create(admin, 'default', body({ metadata: { name: 'a/b' }, rules: [] }))), ["metadata.name: Invalid value: \"a/b\": may not contain '/'"])

  t.same(await causes(h('clusterrolebindings').create(admin, '', body({
    metadata: { name: 'b' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'x' },
    subjects: [{ kind: 'ServiceAccount', name: 'sa' }, { kind: 'Robot', name: 'r' }, { kind: 'User', name: 'u', apiGroup: 'v1' }]
  }))), [
    'roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"',
    'subjects[0].namespace: Required value',
    'subjects[1].kind: Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group"',
    'subjects[2].apiGroup: Unsupported value: "v1": supported values: "rbac.authorization.k8s.io"'
  ])
  const made = await h('rolebindings').create(admin, 'default', body({
    metadata: { name: 'b' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'x' },
    subjects: [{ kind: 'User', name: 'u' }, { kind: 'ServiceAccount', name: 'sa' }]
  }))
  t.same(made.object.subjects, [{ kind: 'User', name: 'u', apiGroup: 'rbac.authorization.k8s.io' }, { kind: 'ServiceAccount', name: 'sa', apiGroup: '' }],
    'subjects get their default apiGroup')
  t.same(await causes(h('rolebindings').patch(admin, 'default', 'b', cur => ({ ...cur, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'x' } }))),
    ['roleRef: Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"ClusterRole", Name:"x"}: cannot change roleRef'],
    'roleRef is immutable')
})
