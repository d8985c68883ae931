import t from 'tap'
import type { Test } from 'tap'
import { body, eventually, openFixture, silentLogger, type Fixture } from '../../registry/testing.js'
import { internalContext } from '../../registry/internal-context.js'
import { nonResourceAttributes, resourceAttributes } from '../types.js'
import { createRbacAuthorization, type RbacAuthorization } from './rbac-authorization.js'
import type { ResourceHandler } from '../../registry/types.js'

const G = 'rbac.authorization.orch.io'
const admin = internalContext('test-admin')
const rvOf = (o: Record<string, unknown>): string => String((o.metadata as { resourceVersion?: string }).resourceVersion)

async function setup (t: Test): Promise<{ f: Fixture, rbac: RbacAuthorization, h: (plural: string) => ResourceHandler }> {
  const f = await openFixture()
  const rbac = createRbacAuthorization({ registry: f.registry, logger: silentLogger })
  t.teardown(async () => { rbac.stop(); await f.close() })
  await rbac.ready()
  const h = (plural: string): ResourceHandler => f.registry.handler(G, 'v1', plural)!
  return { f, rbac, h }
}

t.test('a user has no opinion until a RoleBinding grants, then only in its namespace', async t => {
  const { rbac, h } = await setup(t)
  const alice = { username: 'alice', groups: ['system:authenticated'] }
  const listPods = (namespace: string) => resourceAttributes(alice, { verb: 'list', resource: 'pods', namespace })
  t.same(await rbac.authorizer.authorize(listPods('default')), { decision: 'noOpinion', reason: '' })
  await h('roles').create(admin, 'default', body({ metadata: { name: 'pod-reader' }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }] }))
  const made = await h('rolebindings').create(admin, 'default', body({
    metadata: { name: 'read-pods' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'pod-reader' },
    subjects: [{ kind: 'User', name: 'alice' }]
  }))
  await rbac.waitForResourceVersion(rvOf(made.object))
  t.same(await rbac.authorizer.authorize(listPods('default')),
    { decision: 'allow', reason: 'RBAC: allowed by RoleBinding "read-pods/default" of Role "pod-reader" to User "alice"' })
  t.equal((await rbac.authorizer.authorize(listPods('other'))).decision, 'noOpinion')
  const gone = await h('rolebindings').delete(admin, 'default', 'read-pods', {})
  t.ok(gone.deleted)
  await eventually(async () => (await rbac.authorizer.authorize(listPods('default'))).decision === 'noOpinion')
})

t.test('a binding to a missing role gives the reason of the failed lookup', async t => {
  const { rbac, h } = await setup(t)
  const made = await h('clusterrolebindings').create(admin, '', body({
    metadata: { name: 'dangling' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'nope' },
    subjects: [{ kind: 'User', name: 'bob' }]
  }))
  await rbac.waitForResourceVersion(rvOf(made.object))
  t.same(await rbac.authorizer.authorize(resourceAttributes({ username: 'bob', groups: [] }, { verb: 'get', resource: 'pods' })),
    { decision: 'noOpinion', reason: 'RBAC: clusterrole.rbac.authorization.k8s.io "nope" not found' })
})

