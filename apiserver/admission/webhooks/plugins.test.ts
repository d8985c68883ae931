import t, { type Test } from 'tap'
import { body, ctx, eventually } from '../../registry/testing.js'
import { createSandboxPool, type SandboxPool } from '../../../sandbox/pool.js'
import type { CertificateAuthority } from '../../pki/certs.js'
import { patchAnswer, startWebhookServer, testCa, type WebhookServer } from './testing.js'
import { webhookEnv, type WebhookEnv } from './testing.js'
import type { RequestContext } from '../../registry/types.js'

let ca: CertificateAuthority
let pool: SandboxPool
t.before(async () => { ca = await testCa(); pool = createSandboxPool({ size: 1 }) })
t.teardown(async () => { await pool.close() })

const env = async (t: Test): Promise<WebhookEnv> => await webhookEnv(t, pool)

const rules = [{ operations: ['CREATE', 'UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }]

function hook (name: string, server: WebhookServer, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { name, clientConfig: { url: server.url, caBundle: server.caBundle }, rules, sideEffects: 'None', admissionReviewVersions: ['v1'], ...extra }
}

async function configure (e: WebhookEnv, kind: 'Mutating' | 'Validating', name: string, webhooks: Array<Record<string, unknown>>): Promise<void> {
  const plural = kind === 'Mutating' ? 'mutatingwebhookconfigurations' : 'validatingwebhookconfigurations'
  await e.fx.registry.handler('admissionregistration.orch.io', 'v1', plural)!.create(ctx(), '',
    body({ apiVersion: 'admissionregistration.orch.io/v1', kind: `${kind}WebhookConfiguration`, metadata: { name }, webhooks }))
  const plugin = kind === 'Mutating' ? e.mutating : e.validating
  await eventually(() => webhooks.every(w => plugin.webhookNames().includes(w.name as string)))
}

const cm = (name: string, labels: Record<string, string> = {}): Record<string, unknown> => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels } })
const createCm = async (e: WebhookEnv, name: string, labels: Record<string, string> = {}, c: RequestContext = ctx(), ns = 'default'): Promise<any> =>
  await e.fx.registry.handler('', 'v1', 'configmaps')!.create(c, ns, body(cm(name, labels))).catch(err => err)

t.test('a validating webhook denies with its message and code; the review names the request', async t => {
  const e = await env(t)
  const server = await startWebhookServer(ca, () => ({ allowed: false, status: { code: 403, message: 'no configmaps today' } }))
  t.teardown(() => server.close())
  await configure(e, 'Validating', 'deny', [hook('deny.example.com', server)])
  const err = await createCm(e, 'a')
  t.equal(err.code, 403)
  t.equal(err.message, 'admission webhook "deny.example.com" denied the request: no configmaps today')
  const req = server.reviews[0].request
  t.match(req, { operation: 'CREATE', namespace: 'default', name: 'a', kind: { group: '', version: 'v1', kind: 'ConfigMap' },
    resource: { group: '', version: 'v1', resource: 'configmaps' }, userInfo: { username: 'tester' }, dryRun: false, oldObject: null,
    object: { metadata: { name: 'a' } }, options: { kind: 'CreateOptions' } })
  t.type(req.uid, 'string')
})

