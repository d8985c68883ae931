// End to end through HTTP: static tokens, the Node and RBAC authorizers, escalation prevention and NodeRestriction.

import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pino } from 'pino'
import t from 'tap'
import type { Test } from 'tap'
import { openLmdbStore } from '../apiserver/storage/lmdb/index.js'
import { createRegistry } from '../apiserver/registry/registry.js'
import { createApiServer } from '../apiserver/server.js'
import { createAuthenticator } from '../apiserver/auth/authenticator.js'
import { parseTokenFile, staticTokens } from '../apiserver/auth/token-file.js'
import { parseAuthorizationModes } from '../apiserver/auth/authorizer.js'
import { createAuthorizationStack } from '../apiserver/auth/authorization-stack.js'
import type { RbacAuthorization } from '../apiserver/auth/rbac/rbac-authorization.js'

const TOKENS = [
  'admin-token,admin,1,"system:masters"',
  'alice-token,alice,2',
  'n1-token,system:node:n1,3,"system:nodes"'
].join('\n')

interface Secured { url: string, rbac: RbacAuthorization }

async function startSecuredServer (t: Test): Promise<Secured> {
  const dir = mkdtempSync(join(tmpdir(), 'orch-rbac-'))
  const silent = pino({ level: 'silent' })
  const store = await openLmdbStore({ path: dir })
  // As `orch apiserver --authorization-mode=Node,RBAC` wires it.
  const stack = createAuthorizationStack(parseAuthorizationModes('Node,RBAC'))
  const registry = createRegistry({ store, logger: silent, admission: stack.admission })
  const authz = stack.start(registry, silent)
  await registry.start()
  await authz.reconcile()
  const server = createApiServer({
    registry, logger: silent, healthChecks: [authz.healthCheck],
    authentication: createAuthenticator({ request: [], tokens: [staticTokens(parseTokenFile(TOKENS))], apiAudiences: [], anonymous: false }),
    authorization: authz.authorizer
  })
  const { port } = await server.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(async () => {
    await server.close()
    authz.stop()
    await registry.stop()
    await store.close()
    rmSync(dir, { recursive: true, force: true })
  })
  return { url: `http://127.0.0.1:${port}`, rbac: authz.rbac }
}

type Answer = { status: number, body: Record<string, any> }

function client (base: string, token: string) {
  const call = async (method: string, path: string, body?: unknown): Promise<Answer> => {
    const res = await fetch(base + path, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body)
    })
    return { status: res.status, body: await res.json() as Record<string, any> }
  }
  return {
    get: async (path: string) => await call('GET', path),
    post: async (path: string, body: unknown) => await call('POST', path, body),
    put: async (path: string, body: unknown) => await call('PUT', path, body)
  }
}

const RBAC = '/apis/rbac.authorization.k8s.io/v1'

t.test('a user is forbidden until a RoleBinding allows, and then only in its namespace', async t => {
  const { url, rbac } = await startSecuredServer(t)
  const admin = client(url, 'admin-token')
  const alice = client(url, 'alice-token')
  const denied = await alice.get('/api/v1/namespaces/default/pods')
  t.equal(denied.status, 403)
  t.equal(denied.body.message, 'pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "default"')
  t.equal((await alice.get('/api')).status, 200, 'system:discovery lets every authenticated user discover')
  const health = await fetch(`${url}/healthz?verbose`, { headers: { authorization: 'Bearer alice-token' } })
  t.match(await health.text(), /\[\+\]poststarthook\/rbac\/bootstrap-roles ok/, 'system:public-info-viewer; the bootstrap hook finished')
  t.equal((await fetch(`${url}/healthz/poststarthook/rbac/bootstrap-roles`, { headers: { authorization: 'Bearer alice-token' } })).status, 403,
    'only /healthz itself is public, as in Kubernetes')

  t.equal((await admin.post(`${RBAC}/namespaces/default/roles`, {
    metadata: { name: 'pod-reader' },
    rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }, { apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles'], verbs: ['create'] }]
  })).status, 201)
  const bound = await admin.post(`${RBAC}/namespaces/default/rolebindings`, {
    metadata: { name: 'alice-reads' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'pod-reader' },
    subjects: [{ kind: 'User', name: 'alice', apiGroup: 'rbac.authorization.k8s.io' }]
  })
  t.equal(bound.status, 201)
  await rbac.waitForResourceVersion(bound.body.metadata.resourceVersion)

  t.equal((await alice.get('/api/v1/namespaces/default/pods')).status, 200)
  const elsewhere = await alice.get('/api/v1/namespaces/orch-system/pods')
  t.equal(elsewhere.status, 403)
  t.equal(elsewhere.body.message, 'pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "orch-system"')
  const cluster = await alice.get('/api/v1/pods')
  t.equal(cluster.body.message, 'pods is forbidden: User "alice" cannot list resource "pods" in API group "" at the cluster scope')

  const ok = await alice.post(`${RBAC}/namespaces/default/roles`, { metadata: { name: 'narrower' }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }] })
  t.equal(ok.status, 201, 'a role within what alice holds')
  const escalation = await alice.post(`${RBAC}/namespaces/default/roles`, { metadata: { name: 'wider' }, rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }] })
  t.equal(escalation.status, 403)
  t.equal(escalation.body.reason, 'Forbidden')
  t.equal(escalation.body.message, 'roles.rbac.authorization.k8s.io "wider" is forbidden: user "alice" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}')
})

t.test('a node reads what its pods need and writes only what is its own', async t => {
  const { url } = await startSecuredServer(t)
  const admin = client(url, 'admin-token')
  const n1 = client(url, 'n1-token')
  for (const name of ['mine', 'other']) {
    t.equal((await admin.post('/api/v1/namespaces/default/secrets', { metadata: { name }, stringData: { k: 'v' } })).status, 201)
  }
  t.equal((await admin.post('/api/v1/namespaces/default/pods', {
    metadata: { name: 'web' }, spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'busybox' }], volumes: [{ name: 'v', secret: { secretName: 'mine' } }] }
  })).status, 201)
  t.equal((await n1.get('/api/v1/namespaces/default/secrets/mine')).status, 200)
  const other = await n1.get('/api/v1/namespaces/default/secrets/other')
  t.equal(other.status, 403)
  t.equal(other.body.message, 'secrets "other" is forbidden: User "system:node:n1" cannot get resource "secrets" in API group "" in the namespace "default": no relationship found between node \'n1\' and this object')

  t.equal((await n1.post('/api/v1/nodes', { metadata: { name: 'n1' } })).status, 201)
  const foreign = await n1.post('/api/v1/nodes', { metadata: { name: 'n2' } })
  t.equal(foreign.status, 403)
  t.equal(foreign.body.message, 'nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2"')
  const plain = await n1.post('/api/v1/namespaces/default/pods', { metadata: { name: 'sneaky' }, spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'busybox' }] } })
  t.equal(plain.status, 403)
  t.match(plain.body.message, /node "n1" can only create mirror pods/)
  t.equal((await n1.get('/api/v1/namespaces/default/pods/web')).status, 200)
  const roles = await n1.get(`${RBAC}/clusterroles`)
  t.equal(roles.status, 403, 'nodes get nothing beyond system:node\'s rules')
})
