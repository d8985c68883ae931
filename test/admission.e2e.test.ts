// Admission on `orch up` through the real kubectl: PodSecurity enforce and warn labels, a mutating and a validating
// webhook served by the test over HTTPS, a quota, and a warning that reaches kubectl with a refusal.

import t from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runKubectl, startOrch } from './orch-process.js'
import { patchAnswer, startWebhookServer, testCa } from '../apiserver/admission/webhooks/testing.js'

const dir = mkdtempSync(join(tmpdir(), 'orch-admission-'))
const orch = await startOrch(join(dir, 'data'), 60_000, ['--orchlet=false'])
t.teardown(async () => { await orch.stop(); rmSync(dir, { recursive: true, force: true }) })
const kubectl = (...args: string[]): ReturnType<typeof runKubectl> => runKubectl(orch.kubeconfig, join(dir, 'cache'), args)

async function ok (...args: string[]): Promise<string> {
  const r = await kubectl(...args)
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${r.code}): ${r.stderr}`)
  return r.stdout
}

function apply (name: string, yaml: string): Promise<string> {
  const p = join(dir, `${name}.yaml`)
  writeFileSync(p, yaml)
  return ok('apply', '-f', p)
}

const privileged = (name: string, ns: string): string => `apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: ${ns}}
spec:
  containers: [{name: c, image: busybox, securityContext: {privileged: true}}]
`

t.test('PodSecurity: enforce=restricted refuses a privileged pod with Kubernetes\' message; warn only warns', async t => {
  await ok('create', 'namespace', 'locked')
  await ok('label', 'namespace', 'locked', 'pod-security.kubernetes.io/enforce=restricted')
  writeFileSync(join(dir, 'p1.yaml'), privileged('root', 'locked'))
  const refused = await kubectl('create', '-f', join(dir, 'p1.yaml'))
  t.equal(refused.code, 1)
  t.match(refused.stderr, 'Error from server (Forbidden): error when creating')
  t.match(refused.stderr, 'pods "root" is forbidden: violates PodSecurity "restricted:latest": privileged (container "c" must not set securityContext.privileged=true)')
  await ok('create', 'namespace', 'watched')
  await ok('label', 'namespace', 'watched', 'pod-security.orch.io/warn=baseline')
  writeFileSync(join(dir, 'p2.yaml'), privileged('root', 'watched'))
  const warned = await kubectl('create', '-f', join(dir, 'p2.yaml'))
  t.equal(warned.code, 0, warned.stderr)
  t.match(warned.stderr, 'Warning: would violate PodSecurity "baseline:latest": privileged')
})

t.test('webhooks over HTTPS: a mutating one labels ConfigMaps by JSONPatch, a validating one refuses with its message', async t => {
  const ca = await testCa()
  const server = await startWebhookServer(ca, (review, path) => {
    const labels = review.request.object?.metadata?.labels ?? {}
    if (path === '/mutate') return patchAnswer([{ op: 'add', path: '/metadata/labels', value: { ...labels, stamped: 'by-webhook' } }])
    if (labels.forbidden === 'yes') return { allowed: false, status: { code: 403, message: 'forbidden ConfigMaps are not welcome' }, warnings: ['checked by the test webhook'] }
    return { allowed: true }
  })
  t.teardown(() => server.close())
  const hook = (kind: string, name: string, path: string): string => `apiVersion: admissionregistration.k8s.io/v1
kind: ${kind}
metadata: {name: ${name}}
webhooks:
- name: ${name}.test.orch.io
  clientConfig: {url: "${server.url}${path.slice(1)}", caBundle: ${server.caBundle}}
  rules: [{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [configmaps]}]
  namespaceSelector: {matchLabels: {hooked: "yes"}}
  sideEffects: None
  admissionReviewVersions: [v1]
