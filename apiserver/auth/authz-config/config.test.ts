// AuthorizationConfiguration: strict decoding and each validation rule, with Kubernetes' field paths and wording.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { decodeAuthorizationConfiguration, validateAuthorizationConfiguration, type AuthorizationConfiguration, type WebhookConfiguration } from './config.js'

const dir = mkdtempSync(join(tmpdir(), 'authz-config-'))
const kubeconfig = join(dir, 'webhook.kubeconfig')
writeFileSync(kubeconfig, 'apiVersion: v1\nkind: Config\nclusters: [{name: w, cluster: {server: "https://127.0.0.1:1/authorize"}}]\n')
t.teardown(() => rmSync(dir, { recursive: true, force: true }))

const webhook = (over: Partial<WebhookConfiguration> = {}): WebhookConfiguration => ({
  authorizedTTL: 300_000, unauthorizedTTL: 30_000, timeout: 3000, subjectAccessReviewVersion: 'v1', matchConditionSubjectAccessReviewVersion: 'v1',
  failurePolicy: 'NoOpinion', connectionInfo: { type: 'KubeConfigFile', kubeConfigFile: kubeconfig }, matchConditions: [], ...over
})
const messages = (c: AuthorizationConfiguration): string[] => validateAuthorizationConfiguration(c).map(e => `${e.field}: ${e.message}`)
const oneWebhook = (over: Partial<WebhookConfiguration>): string[] => messages({ authorizers: [{ type: 'Webhook', name: 'w', webhook: webhook(over) }] })

t.test('decoding reads durations and refuses unknown fields and other kinds', async (t) => {
  const c = decodeAuthorizationConfiguration(`apiVersion: apiserver.config.k8s.io/v1alpha1
kind: AuthorizationConfiguration
authorizers:
- type: Node
  name: node
- type: Webhook
  name: my-webhook
  webhook:
    timeout: 3s
    authorizedTTL: 5m
    unauthorizedTTL: 30s
    subjectAccessReviewVersion: v1
    matchConditionSubjectAccessReviewVersion: v1
    failurePolicy: Deny
    connectionInfo: {type: KubeConfigFile, kubeConfigFile: ${kubeconfig}}
    matchConditions:
    - expression: has(request.resourceAttributes)
`)
  t.same(c.authorizers[0], { type: 'Node', name: 'node' })
  t.equal(c.authorizers[1].webhook?.timeout, 3000)
  t.equal(c.authorizers[1].webhook?.authorizedTTL, 300_000)
  t.same(messages(c), [])
  t.throws(() => decodeAuthorizationConfiguration('apiVersion: apiserver.config.k8s.io/v1alpha1\nkind: AuthorizationConfiguration\nauthorizers: [{type: RBAC, name: rbac, mode: x}]\n'),
    { message: 'strict decoding error: unknown field "authorizers[0].mode"' })
  t.throws(() => decodeAuthorizationConfiguration('apiVersion: apiserver.config.k8s.io/v1alpha1\nkind: AuthorizationConfiguration\nauthorizers: [{type: Webhook, name: w, webhook: {timeout: 3 seconds}}]\n'),
    { message: 'time: invalid duration "3 seconds"' })
  t.throws(() => decodeAuthorizationConfiguration('apiVersion: apiserver.orch.io/v1alpha1\nkind: AuthenticationConfiguration\n'), { message: /no kind "AuthenticationConfiguration"/ })
})

t.test('authorizers: at least one, known types, only Webhook repeated', async (t) => {
  t.same(messages({ authorizers: [] }), ['authorizers: Required value: at least one authorization mode must be defined'])
  t.same(messages({ authorizers: [{ type: '', name: 'a' }] }), ['authorizers[0].type: Required value'])
  t.same(messages({ authorizers: [{ type: 'ABAC', name: 'a' }] }), ['authorizers[0].type: Unsupported value: "ABAC": supported values: "AlwaysAllow", "AlwaysDeny", "Node", "RBAC", "Webhook"'])
  t.same(messages({ authorizers: [{ type: 'RBAC', name: 'a' }, { type: 'RBAC', name: 'b' }] }), ['authorizers[1].type: Duplicate value: "RBAC"'])
  t.same(messages({ authorizers: [{ type: 'Webhook', name: 'a', webhook: webhook() }, { type: 'Webhook', name: 'b', webhook: webhook() }] }), [])
  t.same(messages({ authorizers: [{ type: 'AlwaysAllow', name: 'allow' }, { type: 'AlwaysDeny', name: 'deny' }] }), [])
})

t.test('names: required, unique, DNS-1123 labels', async (t) => {
  t.same(messages({ authorizers: [{ type: 'RBAC', name: '' }] }), ['authorizers[0].name: Required value'])
  t.same(messages({ authorizers: [{ type: 'RBAC', name: 'x' }, { type: 'Node', name: 'x' }] }), ['authorizers[1].name: Duplicate value: "x"'])
  t.match(messages({ authorizers: [{ type: 'RBAC', name: 'My.Rbac' }] })[0], /^authorizers\[0\]\.name: Invalid value: "My\.Rbac": authorizer name is invalid: a lowercase RFC 1123 label must consist of/)
})

