// Reviews and TokenRequest through a real HTTP API server with authentication and authorization, driven by the real kubectl.

import t from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pino } from 'pino'
import { openLmdbStore } from '../apiserver/storage/lmdb/index.js'
import { createRegistry, type OrchRegistry } from '../apiserver/registry/registry.js'
import { createApiServer } from '../apiserver/server.js'
import { buildOpenAPIv2, buildOpenAPIv3GroupVersion } from '../apiserver/schema/openapi.js'
import { createAuthenticator } from '../apiserver/auth/authenticator.js'
import { privilegedGroup, unionAuthorizer } from '../apiserver/auth/authorizer.js'
import { buildRuleResolver } from '../apiserver/auth/rule-resolvers.js'
import { createServiceAccountTokens } from '../apiserver/auth/service-account-tokens.js'
import { serviceAccountKeys } from '../apiserver/auth/testing.js'
import { parseTokenFile, staticTokens } from '../apiserver/auth/token-file.js'
import type { Attributes, Authorizer, RuleResolver } from '../apiserver/auth/types.js'
import { registryUidLookup } from '../apiserver/registry/object-uids.js'
import { internalContext } from '../apiserver/registry/internal-context.js'
import { createCa, issueCertificate } from '../apiserver/pki/certs.js'
import { Agent, fetch } from 'undici'
import { runKubectl, type KubectlRun } from './orch-process.js'

const API_AUDIENCES = ['https://orch.test']
const SELF_REVIEWS = ['selfsubjectaccessreviews', 'selfsubjectrulesreviews', 'selfsubjectreviews']

/** The test's policy: alice may discover the API, make self reviews, list pods and read their logs in "default", and get /healthz. */
const policy: Authorizer = {
  async authorize (a: Attributes) {
    if (a.user.username !== 'alice') return { decision: 'noOpinion', reason: '' }
    if (!a.resourceRequest) return { decision: a.verb === 'get' && /^\/(healthz|version|api|apis|openapi)(\/|$)/.test(a.path) ? 'allow' : 'noOpinion', reason: '' }
    if (a.verb === 'create' && SELF_REVIEWS.includes(a.resource)) return { decision: 'allow', reason: '' }
    if (a.namespace === 'default' && a.resource === 'pods' && a.subresource === '' && a.verb === 'list') return { decision: 'allow', reason: 'alice lists pods' }
    if (a.namespace === 'default' && a.resource === 'pods' && a.subresource === 'log' && a.verb === 'get') return { decision: 'allow', reason: '' }
    return { decision: 'noOpinion', reason: '' }
  }
}
const rules: RuleResolver = {
  rulesFor: (user, namespace) => user.username === 'alice' && namespace === 'default'
    ? { resourceRules: [{ verbs: ['list'], apiGroups: [''], resources: ['pods'], resourceNames: [] }], nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/healthz'] }], incomplete: false }
    : { resourceRules: [], nonResourceRules: [], incomplete: false }
}

const dir = mkdtempSync(join(tmpdir(), 'orch-reviews-'))
const silent = pino({ level: 'silent' })
/** Shared by the registry (token issue times) and the token authenticator (expiry): tests move it forward. */
const clock = { skewMs: 0, now: () => Date.now() + clock.skewMs }
const store = await openLmdbStore({ path: join(dir, 'db') })
let registry: OrchRegistry | undefined
const saTokens = createServiceAccountTokens({ ...serviceAccountKeys(), issuers: ['https://orch.test'], lookup: registryUidLookup(() => registry!, clock.now), now: clock.now })
const authenticator = createAuthenticator({
  request: [], tokens: [staticTokens(parseTokenFile('admin-token,admin,1,system:masters\n')), saTokens], apiAudiences: API_AUDIENCES, anonymous: false
})
const authorizer = unionAuthorizer([privilegedGroup, policy])
registry = createRegistry({
  store, logger: silent, clock, authenticator, apiAudiences: API_AUDIENCES, authorizer, ruleResolver: buildRuleResolver(['RBAC'], () => rules), tokenIssuer: saTokens
})
await registry.start()
// TLS, because kubectl sends no credentials to a plain-http server.
const ca = await createCa('orch-reviews-test-ca')
const serving = await issueCertificate(ca, { subject: { commonName: 'orch-apiserver' }, usage: 'server', hosts: ['127.0.0.1'] })
const server = createApiServer({
  registry, logger: silent, authentication: authenticator, authorization: authorizer,
  openapi: { v2: buildOpenAPIv2, v3GroupVersion: buildOpenAPIv3GroupVersion },
  tls: { cert: serving.certPem, key: serving.keyPem, clientCa: ca.certPem }
})
const { port } = await server.listen({ port: 0, host: '127.0.0.1' })
const base = `https://127.0.0.1:${port}`
const dispatcher = new Agent({ connect: { ca: ca.certPem } })
t.teardown(async () => {
  await server.close()
  await dispatcher.close()
  await registry?.stop()
  await store.close()
  rmSync(dir, { recursive: true, force: true })
})

const kubeconfig = join(dir, 'kubeconfig')
writeFileSync(kubeconfig, `apiVersion: v1
kind: Config
clusters:
- name: orch
  cluster: {server: "${base}", certificate-authority-data: ${Buffer.from(ca.certPem).toString('base64')}}
users:
- name: admin
  user: {token: admin-token}
contexts:
- name: orch
  context: {cluster: orch, user: admin, namespace: default}
current-context: orch
`)
const kubectl = async (...args: string[]): Promise<KubectlRun> => await runKubectl(kubeconfig, join(dir, 'cache'), args)

async function api (method: string, path: string, body?: unknown, token = 'admin-token'): Promise<{ status: number; json: any }> {
  const res = await fetch(base + path, {
    dispatcher, method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body)
  })
  return { status: res.status, json: await res.json() }
}