t.test('reconcile creates the bootstrap policy; aggregation fills admin, edit and view', async t => {
  const { rbac, h } = await setup(t)
  await rbac.reconcile()
  const get = async (plural: string, name: string): Promise<Record<string, any>> => {
    const got = await h(plural).get(admin, '', name, {})
    return JSON.parse((Buffer.isBuffer(got) ? got : got.bytes).toString())
  }
  const ca = await get('clusterroles', 'cluster-admin')
  t.equal(ca.metadata.annotations['rbac.authorization.kubernetes.io/autoupdate'], 'true')
  t.equal(ca.metadata.labels['kubernetes.io/bootstrapping'], 'rbac-defaults')
  t.same((await get('clusterrolebindings', 'cluster-admin')).subjects, [{ kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'system:masters' }])
  t.same((await get('clusterrolebindings', 'system:public-info-viewer')).subjects.map((s: any) => s.name), ['system:authenticated', 'system:unauthenticated'])
  t.ok(await get('clusterroles', 'system:controller:deployment-controller'))

  const carol = { username: 'carol', groups: ['system:authenticated'] }
  t.equal((await rbac.authorizer.authorize(nonResourceAttributes(carol, 'get', '/apis/apps/v1'))).reason,
    'RBAC: allowed by ClusterRoleBinding "system:discovery" of ClusterRole "system:discovery" to Group "system:authenticated"')
  const anon = { username: 'system:anonymous', groups: ['system:unauthenticated'] }
  t.equal((await rbac.authorizer.authorize(nonResourceAttributes(anon, 'get', '/version'))).decision, 'allow')
  t.equal((await rbac.authorizer.authorize(nonResourceAttributes(anon, 'get', '/apis'))).decision, 'noOpinion')
  const scheduler = { username: 'system:kube-scheduler', groups: ['system:authenticated'] }
  t.equal((await rbac.authorizer.authorize(resourceAttributes(scheduler, { verb: 'create', resource: 'pods', subresource: 'binding', namespace: 'a' }))).decision, 'allow')
  t.equal((await rbac.authorizer.authorize(resourceAttributes(scheduler, { verb: 'delete', resource: 'nodes' }))).decision, 'noOpinion')

  await eventually(async () => {
    const rules = JSON.stringify((await get('clusterroles', 'admin')).rules ?? [])
    return rules.includes('"rolebindings"') && rules.includes('"pods/log"') && rules.includes('"pods/exec"')
  })
  const view = JSON.stringify((await get('clusterroles', 'view')).rules)
  t.notOk(view.includes('"secrets"'), 'view does not read secrets')
  const made = await h('rolebindings').create(admin, 'default', body({
    metadata: { name: 'dave-edit' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'edit' },
    subjects: [{ kind: 'User', name: 'dave' }]
  }))
  await rbac.waitForResourceVersion(rvOf(made.object))
  const dave = { username: 'dave', groups: [] }
  t.equal((await rbac.authorizer.authorize(resourceAttributes(dave, { verb: 'create', apiGroup: 'apps', resource: 'deployments', namespace: 'default' }))).decision, 'allow')
  t.equal((await rbac.authorizer.authorize(resourceAttributes(dave, { verb: 'create', resource: 'roles', apiGroup: 'rbac.authorization.k8s.io', namespace: 'default' }))).decision, 'noOpinion',
    'edit does not manage roles')
})

t.test('reconcile restores removed rules and subjects unless autoupdate is "false"', async t => {
  const { rbac, h } = await setup(t)
  await rbac.reconcile()
  const roles = h('clusterroles')
  await roles.patch(admin, '', 'system:basic-user', cur => ({ ...cur, rules: [] }))
  await h('clusterrolebindings').patch(admin, '', 'system:discovery', cur => ({ ...cur, subjects: [] }))
  await roles.patch(admin, '', 'system:monitoring', cur => ({
    ...cur, rules: [], metadata: { ...(cur.metadata as object), annotations: { 'rbac.authorization.kubernetes.io/autoupdate': 'false' } }
  }))
  await h('clusterrolebindings').delete(admin, '', 'system:basic-user', {})
  await h('clusterrolebindings').create(admin, '', body({
    metadata: { name: 'system:basic-user' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' }, subjects: []
  }))
  await rbac.reconcile()
  const read = async (plural: string, name: string): Promise<Record<string, any>> => {
    const got = await h(plural).get(admin, '', name, {})
    return JSON.parse((Buffer.isBuffer(got) ? got : got.bytes).toString())
  }
  t.equal((await read('clusterroles', 'system:basic-user')).rules.length, 2)
  t.equal((await read('clusterrolebindings', 'system:discovery')).subjects.length, 1)
  t.same((await read('clusterroles', 'system:monitoring')).rules ?? [], [], 'an opted-out role is left alone')
  const rebound = await read('clusterrolebindings', 'system:basic-user')
  t.same([rebound.roleRef.name, rebound.subjects.map((s: any) => s.name)], ['system:basic-user', ['system:authenticated']],
    'a binding to another role is replaced (roleRef is immutable)')
})

t.test('the rule resolver lists what a user holds in a namespace', async t => {
  const { rbac, h } = await setup(t)
  await h('roles').create(admin, 'default', body({ metadata: { name: 'r' }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'], resourceNames: ['c'] }] }))
  const made = await h('rolebindings').create(admin, 'default', body({
    metadata: { name: 'b' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'r' },
    subjects: [{ kind: 'Group', name: 'devs' }]
  }))
  await rbac.waitForResourceVersion(rvOf(made.object))
  const erin = { username: 'erin', groups: ['devs'] }
  t.same(rbac.ruleResolver.rulesFor(erin, 'default'), {
    resourceRules: [{ verbs: ['get'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['c'] }], nonResourceRules: [], incomplete: false
  })
  t.same((await rbac.ruleResolver.rulesFor(erin, 'orch-system')).resourceRules, [])
})
