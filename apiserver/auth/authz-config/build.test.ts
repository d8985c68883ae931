// Configured authorizers against a webhook served by this test over HTTPS with client certificates: decisions,
// TTL caching, failure policy, match conditions, SubjectAccessReview versions.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { startWebhook, type Answer } from '../testing/webhook-server.js'
import { createSandboxPool } from '../../../sandbox/pool.js'
import { nonResourceAttributes, resourceAttributes, type UserInfo } from '../types.js'
import { buildConfiguredAuthorizer, loadAuthorizationConfigFile } from './build.js'
import type { AuthorizationConfiguration, WebhookConfiguration } from './config.js'

const alice: UserInfo = { username: 'alice', groups: ['dev', 'system:authenticated'], uid: 'u-1', extra: { 'example.org/team': ['blue'] } }
const getPods = (user = alice, namespace = 'team-a') => resourceAttributes(user, { verb: 'get', resource: 'pods', namespace, apiVersion: 'v1' })

t.test('webhook authorizer over HTTPS', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'authz-webhook-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const hook = await startWebhook(dir)
  t.teardown(() => { hook.server.closeAllConnections(); hook.server.close() })
  const pool = createSandboxPool({ size: 1 })
  t.teardown(() => pool.close())
  let clock = 1_000_000
  const failures: string[] = []
  const noRetry = { initialMs: 0, factor: 1, jitter: 0, steps: 1 }
  const webhook = (over: Partial<WebhookConfiguration> = {}): WebhookConfiguration => ({
    authorizedTTL: 60_000, unauthorizedTTL: 10_000, timeout: 2000, subjectAccessReviewVersion: 'v1', matchConditionSubjectAccessReviewVersion: 'v1',
    failurePolicy: 'NoOpinion', connectionInfo: { type: 'KubeConfigFile', kubeConfigFile: hook.kubeconfig }, matchConditions: [], ...over
  })
  const build = async (authorizers: AuthorizationConfiguration['authorizers']) => {
    const b = await buildConfiguredAuthorizer({ authorizers }, { evaluator: pool, factories: {}, now: () => clock, onWebhookError: (name, msg) => failures.push(`${name}: ${msg}`), webhookRetryBackoff: noRetry })
    t.teardown(() => b.close())
    return b
  }

  await t.test('the webhook decides and its answers are cached for their TTLs', async (t) => {
    const b = await build([{ type: 'Webhook', name: 'hook', webhook: webhook() }, { type: 'AlwaysDeny', name: 'deny' }])
    hook.setAnswer(body => ({ body: { status: { allowed: body.spec.user === 'alice', reason: body.spec.user === 'alice' ? 'alice may' : 'no opinion here' } } }))
    hook.seen.length = 0
    t.same(await b.authorizer.authorize(getPods()), { decision: 'allow', reason: 'alice may' })
    t.same(hook.seen[0].body, {
      apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', metadata: { creationTimestamp: null }, status: { allowed: false },
      spec: { resourceAttributes: { namespace: 'team-a', verb: 'get', version: 'v1', resource: 'pods' }, user: 'alice', groups: ['dev', 'system:authenticated'], extra: { 'example.org/team': ['blue'] }, uid: 'u-1' }
    })
    t.equal(hook.seen[0].clientCN, 'orch-apiserver', 'the client certificate of the kubeconfig is presented')
    await b.authorizer.authorize(getPods())
    t.equal(hook.seen.length, 1, 'an allowed answer is cached')
    clock += 61_000
    await b.authorizer.authorize(getPods())
    t.equal(hook.seen.length, 2, 'and asked again after authorizedTTL')

    const bob = { username: 'bob', groups: [] }
    t.same(await b.authorizer.authorize(getPods(bob)), { decision: 'deny', reason: 'Everything is forbidden.' }, 'no opinion lets the next authorizer decide')
    await b.authorizer.authorize(getPods(bob))
    t.equal(hook.seen.length, 3, 'an unauthorized answer is cached')
    clock += 11_000
    await b.authorizer.authorize(getPods(bob))
    t.equal(hook.seen.length, 4, 'for unauthorizedTTL')
    hook.setAnswer(() => ({ body: { status: { allowed: false, denied: true, reason: 'explicitly denied' } } }))
    t.same(await b.authorizer.authorize(nonResourceAttributes(bob, 'get', '/metrics')), { decision: 'deny', reason: 'explicitly denied' })
    t.same(hook.seen.at(-1)?.body.spec, { nonResourceAttributes: { path: '/metrics', verb: 'get' }, user: 'bob' })
  })

  await t.test('system:masters is allowed without asking the webhook', async (t) => {
    const b = await build([{ type: 'Webhook', name: 'hook', webhook: webhook() }])
    hook.seen.length = 0
    t.equal((await b.authorizer.authorize(getPods({ username: 'root', groups: ['system:masters'] }))).decision, 'allow')
    t.equal(hook.seen.length, 0)
  })

  await t.test('failures follow the failure policy and are not cached', async (t) => {
    const open = await build([{ type: 'Webhook', name: 'lenient', webhook: webhook({ timeout: 300 }) }, { type: 'AlwaysAllow', name: 'allow' }])
    const closed = await build([{ type: 'Webhook', name: 'strict', webhook: webhook({ timeout: 300, failurePolicy: 'Deny' }) }, { type: 'AlwaysAllow', name: 'allow' }])
    const cases: Array<[string, Answer, RegExp]> = [
      ['a server error', () => ({ status: 500, raw: 'boom' }), /answered status 500/],
      ['a timeout', () => ({ delayMs: 1500 }), /did not answer within 300ms/],
      ['malformed JSON', () => ({ raw: '{not json' }), /malformed JSON/],
      ['another kind', () => ({ raw: JSON.stringify({ apiVersion: 'v1', kind: 'Status' }) }), /not SubjectAccessReview/],
      ['allowed and denied at once', () => ({ body: { status: { allowed: true, denied: true } } }), /both allowed and denied/],
      ['an answer over 1 MiB', () => ({ body: { status: { allowed: true, reason: 'x'.repeat(1100 * 1024) } } }), /larger than 1048576 bytes/]
    ]
    for (const [what, answer, why] of cases) {
      hook.setAnswer(answer)
      const before = hook.seen.length
      t.equal((await open.authorizer.authorize(getPods())).decision, 'allow', `${what}: NoOpinion lets the next authorizer allow`)
      failures.length = 0
      t.same(await closed.authorizer.authorize(getPods()), { decision: 'deny', reason: '' }, `${what}: Deny refuses, without showing why`)
      t.match(failures, [why], `${what}: the failure is reported for the log`)
      t.match(failures[0], /^strict: /)
      await closed.authorizer.authorize(getPods())
      t.equal(hook.seen.length, before + 3, `${what}: not cached`)
    }
  })

  await t.test('429 and 5xx answers are tried again with backoff before the failure policy applies', async (t) => {
    const b = await buildConfiguredAuthorizer({ authorizers: [{ type: 'Webhook', name: 'retrying', webhook: webhook({ failurePolicy: 'Deny' }) }] },
      { evaluator: pool, factories: {}, now: () => clock, webhookRetryBackoff: { initialMs: 10, factor: 2, jitter: 0, steps: 3 } })
    t.teardown(() => b.close())
    let n = 0
    hook.setAnswer(() => (++n <= 2 ? { status: n === 1 ? 503 : 429, raw: 'busy' } : { body: { status: { allowed: true } } }))
    hook.seen.length = 0
    t.equal((await b.authorizer.authorize(getPods({ username: 'retry-1', groups: [] }))).decision, 'allow', 'the third try succeeds')
    t.equal(hook.seen.length, 3)
    hook.setAnswer(() => ({ status: 500, raw: 'down' }))
    t.equal((await b.authorizer.authorize(getPods({ username: 'retry-2', groups: [] }))).decision, 'deny', 'after the last try the failure policy applies')
    t.equal(hook.seen.length, 6)
    hook.setAnswer(() => ({ status: 403, raw: 'no' }))
    await b.authorizer.authorize(getPods({ username: 'retry-3', groups: [] }))
    t.equal(hook.seen.length, 7, 'other statuses are not tried again')
  })

  await t.test('match conditions gate the webhook; an error follows the failure policy', async (t) => {
    const conditions = [{ expression: "request.resourceAttributes.namespace != 'kube-system'" }, { expression: "!('system:nodes' in request.groups)" }]
    const b = await build([{ type: 'Webhook', name: 'hook', webhook: webhook({ failurePolicy: 'Deny', matchConditions: conditions }) }, { type: 'AlwaysAllow', name: 'allow' }])
    hook.setAnswer(() => ({ body: { status: { allowed: false, denied: true, reason: 'webhook says no' } } }))
    hook.seen.length = 0
    t.same(await b.authorizer.authorize(getPods(alice, 'team-b')), { decision: 'deny', reason: 'webhook says no' }, 'all conditions true: the webhook decides')
    t.equal(hook.seen.length, 1)
    t.equal((await b.authorizer.authorize(getPods(alice, 'kube-system'))).decision, 'allow', 'one condition false: no opinion, the next authorizer allows')
    t.equal((await b.authorizer.authorize(getPods({ username: 'system:node:n1', groups: ['system:nodes'] }))).decision, 'allow')
    t.equal(hook.seen.length, 1, 'the webhook was not asked')
    failures.length = 0
    const err = await b.authorizer.authorize(nonResourceAttributes(alice, 'get', '/healthz'))
    t.equal(err.decision, 'deny', 'a condition that errors (no resourceAttributes) follows failurePolicy Deny')
    t.match(failures, [/^hook: match condition "request\.resourceAttributes\.namespace != 'kube-system'"/])
    t.equal(hook.seen.length, 1)
  })

  await t.test('subjectAccessReviewVersion v1beta1 sends `group` and reads the v1beta1 answer', async (t) => {
    const b = await build([{ type: 'Webhook', name: 'hook', webhook: webhook({ subjectAccessReviewVersion: 'v1beta1' }) }])
    hook.setAnswer(body => ({ body: { status: { allowed: Array.isArray(body.spec.group) && body.spec.group.includes('dev') } } }))
    hook.seen.length = 0
    t.equal((await b.authorizer.authorize(getPods())).decision, 'allow')
    t.equal(hook.seen[0].body.apiVersion, 'authorization.k8s.io/v1beta1')
    t.notOk('groups' in hook.seen[0].body.spec)
  })

  await t.test('a configuration file builds the chain; bad match conditions fail the build with the field named', async (t) => {
    const file = join(dir, 'authz.yaml')
    writeFileSync(file, `apiVersion: apiserver.config.k8s.io/v1alpha1
kind: AuthorizationConfiguration
authorizers:
- {type: RBAC, name: rbac}
- type: Webhook
  name: hook
  webhook:
    timeout: 2s
    authorizedTTL: 1m
    unauthorizedTTL: 10s
    subjectAccessReviewVersion: v1
    matchConditionSubjectAccessReviewVersion: v1
    failurePolicy: NoOpinion
    connectionInfo: {type: KubeConfigFile, kubeConfigFile: ${hook.kubeconfig}}
    matchConditions:
    - expression: request.user + 'x'
    - expression: request.nosuch == 'a'
`)
    const config = await loadAuthorizationConfigFile(file)
    const err = await buildConfiguredAuthorizer(config, { evaluator: pool, factories: {} }).then(() => new Error('built'), (e: unknown) => e as Error)
    t.match(err.message, /^invalid authorization configuration: \[/)
    t.match(err.message, 'authorizers[1].webhook.matchConditions[0].expression: Invalid value: "request.user + \'x\'": must evaluate to bool')
    t.match(err.message, 'authorizers[1].webhook.matchConditions[1].expression: Invalid value: "request.nosuch == \'a\'": compilation failed: ERROR: <input>:1:9: undefined field \'nosuch\'')
    t.match(err.message, 'authorizers[0].type: Invalid value: "RBAC": this server was started without that authorizer')

    config.authorizers[1].webhook!.matchConditions = [{ expression: "request.user == 'carol'" }]
    let rbacMade = 0
    const b = await buildConfiguredAuthorizer(config, {
      evaluator: pool,
      factories: { rbac: () => { rbacMade++; return { authorize: async (a) => a.user.username === 'dave' ? { decision: 'allow', reason: 'rbac' } : { decision: 'noOpinion', reason: '' } } } }
    })
    t.teardown(() => b.close())
    t.equal(rbacMade, 1)
    hook.setAnswer(() => ({ body: { status: { allowed: true } } }))
    t.same(await b.authorizer.authorize(getPods({ username: 'dave', groups: [] })), { decision: 'allow', reason: 'rbac' }, 'authorizers are asked in order')
    t.equal((await b.authorizer.authorize(getPods({ username: 'carol', groups: [] }))).decision, 'allow')
    t.equal((await b.authorizer.authorize(getPods({ username: 'erin', groups: [] }))).decision, 'noOpinion')
    await t.rejects(loadAuthorizationConfigFile(join(dir, 'none.yaml')), { message: `failed to load authorization configuration from file "${join(dir, 'none.yaml')}": open ${join(dir, 'none.yaml')}: no such file or directory` })
  })
})

t.test('match conditions name only fields of the SubjectAccessReview spec; string literals are not fields', async (t) => {
  const { undefinedRequestField } = await import('./build.js')
  t.equal(undefinedRequestField("request.resourceAttributes.namespace == 'request.nope' && has(request.nonResourceAttributes.path)"), undefined)
  t.equal(undefinedRequestField("'system:masters' in request.groups && request.extra['a'].size() > 0"), undefined)
  t.equal(undefinedRequestField('request.resourceAttributes.namespce == "x"'), 'ERROR: <input>:1:28: undefined field \'namespce\'\n | request.resourceAttributes.namespce == "x"\n | ...........................^')
  t.match(undefinedRequestField('request.nonResourceAttributes.resource == "x"'), /undefined field 'resource'/)
})