`
  await apply('mutating', hook('MutatingWebhookConfiguration', 'stamp', '/mutate'))
  await apply('validating', hook('ValidatingWebhookConfiguration', 'gate', '/validate'))
  await ok('create', 'namespace', 'hooked')
  await ok('label', 'namespace', 'hooked', 'hooked=yes')
  const made = async (): Promise<string> => {
    await ok('create', 'configmap', `c${Date.now()}`, '-n', 'hooked', '--from-literal=a=b', '-o', 'name').then(async n => await ok('delete', n.trim(), '-n', 'hooked'))
    return 'ok'
  }
  // The dispatcher picks new configurations up from its watch: wait until the mutating one acts.
  for (let i = 0; i < 50; i++) {
    await made()
    if (server.reviews.length > 0) break
    await new Promise(resolve => setTimeout(resolve, 100))
  }
  await ok('create', 'configmap', 'plain', '-n', 'hooked', '--from-literal=a=b')
  t.equal(JSON.parse(await ok('get', 'configmap', 'plain', '-n', 'hooked', '-o', 'json')).metadata.labels.stamped, 'by-webhook', 'mutated')
  await ok('create', 'configmap', 'elsewhere', '--from-literal=a=b')
  t.notOk(JSON.parse(await ok('get', 'configmap', 'elsewhere', '-o', 'json')).metadata.labels?.stamped, 'the namespace selector leaves other namespaces alone')
  writeFileSync(join(dir, 'bad.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bad, namespace: hooked, labels: {forbidden: "yes"}}\n')
  const refused = await kubectl('create', '-f', join(dir, 'bad.yaml'))
  t.equal(refused.code, 1)
  t.match(refused.stderr, 'admission webhook "gate.test.orch.io" denied the request: forbidden ConfigMaps are not welcome')
  t.match(refused.stderr, 'Warning: checked by the test webhook', 'the webhook\'s warning comes with the refusal')
})

t.test('a quota of one pod refuses the second with exceeded quota', async t => {
  await ok('create', 'namespace', 'small')
  await ok('create', 'quota', 'one-pod', '--hard=pods=1', '-n', 'small')
  await ok('run', 'first', '--image=busybox', '-n', 'small')
  const second = await kubectl('run', 'second', '--image=busybox', '-n', 'small')
  t.equal(second.code, 1)
  t.match(second.stderr, 'pods "second" is forbidden: exceeded quota: one-pod, requested: pods=1, used: pods=1, limited: pods=1')
})

t.test('a validating webhook with a CONNECT rule on pods/exec refuses kubectl exec before any orchlet is reached', async t => {
  const ca = await testCa()
  const server = await startWebhookServer(ca, review => review.request.operation === 'CONNECT' && review.request.object?.command?.[0] === 'sh'
    ? { allowed: false, status: { code: 403, reason: 'Forbidden', message: 'interactive shells are not allowed' } }
    : { allowed: true })
  t.teardown(() => server.close())
  await apply('exec-gate', `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: exec-gate}
webhooks:
- name: exec-gate.test.orch.io
  clientConfig: {url: "${server.url}", caBundle: ${server.caBundle}}
  rules: [{operations: [CONNECT], apiGroups: [""], apiVersions: [v1], resources: [pods/exec]}]
  failurePolicy: Fail
  sideEffects: None
  admissionReviewVersions: [v1]
`)
  // No orchlet runs here and the pod is never scheduled: without admission first, exec would answer that the pod has
  // no host; the webhook's refusal shows admission ran before the pod was looked up or any node dialed.
  await ok('run', 'shell', '--image=busybox', '--', 'sleep', '3600')
  let refused: Awaited<ReturnType<typeof kubectl>> | undefined
  for (let i = 0; i < 50; i++) {
    refused = await kubectl('exec', 'shell', '--', 'sh', '-c', 'id')
    if (server.reviews.length > 0) break
    await new Promise(resolve => setTimeout(resolve, 100))
  }
  t.equal(refused!.code, 1)
  t.match(refused!.stderr, 'admission webhook "exec-gate.test.orch.io" denied the request: interactive shells are not allowed')
  t.notMatch(refused!.stderr, 'does not have a host assigned')
  const req = server.reviews[0].request
  t.match(req, { operation: 'CONNECT', name: 'shell', namespace: 'default', subResource: 'exec',
    kind: { group: '', version: 'v1', kind: 'PodExecOptions' }, resource: { group: '', version: 'v1', resource: 'pods' },
    object: { kind: 'PodExecOptions', apiVersion: 'v1', command: ['sh', '-c', 'id'], stdout: true, stderr: true } })
  const allowed = await kubectl('exec', 'shell', '--', 'ls')
  t.match(allowed.stderr, 'does not have a host assigned', 'an allowed exec goes on to the pod, which has no node')
})