async function tokenReview (token: string, audiences?: string[]): Promise<any> {
  const r = await api('POST', '/apis/authentication.k8s.io/v1/tokenreviews', { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token, ...(audiences === undefined ? {} : { audiences }) } })
  if (r.status !== 201) throw new Error(`TokenReview answered ${r.status}: ${JSON.stringify(r.json)}`)
  return r.json
}

const system = internalContext('test')
await registry.handler('', 'v1', 'serviceaccounts')!.create(system, 'default', { object: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } }, duplicateFields: [] })

t.test('kubectl auth whoami shows the requesting user, and the impersonated one with --as', async t => {
  const me = await kubectl('auth', 'whoami')
  t.equal(me.code, 0, me.stderr)
  t.match(me.stdout, /Username\s+admin/)
  t.match(me.stdout, /Groups\s+\[system:masters system:authenticated\]/)
  const alice = await kubectl('auth', 'whoami', '--as', 'alice', '-o', 'json')
  t.equal(alice.code, 0, alice.stderr)
  const review = JSON.parse(alice.stdout)
  t.equal(review.kind, 'SelfSubjectReview')
  t.same(review.status.userInfo, { username: 'alice', groups: ['system:authenticated'] })
})

t.test('kubectl auth can-i asks the authorizer through SelfSubjectAccessReview and SelfSubjectRulesReview', async t => {
  const yes = await kubectl('auth', 'can-i', 'list', 'pods', '--as', 'alice')
  t.equal(yes.stdout.trim(), 'yes', yes.stderr)
  t.equal(yes.code, 0)
  t.equal(yes.stderr, '', 'kubectl found pods in discovery as alice')
  const no = await kubectl('auth', 'can-i', 'delete', 'pods', '--as', 'alice')
  t.equal(no.stdout.trim(), 'no', no.stderr)
  t.equal(no.code, 1)
  const elsewhere = await kubectl('auth', 'can-i', 'list', 'pods', '--as', 'alice', '-n', 'kube-system')
  t.equal(elsewhere.stdout.trim(), 'no')
  const logs = await kubectl('auth', 'can-i', 'get', 'pods', '--subresource=log', '--as', 'alice')
  t.equal(logs.stdout.trim(), 'yes', logs.stderr)
  const healthz = await kubectl('auth', 'can-i', 'get', '/healthz', '--as', 'alice')
  t.equal(healthz.stdout.trim(), 'yes', healthz.stderr)
  const metrics = await kubectl('auth', 'can-i', 'get', '/metrics', '--as', 'alice')
  t.equal(metrics.stdout.trim(), 'no')
  const admin = await kubectl('auth', 'can-i', 'delete', 'nodes')
  t.equal(admin.stdout.trim(), 'yes', 'system:masters may')
  const list = await kubectl('auth', 'can-i', '--list', '--as', 'alice')
  t.equal(list.code, 0, list.stderr)
  t.match(list.stdout, /Resources\s+Non-Resource URLs\s+Resource Names\s+Verbs/)
  t.match(list.stdout, /pods\s+\[\]\s+\[\]\s+\[list\]/)
  t.match(list.stdout, /\s+\[\/healthz\]\s+\[\]\s+\[get\]/)
})

t.test('a SubjectAccessReview posted by kubectl create answers for the user it names', async t => {
  const file = join(dir, 'sar.yaml')
  writeFileSync(file, `apiVersion: authorization.k8s.io/v1
kind: SubjectAccessReview
spec:
  user: alice
  resourceAttributes: {namespace: default, verb: list, resource: pods}
`)
  const r = await kubectl('create', '-f', file, '-o', 'json')
  t.equal(r.code, 0, r.stderr)
  t.same(JSON.parse(r.stdout).status, { allowed: true, reason: 'alice lists pods' })
})

