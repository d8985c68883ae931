import t from 'tap'
import type { Test } from 'tap'
import { body, openFixture, silentLogger } from '../../registry/testing.js'
import { internalContext } from '../../registry/internal-context.js'
import type { RequestContext, ResourceHandler } from '../../registry/types.js'
import { createRbacAuthorization, type RbacAuthorization } from './rbac-authorization.js'
import { createEscalationCheck } from './escalation.js'

const G = 'rbac.authorization.orch.io'
const admin = internalContext('test-admin')
const as = (username: string): RequestContext => ({ user: { username, groups: ['system:authenticated'] }, dryRun: false, fieldValidation: 'Strict', warnings: [] })
const rvOf = (o: Record<string, unknown>): string => String((o.metadata as { resourceVersion?: string }).resourceVersion)
const roleRef = (kind: string, name: string): Record<string, string> => ({ apiGroup: 'rbac.authorization.k8s.io', kind, name })

async function setup (t: Test): Promise<{ rbac: RbacAuthorization, h: (plural: string) => ResourceHandler, grant: (rules: unknown[], extra?: unknown[]) => Promise<void> }> {
  let rbac: RbacAuthorization | undefined
  const f = await openFixture({ admission: [createEscalationCheck(() => rbac?.escalationDeps())] })
  rbac = createRbacAuthorization({ registry: f.registry, logger: silentLogger })
  const r = rbac
  t.teardown(async () => { r.stop(); await f.close() })
  await r.ready()
  const h = (plural: string): ResourceHandler => f.registry.handler(G, 'v1', plural)!
  /** Gives alice `rules` in default through a Role and RoleBinding made by an administrator. */
  const grant = async (rules: unknown[]): Promise<void> => {
    await h('roles').create(admin, 'default', body({ metadata: { name: 'alice-has' }, rules }))
    const b = await h('rolebindings').create(admin, 'default', body({ metadata: { name: 'alice-has' }, roleRef: roleRef('Role', 'alice-has'), subjects: [{ kind: 'User', name: 'alice' }] }))
    await r.waitForResourceVersion(rvOf(b.object))
  }
  return { rbac: r, h, grant }
}

t.test('a user may create a role with rules they hold, not with more', async t => {
  const { h, grant } = await setup(t)
  await grant([{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }])
  const ok = await h('roles').create(as('alice'), 'default', body({ metadata: { name: 'sub' }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }] }))
  t.equal((ok.object.metadata as { name: string }).name, 'sub')
  await t.rejects(h('roles').create(as('alice'), 'default', body({
    metadata: { name: 'more' }, rules: [{ apiGroups: [''], resources: ['pods', 'secrets'], verbs: ['get', 'delete'] }]
  })), {
    code: 403,
    reason: 'Forbidden',
    message: 'roles.rbac.authorization.orch.io "more" is forbidden: user "alice" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n' +
      '{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}\n{APIGroups:[""], Resources:["secrets"], Verbs:["get" "delete"]}'
  })
  await t.rejects(h('roles').update(as('alice'), 'default', 'sub', body({
    metadata: { name: 'sub' }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['delete'] }]
  })), { code: 403 }, 'an update is checked too')
})

t.test('the escalate verb on roles lifts the check; system:masters always passes', async t => {
  const { h, grant } = await setup(t)
  await grant([{ apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles'], verbs: ['create', 'escalate'] }])
  const big = { apiGroups: ['*'], resources: ['*'], verbs: ['*'] }
  await h('roles').create(as('alice'), 'default', body({ metadata: { name: 'big' }, rules: [big] }))
  await h('clusterroles').create(admin, '', body({ metadata: { name: 'huge' }, rules: [big] }))
  await t.rejects(h('clusterroles').create(as('alice'), '', body({ metadata: { name: 'huge2' }, rules: [big] })), { code: 403 },
    'escalate on roles in a namespace is not escalate on clusterroles')
})

t.test('only holders of everything may create an aggregated ClusterRole', async t => {
  const { h, grant } = await setup(t)
  await grant([])
  await t.rejects(h('clusterroles').create(as('alice'), '', body({
    metadata: { name: 'agg' }, aggregationRule: { clusterRoleSelectors: [{ matchLabels: { a: 'b' } }] }
  })), { code: 403, message: 'clusterroles.rbac.authorization.orch.io "agg" is forbidden: must have cluster-admin privileges to use the aggregationRule' })
})

t.test('a user may bind a role whose permissions they hold, or one they may bind', async t => {
  const { rbac, h, grant } = await setup(t)
  await h('clusterroles').create(admin, '', body({ metadata: { name: 'pod-reader' }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }] }))
  await h('clusterroles').create(admin, '', body({ metadata: { name: 'secret-reader' }, rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }] }))
  await grant([{ apiGroups: [''], resources: ['pods'], verbs: ['get'] },
    { apiGroups: ['rbac.authorization.k8s.io'], resources: ['clusterroles'], verbs: ['bind'], resourceNames: ['secret-reader'] }])
  const bind = async (name: string, role: string): Promise<unknown> => await h('rolebindings').create(as('alice'), 'default', body({
    metadata: { name }, roleRef: roleRef('ClusterRole', role), subjects: [{ kind: 'User', name: 'bob' }]
  }))
  await bind('b1', 'pod-reader')
  await bind('b2', 'secret-reader')
  await h('clusterroles').create(admin, '', body({ metadata: { name: 'node-admin' }, rules: [{ apiGroups: [''], resources: ['nodes'], verbs: ['*'] }] }))
  await t.rejects(bind('b3', 'node-admin'), {
    code: 403,
    message: 'rolebindings.rbac.authorization.orch.io "b3" is forbidden: user "alice" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["nodes"], Verbs:["*"]}'
  })
  await t.rejects(bind('b4', 'missing'), { code: 403, message: /clusterrole.rbac.authorization.k8s.io "missing" not found/ })
  t.equal((await rbac.ruleResolver.rulesFor({ username: 'bob', groups: [] }, 'default')).incomplete, false)
})
