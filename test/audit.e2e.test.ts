// Audit logging through a real in-process API server: the audit steps in front of it, events read back from the log file.

import t from 'tap'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { pino } from 'pino'
import { request } from 'undici'
import { startTestApiServer } from './api-server-fixture.js'
import { openAuditor } from '../apiserver/audit/open.js'
import { registryDeprecations } from '../apiserver/endpoints/audit.js'
import type { OrchRegistry } from '../apiserver/registry/registry.js'
import { createAuthenticator } from '../apiserver/auth/authenticator.js'
import { privilegedGroup, unionAuthorizer } from '../apiserver/auth/authorizer.js'
import { parseTokenFile, staticTokens } from '../apiserver/auth/token-file.js'

const dir = mkdtempSync(join(tmpdir(), 'orch-audit-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))
const logPath = join(dir, 'log', 'audit.log')
const policyPath = join(dir, 'policy.yaml')
writeFileSync(policyPath, `
apiVersion: audit.orch.io/v1
kind: Policy
rules:
- level: None
  resources:
  - group: ""
    resources: ["secrets"]
- level: RequestResponse
  verbs: ["create"]
  resources:
  - group: ""
    resources: ["configmaps"]
  omitManagedFields: true
- level: Metadata
  verbs: ["get"]
  resources:
  - group: ""
    resources: ["configmaps"]
  omitStages: ["RequestReceived"]
- level: Metadata
`)

const logger = pino({ level: 'silent' })
// The registry exists once the server does; deprecations are looked up in it then.
let registry: OrchRegistry | undefined
const auditor = await openAuditor({ policyFile: policyPath, logPath, rotation: { maxAgeDays: 0, maxBackups: 0, maxSizeMB: 0 } }, logger, {
  deprecatedApi: (group, version, resource) => registry === undefined ? undefined : registryDeprecations(registry)(group, version, resource)
})
if (auditor === undefined) throw new Error('auditing should be on')
t.teardown(async () => await auditor.close())

// The order kube-apiserver runs its steps in: audit ID, authentication, audit, impersonation, authorization.
const authn = createAuthenticator({
  request: [],
  tokens: [staticTokens(parseTokenFile('admin-token,alice,1,system:masters\nbob-token,bob,2,devs\n'))],
  apiAudiences: [],
  anonymous: false
})
const authz = unionAuthorizer([privilegedGroup])
const api = await startTestApiServer(t, r => {
  registry = r
  return { audit: auditor, authentication: authn, authorization: authz }
})

async function call (method: string, path: string, opts: { body?: unknown; token?: string; headers?: Record<string, string> } = {}) {
  const headers: Record<string, string> = { authorization: `Bearer ${opts.token ?? 'admin-token'}`, 'user-agent': 'audit-test/1.0', ...opts.headers }
  const body = opts.body === undefined ? undefined : JSON.stringify(opts.body)
  if (body !== undefined) headers['content-type'] = 'application/json'
  const r = await request(api.url + path, { method: method as 'GET', body, headers })
  const text = await r.body.text()
  let json: any
  try { json = JSON.parse(text) } catch {}
  return { status: r.statusCode, auditID: String(r.headers['audit-id'] ?? ''), json }
}

function allEvents (): any[] {
  let text = ''
  try { text = readFileSync(logPath, 'utf8') } catch {}
  return text.split('\n').filter(l => l !== '').map(l => JSON.parse(l))
}

/** The events of one request, once `stage` has been written (writes are batched off the request path). */
async function eventsOf (auditID: string, stage: string): Promise<any[]> {
  for (let i = 0; i < 200; i++) {
    const evs = allEvents().filter(e => e.auditID === auditID)
    if (evs.some(e => e.stage === stage)) return evs
    await sleep(10)
  }
  throw new Error(`no ${stage} event for ${auditID}`)
}

const MICRO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/

t.test('a create at RequestResponse logs the request and response objects, Audit-Id is the auditID', async t => {
  const r = await call('POST', '/api/v1/namespaces/default/configmaps', { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm1' }, data: { a: 'b' } } })
  t.equal(r.status, 201)
  t.match(r.auditID, /^[0-9a-f-]{36}$/)
  const evs = await eventsOf(r.auditID, 'ResponseComplete')
  t.same(evs.map(e => e.stage), ['RequestReceived', 'ResponseComplete'])
  const done = evs[1]
  t.match(done, {
    kind: 'Event', apiVersion: 'audit.orch.io/v1', level: 'RequestResponse', auditID: r.auditID, verb: 'create',
    requestURI: '/api/v1/namespaces/default/configmaps',
    user: { username: 'alice', uid: '1', groups: ['system:masters', 'system:authenticated'] },
    sourceIPs: ['127.0.0.1'], userAgent: 'audit-test/1.0',
    objectRef: { resource: 'configmaps', namespace: 'default', name: 'cm1', apiVersion: 'v1' },
    responseStatus: { metadata: {}, code: 201 },
    requestObject: { kind: 'ConfigMap', metadata: { name: 'cm1' }, data: { a: 'b' } },
    responseObject: { kind: 'ConfigMap', metadata: { name: 'cm1', uid: r.json.metadata.uid }, data: { a: 'b' } },
    annotations: { 'authorization.k8s.io/decision': 'allow', 'authorization.k8s.io/reason': '' }
  })
  t.notOk('apiGroup' in done.objectRef, 'the core group is left out')
  t.notOk('managedFields' in done.responseObject.metadata, 'omitManagedFields drops managedFields')
  t.ok(r.json.metadata.managedFields !== undefined, 'the client still gets managedFields')
  t.match(done.requestReceivedTimestamp, MICRO)
  t.match(done.stageTimestamp, MICRO)
  t.equal(evs[0].requestReceivedTimestamp, done.requestReceivedTimestamp)
  t.notOk('requestObject' in evs[0], 'RequestReceived comes before the body is read')
})

t.test('a get at Metadata has no objects, and its rule omits RequestReceived', async t => {
  const r = await call('GET', '/api/v1/namespaces/default/configmaps/cm1')
  t.equal(r.status, 200)
  const evs = await eventsOf(r.auditID, 'ResponseComplete')
  t.same(evs.map(e => e.stage), ['ResponseComplete'])
  t.match(evs[0], { level: 'Metadata', verb: 'get', objectRef: { resource: 'configmaps', namespace: 'default', name: 'cm1' }, responseStatus: { code: 200 } })
  t.notOk('requestObject' in evs[0])
  t.notOk('responseObject' in evs[0])
})

t.test('a rule at level None writes nothing, yet the response has an Audit-Id', async t => {
  const secret = await call('POST', '/api/v1/namespaces/default/secrets', { body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's1' }, stringData: { k: 'v' } } })
  t.equal(secret.status, 201)
  t.match(secret.auditID, /^[0-9a-f-]{36}$/)
  // A later request's event is written after anything the first would have produced.
  const later = await call('GET', '/api/v1/namespaces/default/configmaps/cm1')
  await eventsOf(later.auditID, 'ResponseComplete')
  t.same(allEvents().filter(e => e.auditID === secret.auditID), [])
})

t.test('a client-supplied Audit-Id is kept', async t => {
  const r = await call('GET', '/api/v1/namespaces', { headers: { 'audit-id': 'from-the-client-1' } })
  t.equal(r.auditID, 'from-the-client-1')
  const evs = await eventsOf('from-the-client-1', 'ResponseComplete')
  t.match(evs.at(-1), { verb: 'list', objectRef: { resource: 'namespaces' } })
})

t.test('a forbidden request is annotated forbid and its event carries the Status', async t => {
  const r = await call('GET', '/api/v1/namespaces/default/configmaps', { token: 'bob-token' })
  t.equal(r.status, 403)
  const evs = await eventsOf(r.auditID, 'ResponseComplete')
  t.match(evs.at(-1), {
    user: { username: 'bob' },
    responseStatus: { code: 403, status: 'Failure', reason: 'Forbidden', message: /User "bob" cannot list resource "configmaps"/ },
    annotations: { 'authorization.k8s.io/decision': 'forbid' }
  })
})

t.test('impersonation: the event names who asked and whom they acted as', async t => {
  const r = await call('GET', '/api/v1/namespaces', { headers: { 'impersonate-user': 'carol', 'impersonate-group': 'system:masters' } })
  t.equal(r.status, 200)
  const evs = await eventsOf(r.auditID, 'ResponseComplete')
  t.match(evs.at(-1), { user: { username: 'alice' }, impersonatedUser: { username: 'carol', groups: ['system:masters', 'system:authenticated'] } })
  t.notOk('impersonatedUser' in evs[0], 'RequestReceived is before impersonation')
})

t.test('a refused credential gets one ResponseStarted event with code 401', async t => {
  const r = await call('GET', '/api/v1/namespaces', { token: 'wrong' })
  t.equal(r.status, 401)
  t.match(r.auditID, /^[0-9a-f-]{36}$/)
  const evs = await eventsOf(r.auditID, 'ResponseStarted')
  t.equal(evs.length, 1)
  t.match(evs[0], { level: 'Metadata', verb: 'list', responseStatus: { code: 401, message: 'Authentication failed, attempted: bearer' } })
  t.same(evs[0].user, {}, 'nobody was authenticated')
})

t.test('a deprecated API version (a CRD version marked deprecated) is annotated orch.io/deprecated', async t => {
  const schema = { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } }
  const crd = await call('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
    body: {
      apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'widgets.example.com' },
      spec: {
        group: 'example.com', scope: 'Namespaced', names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
        versions: [{ name: 'v1', served: true, storage: true, schema }, { name: 'v1beta1', served: true, storage: false, deprecated: true, schema }]
      }
    }
  })
  t.equal(crd.status, 201)
  let old = await call('GET', '/apis/example.com/v1beta1/namespaces/default/widgets')
  for (let i = 0; i < 100 && old.status !== 200; i++) { await sleep(20); old = await call('GET', '/apis/example.com/v1beta1/namespaces/default/widgets') }
  t.equal(old.status, 200)
  const evs = await eventsOf(old.auditID, 'ResponseComplete')
  t.match(evs.at(-1), { objectRef: { apiGroup: 'example.com', apiVersion: 'v1beta1', resource: 'widgets' }, annotations: { 'orch.io/deprecated': 'true' } })
  const current = await call('GET', '/apis/example.com/v1/namespaces/default/widgets')
  const cur = await eventsOf(current.auditID, 'ResponseComplete')
  t.notOk('orch.io/deprecated' in (cur.at(-1).annotations ?? {}), 'the served v1 is not deprecated')
})

t.test('a watch (long-running) has a ResponseStarted stage before ResponseComplete', async t => {
  const r = await call('GET', '/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=1')
  t.equal(r.status, 200)
  const evs = await eventsOf(r.auditID, 'ResponseComplete')
  t.same(evs.map(e => e.stage), ['RequestReceived', 'ResponseStarted', 'ResponseComplete'])
  t.match(evs[1], { verb: 'watch', responseStatus: { code: 200 } })
})

t.test('non-resource requests are audited by path', async t => {
  const r = await call('GET', '/healthz')
  t.equal(r.status, 200)
  const evs = await eventsOf(r.auditID, 'ResponseComplete')
  t.match(evs.at(-1), { verb: 'get', requestURI: '/healthz', responseStatus: { code: 200 } })
  t.notOk('objectRef' in evs.at(-1))
})