t.test('kubectl create token issues a token that authenticates only for its audience', async t => {
  const r = await kubectl('create', 'token', 'default', '--duration', '10m', '--audience', 'x')
  t.equal(r.code, 0, r.stderr)
  const token = r.stdout.trim()
  const review = await tokenReview(token, ['x'])
  t.equal(review.status.authenticated, true)
  t.same(review.status.user, {
    username: 'system:serviceaccount:default:default',
    uid: (await registry!.handler('', 'v1', 'serviceaccounts')!.get(system, 'default', 'default', {}) as { object: any }).object.metadata.uid,
    groups: ['system:serviceaccounts', 'system:serviceaccounts:default', 'system:authenticated']
  })
  t.same(review.status.audiences, ['x'])
  const apiAudience = await tokenReview(token)
  t.notOk(apiAudience.status.authenticated, 'not for the API audiences')
  t.equal(apiAudience.status.error, 'token audiences ["x"] is invalid for the target audiences ["https://orch.test"]')
  const asBearer = await api('GET', '/api/v1/namespaces/default/pods', undefined, token)
  t.equal(asBearer.status, 401, 'the API server does not take it either')
  const forApi = (await kubectl('create', 'token', 'default')).stdout.trim()
  t.equal((await api('GET', '/api/v1/namespaces/default/pods', undefined, forApi)).status, 403, 'a token for the API audiences authenticates (and the policy says no)')
})

t.test('a token bound to a pod is refused once the pod is deleted', async t => {
  await registry!.handler('', 'v1', 'pods')!.create(system, 'default', { object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'busybox' }] } }, duplicateFields: [] })
  const r = await kubectl('create', 'token', 'default', '--audience', 'x', '--bound-object-kind', 'Pod', '--bound-object-name', 'p')
  t.equal(r.code, 0, r.stderr)
  const token = r.stdout.trim()
  t.equal((await tokenReview(token, ['x'])).status.authenticated, true)
  t.equal((await kubectl('delete', 'pod', 'p', '--grace-period=0', '--force')).code, 0)
  const after = await tokenReview(token, ['x'])
  t.notOk(after.status.authenticated)
  t.equal(after.status.error, 'pod default/p has been deleted')
  const missing = await kubectl('create', 'token', 'default', '--bound-object-kind', 'Pod', '--bound-object-name', 'p')
  t.not(missing.code, 0)
  t.match(missing.stderr, /pods "p" not found/)
})

t.test('an expired token is refused', async t => {
  const token = (await kubectl('create', 'token', 'default', '--duration', '10m', '--audience', 'x')).stdout.trim()
  t.equal((await tokenReview(token, ['x'])).status.authenticated, true)
  clock.skewMs = 12 * 60_000
  t.teardown(() => { clock.skewMs = 0 })
  const later = await tokenReview(token, ['x'])
  t.notOk(later.status.authenticated)
  t.equal(later.status.error, 'service account token has expired')
  const short = await kubectl('create', 'token', 'default', '--duration', '5m')
  t.not(short.code, 0)
  t.match(short.stderr, /may not specify a duration less than 10 minutes/)
})

t.test('reviews are create-only: discovery says so, other methods are refused, nothing is stored', async t => {
  const list = await api('GET', '/apis/authorization.k8s.io/v1')
  const sar = list.json.resources.find((r: any) => r.name === 'subjectaccessreviews')
  t.same(sar, { name: 'subjectaccessreviews', singularName: 'subjectaccessreview', namespaced: false, kind: 'SubjectAccessReview', verbs: ['create'] })
  const local = list.json.resources.find((r: any) => r.name === 'localsubjectaccessreviews')
  t.equal(local.namespaced, true)
  const core = await api('GET', '/api/v1')
  t.match(core.json.resources.find((r: any) => r.name === 'serviceaccounts/token'), { kind: 'TokenRequest', verbs: ['create'], group: 'authentication.orch.io', version: 'v1' })
  t.same((await api('GET', '/apis/authorization.k8s.io/v1/subjectaccessreviews')).json, {
    kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'the server does not allow this method on the requested resource', reason: 'MethodNotAllowed', details: {}, code: 405
  })
  t.equal((await api('DELETE', '/apis/authorization.k8s.io/v1/subjectaccessreviews')).status, 405)
  t.equal((await api('GET', '/apis/authorization.k8s.io/v1/subjectaccessreviews/x')).status, 404)
  t.equal((await api('GET', '/apis/authorization.k8s.io/v1/subjectaccessreviews?watch=1')).status, 405)
  t.equal((await api('POST', '/apis/authorization.k8s.io/v1/localsubjectaccessreviews', {})).status, 404, 'a namespaced review needs its namespace')
  t.equal((await api('POST', '/apis/authentication.k8s.io/v1/namespaces/default/tokenreviews', {})).status, 404, 'a cluster review has none')
  const get = await kubectl('get', 'tokenreviews')
  t.not(get.code, 0)
  t.match(get.stderr, /Error from server \(MethodNotAllowed\): the server does not allow this method on the requested resource/)
  const v2 = await fetch(`${base}/openapi/v2`, { dispatcher, headers: { authorization: 'Bearer admin-token', accept: 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf' } })
  t.equal(v2.status, 200, 'the OpenAPI v2 document encodes as protobuf with the reviews in it')
  t.ok((await v2.arrayBuffer()).byteLength > 0)
  const openapi = await api('GET', '/openapi/v3/apis/authorization.k8s.io/v1')
  t.same(Object.keys(openapi.json.paths['/apis/authorization.k8s.io/v1/subjectaccessreviews']).filter(k => k !== 'parameters'), ['post'])
})