t.test('a mutating webhook changes the object by JSONPatch before validation; warnings and audit annotations reach the request', async t => {
  const e = await env(t)
  const server = await startWebhookServer(ca, () => ({
    ...patchAnswer([{ op: 'add', path: '/metadata/labels/mutated', value: 'yes' }, { op: 'add', path: '/data', value: { k: 'v' } }]),
    warnings: ['mutated your configmap'], auditAnnotations: { why: 'policy' }
  }))
  t.teardown(() => server.close())
  await configure(e, 'Mutating', 'label', [hook('label.example.com', server)])
  const c = ctx()
  const made = await createCm(e, 'a', {}, c)
  t.same(made.object.metadata.labels, { mutated: 'yes' })
  t.same(made.object.data, { k: 'v' })
  t.same(c.warnings, ['mutated your configmap'])
  t.same(c.auditAnnotations, { 'label.example.com/why': 'policy' })
  const bad = await startWebhookServer(ca, () => patchAnswer([{ op: 'add', path: '/metadata/labels/not a valid key!', value: 'x' }]))
  t.teardown(() => bad.close())
  await configure(e, 'Mutating', 'm2-bad', [hook('bad.example.com', bad, { objectSelector: { matchLabels: { bad: 'yes' } } })])
  t.equal((await createCm(e, 'b', { bad: 'yes' })).code, 422, 'validation sees what the webhook changed')
})

t.test('match conditions that are false skip the webhook', async t => {
  const e = await env(t)
  const server = await startWebhookServer(ca, () => ({ allowed: false, status: { message: 'no' } }))
  t.teardown(() => server.close())
  await configure(e, 'Validating', 'cond', [hook('cond.example.com', server, {
    matchConditions: [{ name: 'not-exempt', expression: "!has(object.metadata.labels) || !('exempt' in object.metadata.labels)" },
      { name: 'user', expression: "request.userInfo.username == 'tester'" }]
  })])
  t.equal((await createCm(e, 'exempt', { exempt: 'true' })).object.metadata.name, 'exempt')
  t.equal((await createCm(e, 'other')).code, 403)
  t.equal(server.reviews.length, 1, 'called only for the one that matched')
})

t.test('failurePolicy Fail refuses writes while the webhook is down; Ignore lets them through', async t => {
  const e = await env(t)
  const server = await startWebhookServer(ca, () => ({ allowed: true }))
  await server.close()
  await configure(e, 'Validating', 'down', [
    hook('fail.example.com', server, { objectSelector: { matchLabels: { policy: 'fail' } } }),
    hook('ignore.example.com', server, { failurePolicy: 'Ignore', objectSelector: { matchLabels: { policy: 'ignore' } } })
  ])
  const err = await createCm(e, 'a', { policy: 'fail' })
  t.equal(err.code, 500)
  t.match(err.message, /^Internal error occurred: failed calling webhook "fail\.example\.com": failed to call webhook: Post "https:\/\/127\.0\.0\.1:\d+\/": /)
  t.equal((await createCm(e, 'b', { policy: 'ignore' })).object.metadata.name, 'b')
})

t.test('a webhook slower than timeoutSeconds fails the call', async t => {
  const e = await env(t)
  const server = await startWebhookServer(ca, async () => { await new Promise(resolve => setTimeout(resolve, 2500)); return { allowed: true } })
  t.teardown(() => server.close())
  await configure(e, 'Validating', 'slow', [hook('slow.example.com', server, { timeoutSeconds: 1 })])
  const started = Date.now()
  const err = await createCm(e, 'a')
  t.equal(err.code, 500)
  t.match(err.message, /failed calling webhook "slow\.example\.com": failed to call webhook: Post ".*": context deadline exceeded/)
  t.ok(Date.now() - started < 2400, 'did not wait for the answer')
})

