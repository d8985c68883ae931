// ValidatingAdmissionPolicy over real HTTP, driven by the real kubectl: Deny with a messageExpression, Warn as a
// `Warning:` line, params from a ConfigMap, and a cost bomb stopped by its budget while other requests are answered.

import t from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startTestApiServer } from './api-server-fixture.js'
import { runKubectl, type KubectlRun } from './orch-process.js'
import { createSandboxPool } from '../sandbox/pool.js'
import type { WriteAdmission } from '../apiserver/registry/admission.js'
import { createValidatingAdmissionPolicyPlugin } from '../apiserver/admission/vap/plugin.js'

const dir = mkdtempSync(join(tmpdir(), 'orch-vap-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))
const pool = createSandboxPool({ size: 1 })
t.teardown(async () => await pool.close())

const holder: { a?: WriteAdmission } = {}
const server = await startTestApiServer(t, () => ({}), { policyExpressions: pool, admission: [{ admit: async a => await holder.a?.admit(a) }] })
const plugin = createValidatingAdmissionPolicyPlugin({ registry: server.registry, evaluator: pool })
holder.a = plugin.validating
await plugin.start()
t.teardown(() => plugin.stop())

const kubeconfig = join(dir, 'kubeconfig')
writeFileSync(kubeconfig, JSON.stringify({
  apiVersion: 'v1', kind: 'Config', 'current-context': 'c',
  clusters: [{ name: 'c', cluster: { server: server.url } }], users: [{ name: 'u', user: {} }], contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }]
}))
const kubectl = async (...args: string[]): Promise<KubectlRun> => await runKubectl(kubeconfig, join(dir, 'cache'), args)
let files = 0
async function apply (yaml: string): Promise<void> {
  const f = join(dir, `f${files++}.yaml`)
  writeFileSync(f, yaml)
  const r = await kubectl('apply', '--validate=false', '-f', f)
  if (r.code !== 0) throw new Error(r.stderr)
}

const MATCH_CM = `  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: ["v1"]
      operations: ["CREATE", "UPDATE"]
      resources: ["configmaps"]`
const policy = (name: string, body: string): string => `apiVersion: admissionregistration.k8s.io/v1beta1
kind: ValidatingAdmissionPolicy
metadata:
  name: ${name}
spec:
${body}
---
apiVersion: admissionregistration.k8s.io/v1beta1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: ${name}-binding
spec:
  policyName: ${name}
`

/** Retries `run` until its output shows the policy (the plugin's watch sees new bindings shortly after they are written). */
async function until (run: () => Promise<KubectlRun>, ok: (r: KubectlRun) => boolean): Promise<KubectlRun> {
  for (let i = 0; ; i++) {
    const r = await run()
    if (ok(r) || i === 50) return r
    await new Promise(resolve => setTimeout(resolve, 100))
  }
}

t.test('kubectl gets the denial with the messageExpression', async t => {
  await apply(policy('max-keys', `${MATCH_CM}
  variables:
  - name: keys
    expression: "has(object.data) ? size(object.data) : 0"
  validations:
  - expression: variables.keys <= 2
    messageExpression: "'too many keys: ' + string(variables.keys)"`) + '  validationActions: [Deny]\n')
  let i = 0
  const r = await until(async () => await kubectl('create', 'configmap', `big${i++}`, '--from-literal=a=1', '--from-literal=b=2', '--from-literal=c=3'), r => r.code !== 0)
  t.not(r.code, 0)
  t.match(r.stderr, /configmaps "big\d+" is (invalid|forbidden): .*ValidatingAdmissionPolicy 'max-keys' with binding 'max-keys-binding' denied request: too many keys: 3/)
  t.equal((await kubectl('create', 'configmap', 'small', '--from-literal=a=1')).code, 0)
})

t.test('Warn shows a Warning: line and admits the write', async t => {
  await apply(policy('named', `${MATCH_CM}
  validations:
  - expression: "!object.metadata.name.startsWith('tmp-')"
    message: temporary names are discouraged`) + '  validationActions: [Warn]\n')
  let i = 0
  const r = await until(async () => await kubectl('create', 'configmap', `tmp-${i++}`), r => r.stderr.includes('Warning:'))
  t.equal(r.code, 0)
  t.match(r.stderr, /Warning: Validation failed for ValidatingAdmissionPolicy 'named' with binding 'named-binding': temporary names are discouraged/)
})

t.test('params come from a ConfigMap', async t => {
  await apply(`apiVersion: v1
kind: ConfigMap
metadata:
  name: replica-limit
  namespace: default
data:
  max: "2"
`)
  await apply(policy('replicas', `  paramKind:
    apiVersion: v1
    kind: ConfigMap
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE", "UPDATE"]
      resources: ["deployments"]
  validations:
  - expression: object.spec.replicas <= int(params.data.max)
    messageExpression: "'at most ' + params.data.max + ' replicas'"`) + `  validationActions: [Deny]
  paramRef:
    name: replica-limit
    parameterNotFoundAction: Deny
`)
  let i = 0
  const r = await until(async () => await kubectl('create', 'deployment', `web${i++}`, '--image=nginx', '--replicas=3'), r => r.code !== 0)
  t.match(r.stderr, /ValidatingAdmissionPolicy 'replicas' with binding 'replicas-binding' denied request: at most 2 replicas/)
  t.equal((await kubectl('create', 'deployment', 'small-web', '--image=nginx', '--replicas=2')).code, 0)
})

t.test('a cost bomb is stopped by its budget while other requests are answered', async t => {
  await apply(policy('bomb', `${MATCH_CM}
  validations:
  - expression: "[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, !object.data.s.contains('b'))))"`) + '  validationActions: [Deny]\n')
  const big = join(dir, 's')
  writeFileSync(big, 'a'.repeat(200_000))
  let i = 0
  const bomb = until(async () => await kubectl('create', 'configmap', `bomb${i++}`, `--from-file=s=${big}`), r => r.code !== 0)
  const r = await bomb
  // Bombs posted straight over HTTP while GETs run: each GET is answered while the pool's thread spends the budget.
  const post = async (n: number): Promise<number> => (await fetch(`${server.url}/api/v1/namespaces/default/configmaps`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `raw-bomb-${n}` }, data: { s: 'a'.repeat(200_000) } })
  })).status
  const bombs = Promise.all([0, 1, 2, 3, 4].map(post))
  for (let k = 0; k < 5; k++) {
    const started = Date.now()
    t.equal((await fetch(`${server.url}/api/v1/namespaces/default`)).status, 200)
    t.ok(Date.now() - started < 500, 'a GET during the bombs is answered promptly')
  }
  t.same(await bombs, [422, 422, 422, 422, 422])
  t.match(r.stderr, /ValidatingAdmissionPolicy 'bomb' with binding 'bomb-binding' denied request: expression '.*' resulted in error: operation cancelled: actual cost limit exceeded/)
})