t.test('webhook: required for type Webhook, refused for other types', async (t) => {
  t.same(messages({ authorizers: [{ type: 'Webhook', name: 'w' }] }), ['authorizers[0].webhook: Required value: required when type=Webhook'])
  t.same(messages({ authorizers: [{ type: 'RBAC', name: 'r', webhook: webhook() }] }), ['authorizers[0].webhook: Invalid value: "non-null": may only be specified when type=Webhook'])
})

t.test('webhook durations: required, positive, timeout at most 30s', async (t) => {
  t.same(oneWebhook({ timeout: 0, authorizedTTL: 0, unauthorizedTTL: 0 }), ['authorizers[0].webhook.timeout: Required value', 'authorizers[0].webhook.authorizedTTL: Required value', 'authorizers[0].webhook.unauthorizedTTL: Required value'])
  t.same(oneWebhook({ timeout: 31_000 }), ['authorizers[0].webhook.timeout: Invalid value: "31s": must be > 0s and <= 30s'])
  t.same(oneWebhook({ timeout: -1000 }), ['authorizers[0].webhook.timeout: Invalid value: "-1s": must be > 0s and <= 30s'])
  t.same(oneWebhook({ authorizedTTL: -60_000 }), ['authorizers[0].webhook.authorizedTTL: Invalid value: "-1m0s": must be > 0s'])
})

t.test('webhook versions and failure policy', async (t) => {
  t.same(oneWebhook({ subjectAccessReviewVersion: '' }), ['authorizers[0].webhook.subjectAccessReviewVersion: Required value'])
  t.same(oneWebhook({ subjectAccessReviewVersion: 'v2' }), ['authorizers[0].webhook.subjectAccessReviewVersion: Unsupported value: "v2": supported values: "v1", "v1beta1"'])
  t.same(oneWebhook({ subjectAccessReviewVersion: 'v1beta1' }), [])
  t.same(oneWebhook({ matchConditionSubjectAccessReviewVersion: '', matchConditions: [{ expression: 'true' }] }), ['authorizers[0].webhook.matchConditionSubjectAccessReviewVersion: Required value: required if match conditions are specified'])
  t.same(oneWebhook({ matchConditionSubjectAccessReviewVersion: '' }), [])
  t.same(oneWebhook({ matchConditionSubjectAccessReviewVersion: 'v1beta1' }), ['authorizers[0].webhook.matchConditionSubjectAccessReviewVersion: Unsupported value: "v1beta1": supported values: "v1"'])
  t.same(oneWebhook({ failurePolicy: '' }), ['authorizers[0].webhook.failurePolicy: Required value'])
  t.same(oneWebhook({ failurePolicy: 'Allow' }), ['authorizers[0].webhook.failurePolicy: Unsupported value: "Allow": supported values: "NoOpinion", "Deny"'])
})

t.test('connectionInfo: type, and an absolute path to a regular kubeconfig file', async (t) => {
  t.same(oneWebhook({ connectionInfo: { type: '' } }), ['authorizers[0].webhook.connectionInfo.type: Required value'])
  t.same(oneWebhook({ connectionInfo: { type: 'Url' } }), ['authorizers[0].webhook.connectionInfo.type: Unsupported value: "Url": supported values: "InClusterConfig", "KubeConfigFile"'])
  t.same(oneWebhook({ connectionInfo: { type: 'InClusterConfig', kubeConfigFile: kubeconfig } }), [`authorizers[0].webhook.connectionInfo.kubeConfigFile: Invalid value: "${kubeconfig}": can only be set when type=KubeConfigFile`])
  t.same(oneWebhook({ connectionInfo: { type: 'KubeConfigFile' } }), ['authorizers[0].webhook.connectionInfo.kubeConfigFile: Required value'])
  t.same(oneWebhook({ connectionInfo: { type: 'KubeConfigFile', kubeConfigFile: 'relative.kubeconfig' } }), ['authorizers[0].webhook.connectionInfo.kubeConfigFile: Invalid value: "relative.kubeconfig": must be an absolute path'])
  t.same(oneWebhook({ connectionInfo: { type: 'KubeConfigFile', kubeConfigFile: dir } }), [`authorizers[0].webhook.connectionInfo.kubeConfigFile: Invalid value: "${dir}": must be a regular file`])
  const missing = join(dir, 'missing')
  t.same(oneWebhook({ connectionInfo: { type: 'KubeConfigFile', kubeConfigFile: missing } }), [`authorizers[0].webhook.connectionInfo.kubeConfigFile: Invalid value: "${missing}": error loading file: stat ${missing}: no such file or directory`])
})

t.test('matchConditions: at most 64, expressions required and unique', async (t) => {
  const many = Array.from({ length: 65 }, (_, i) => ({ expression: `request.user == "u${i}"` }))
  t.same(oneWebhook({ matchConditions: many }), ['authorizers[0].webhook.matchConditions: Too many: 65: must have at most 64 items'])
  t.same(oneWebhook({ matchConditions: [{ expression: '  ' }] }), ['authorizers[0].webhook.matchConditions[0].expression: Required value'])
  t.same(oneWebhook({ matchConditions: [{ expression: 'true' }, { expression: 'true' }] }), ['authorizers[0].webhook.matchConditions[1].expression: Duplicate value: "true"'])
})