t.test('dry run: sent as dryRun to a webhook without side effects, refused for one with side effects', async t => {
  const e = await env(t)
  const server = await startWebhookServer(ca, () => ({ allowed: true }))
  t.teardown(() => server.close())
  await configure(e, 'Validating', 'dry', [hook('none.example.com', server, { sideEffects: 'NoneOnDryRun' })])
  t.equal((await createCm(e, 'a', {}, ctx('Strict', true))).object.metadata.name, 'a')
  t.equal(server.reviews[0].request.dryRun, true)
  t.same(server.reviews[0].request.options.dryRun, ['All'])
  // sideEffects Some is refused by v1 validation; a configuration stored by an older version may still carry it.
  const stored = { apiVersion: 'admissionregistration.orch.io/v1', kind: 'ValidatingWebhookConfiguration',
    metadata: { name: 'legacy', uid: 'u-legacy', creationTimestamp: new Date().toISOString() },
    webhooks: [{ ...hook('some.example.com', server, { sideEffects: 'Some' }), failurePolicy: 'Fail', matchPolicy: 'Equivalent', namespaceSelector: {}, objectSelector: {}, timeoutSeconds: 10 }] }
  await e.fx.store.create('/admissionregistration.orch.io/validatingwebhookconfigurations/legacy',
    rev => Buffer.from(JSON.stringify({ ...stored, metadata: { ...stored.metadata, resourceVersion: String(rev) } })))
  await eventually(() => e.validating.webhookNames().includes('some.example.com'))
  const err = await createCm(e, 'b', {}, ctx('Strict', true))
  t.equal(err.code, 400)
  t.equal(err.message, 'admission webhook "some.example.com" does not support dry run')
  t.equal((await createCm(e, 'c')).object.metadata.name, 'c', 'a write that is not a dry run is sent')
})

t.test('namespaceSelector matches the namespace labels; objectSelector the object labels', async t => {
  const e = await env(t)
  const server = await startWebhookServer(ca, () => ({ allowed: false, status: { message: 'selected' } }))
  t.teardown(() => server.close())
  const nss = e.fx.registry.handler('', 'v1', 'namespaces')!
  await nss.create(ctx(), '', body({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'guarded', labels: { guard: 'on' } } }))
  await nss.create(ctx(), '', body({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'open' } }))
  await configure(e, 'Validating', 'sel', [
    hook('ns.example.com', server, { namespaceSelector: { matchExpressions: [{ key: 'guard', operator: 'In', values: ['on'] }] } }),
    hook('obj.example.com', server, { namespaceSelector: { matchLabels: { never: 'x' } }, objectSelector: { matchLabels: { watched: 'yes' } } })
  ])
  t.match((await createCm(e, 'a', {}, ctx(), 'guarded')).message, /"ns\.example\.com" denied the request: selected/)
  t.equal((await createCm(e, 'a', {}, ctx(), 'open')).object.metadata.name, 'a')
  t.equal((await createCm(e, 'b', { watched: 'yes' }, ctx(), 'open')).object.metadata.name, 'b', 'both selectors must match')
})

t.test('validating webhooks are called in parallel; a DELETE is sent with the stored object as oldObject', async t => {
  const e = await env(t)
  const slow = async (): Promise<Record<string, unknown>> => { await new Promise(resolve => setTimeout(resolve, 600)); return { allowed: true } }
  const one = await startWebhookServer(ca, slow)
  const two = await startWebhookServer(ca, slow)
  t.teardown(async () => { await one.close(); await two.close() })
  const deletes = { operations: ['CREATE', 'DELETE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }
  await configure(e, 'Validating', 'par', [hook('one.example.com', one, { rules: [deletes] }), hook('two.example.com', two, { rules: [deletes] })])
  const started = Date.now()
  await createCm(e, 'a', { keep: 'me' })
  t.ok(Date.now() - started < 1100, `both answered within one delay (${Date.now() - started} ms)`)
  await e.fx.registry.handler('', 'v1', 'configmaps')!.delete(ctx(), 'default', 'a', {})
  t.match(one.reviews[1].request, { operation: 'DELETE', name: 'a', object: null, oldObject: { metadata: { labels: { keep: 'me' } } }, options: { kind: 'DeleteOptions' } })
  t.equal(one.reviews[0].request.uid, two.reviews[0].request.uid, 'one uid per request')
})

t.test('an answer for another uid, or no answer, fails the call', async t => {
  const e = await env(t)
  const server = await startWebhookServer(ca, () => ({ uid: 'someone-else', allowed: true }))
  t.teardown(() => server.close())
  await configure(e, 'Validating', 'uid', [hook('uid.example.com', server)])
  const err = await createCm(e, 'a')
  t.equal(err.code, 500)
  t.match(err.message, /failed calling webhook "uid\.example\.com": expected response\.uid="[-0-9a-f]+", got "someone-else"/)
})

t.test('match conditions may ask the authorizer about the requesting user', async t => {
  // The authorizer lets `tester` list secrets in `default` only.
  const e = await webhookEnv(t, pool, {
    authorize: async a => ({ decision: a.user.username === 'tester' && a.resource === 'secrets' && a.namespace === 'default' && a.verb === 'list' ? 'allow' : 'noOpinion', reason: '' })
  })
  const server = await startWebhookServer(ca, () => ({ allowed: false, status: { message: 'only for secret readers' } }))
  t.teardown(() => server.close())
  await configure(e, 'Validating', 'authz', [hook('authz.example.com', server, {
    matchConditions: [{ name: 'secret-readers', expression: "authorizer.group('').resource('secrets').namespace(object.metadata.namespace).check('list').allowed()" }]
  })])
  t.equal((await createCm(e, 'in-default')).code, 403, 'the user may list secrets in default: the webhook is called')
  t.equal((await createCm(e, 'in-other', {}, ctx(), 'kube-public')).object.metadata.name, 'in-other', 'not in kube-public: skipped')
  t.equal(server.reviews.length, 1)
})

t.test('a configuration whose match condition misuses authorizer is refused at create', async t => {
  const e = await env(t)
  const server = await startWebhookServer(ca, () => ({ allowed: true }))
  t.teardown(() => server.close())
  const err = await configure(e, 'Validating', 'bad-authz', [hook('bad.example.com', server, {
    matchConditions: [{ name: 'wrong', expression: "authorizer.group('').resource('secrets').check('list')" }]
  })]).catch(x => x)
  t.equal(err.code, 422)
  t.match(err.message, /matchConditions\[0\]\.expression/)
})

t.test('a validating webhook with a CONNECT rule on pods/exec gets the PodExecOptions, no operation options, and can deny the exec', async t => {
  const e = await env(t)
  const server = await startWebhookServer(ca, r => r.request.object.command[0] === 'sh'
    ? { allowed: false, status: { code: 429, reason: 'TooManyRequests', message: 'no shells, please' } }
    : { allowed: true })
  t.teardown(() => server.close())
  await configure(e, 'Validating', 'exec', [hook('exec.example.com', server, { rules: [{ operations: ['CONNECT'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods/exec'] }] })])
  const target = { group: '', version: 'v1', resource: 'pods', subresource: 'exec', namespace: 'default', name: 'web' }
  const err = await e.fx.registry.admitConnect(ctx(), target, { kind: 'PodExecOptions', apiVersion: 'v1', stdin: true, tty: true, container: 'c', command: ['sh'] }).catch(x => x)
  t.equal(err.code, 429)
  t.equal(err.message, 'admission webhook "exec.example.com" denied the request: no shells, please')
  const req = server.reviews[0].request
  t.match(req, { operation: 'CONNECT', namespace: 'default', name: 'web', subResource: 'exec', requestSubResource: 'exec',
    kind: { group: '', version: 'v1', kind: 'PodExecOptions' }, resource: { group: '', version: 'v1', resource: 'pods' },
    object: { kind: 'PodExecOptions', apiVersion: 'v1', stdin: true, tty: true, container: 'c', command: ['sh'] }, oldObject: null })
  t.notOk('options' in req, 'a connect has no operation options')
  await e.fx.registry.admitConnect(ctx(), target, { kind: 'PodExecOptions', apiVersion: 'v1', stdout: true, command: ['ls'] })
  await e.fx.registry.admitConnect(ctx(), { ...target, subresource: 'attach' }, { kind: 'PodAttachOptions', apiVersion: 'v1', stdout: true })
  t.equal(server.reviews.length, 2, 'pods/attach does not match the rule')
})
