// The real kubectl's server-side apply against `orch up`: create and re-apply (a no-op keeps the resourceVersion),
// conflicts with kubectl's advice, --force-conflicts, --field-manager, shared fields, migration from client-side
// apply, server-side diff and dry-run, and managed fields as kubectl shows them; kubectl 1.29 and 1.33.

import t, { type Test } from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runKubectl, startOrch, type KubectlRun, type OrchProcess } from './orch-process.js'

const dir = mkdtempSync(join(tmpdir(), 'orch-kubectl-ssa-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))

const KUBECTL_133 = '/usr/lib/google-cloud-sdk/bin/kubectl.1.33'

type Kubectl = (...args: string[]) => Promise<KubectlRun>

function manifest (name: string, replicas: number, image: string, labels: Record<string, string> = {}): string {
  const extra = Object.entries(labels).map(([k, v]) => `    ${k}: ${v}\n`).join('')
  const text = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
  namespace: default
  labels:
    app: ${name}
${extra}spec:
  replicas: ${replicas}
  selector:
    matchLabels: {app: ${name}}
  template:
    metadata:
      labels: {app: ${name}}
    spec:
      containers:
      - name: web
        image: ${image}
        ports:
        - containerPort: 8080
`
  const p = join(dir, `${name}-${replicas}-${image.replace(/[^a-z0-9]/g, '_')}-${Object.keys(labels).join('_')}.yaml`)
  writeFileSync(p, text)
  return p
}

async function jsonOf (k: Kubectl, name: string): Promise<any> {
  const r = await k('get', 'deployment', name, '-o', 'json', '--show-managed-fields')
  if (r.code !== 0) throw new Error(r.stderr)
  return JSON.parse(r.stdout)
}

// The deployment controller's own writes (the revision annotation, the status) are entries of their own, as
// kube-controller-manager's are in Kubernetes; what this test is about is the users' managers.
const managers = (obj: any): string[] => (obj.metadata.managedFields ?? []).filter((e: any) => e.manager !== 'orch-controller-manager')
  .map((e: any) => `${e.manager}/${e.operation}`).sort()

async function ssaFlow (t: Test, k: Kubectl, name: string): Promise<void> {
  let r = await k('apply', '--server-side', '-f', manifest(name, 1, 'busybox:1'))
  t.equal(r.code, 0, r.stderr)
  t.match(r.stdout, `deployment.apps/${name} serverside-applied`)
  let obj = await jsonOf(k, name)
  t.same(managers(obj), ['kubectl/Apply'])
  const entry = obj.metadata.managedFields[0]
  t.equal(entry.fieldsType, 'FieldsV1')
  t.same(entry.fieldsV1['f:spec']['f:replicas'], {})
  t.ok(entry.fieldsV1['f:spec']['f:template']['f:spec']['f:containers']['k:{"name":"web"}'], 'containers keyed by name')

  const rv = obj.metadata.resourceVersion
  r = await k('apply', '--server-side', '-f', manifest(name, 1, 'busybox:1'))
  t.equal(r.code, 0, r.stderr)
  t.equal((await jsonOf(k, name)).metadata.resourceVersion, rv, 'the same configuration again writes nothing')

  r = await k('diff', '--server-side', '-f', manifest(name, 1, 'busybox:1'))
  t.equal(r.code, 0, `server-side diff without a change exits 0: ${r.stdout}${r.stderr}`)
  r = await k('diff', '--server-side', '-f', manifest(name, 1, 'busybox:2'))
  t.equal(r.code, 1, `server-side diff with a change exits 1: ${r.stderr}`)
  t.match(r.stdout, /busybox:2/)

  r = await k('apply', '--server-side', '--field-manager=ops', '-f', manifest(name, 4, 'busybox:1'))
  t.equal(r.code, 1, 'another manager changing replicas conflicts')
  t.match(r.stderr, 'Apply failed with 1 conflict: conflict with "kubectl": .spec.replicas')
  t.match(r.stderr, 'Please review the fields above--they currently have other managers', 'kubectl prints its advice')
  r = await k('apply', '--server-side', '--field-manager=ops', '--force-conflicts', '-f', manifest(name, 4, 'busybox:1'))
  t.equal(r.code, 0, r.stderr)
  obj = await jsonOf(k, name)
  t.equal(obj.spec.replicas, 4)
  t.same(managers(obj), ['kubectl/Apply', 'ops/Apply'])
  const kubectlEntry = obj.metadata.managedFields.find((e: any) => e.manager === 'kubectl')
  t.notOk(kubectlEntry.fieldsV1['f:spec']['f:replicas'], 'forcing took replicas away from kubectl')

  r = await k('apply', '--server-side', '--dry-run=server', '-f', manifest(name, 4, 'busybox:1', { tier: 'x' }))
  t.equal(r.code, 0, r.stderr)
  t.equal((await jsonOf(k, name)).metadata.labels.tier, undefined, 'dry-run changed nothing')

  r = await k('apply', '--server-side', '-f', manifest(name, 4, 'busybox:1', { tier: 'front' }))
  t.equal(r.code, 0, `the same replicas value is shared, not a conflict: ${r.stderr}`)
  t.same(managers(await jsonOf(k, name)).filter(m => m.endsWith('Apply')), ['kubectl/Apply', 'ops/Apply'])
  r = await k('apply', '--server-side', '-f', manifest(name, 4, 'busybox:1'))
  t.equal(r.code, 0, r.stderr)
  obj = await jsonOf(k, name)
  t.equal(obj.metadata.labels.tier, undefined, 'a label dropped by its only manager is removed')
  r = await k('apply', '--server-side', '-f', manifest(name, 4, 'busybox:3'))
  t.equal(r.code, 1, 'the image both appliers own cannot change without force')
  t.match(r.stderr, 'Apply failed with 1 conflict: conflict with "ops": .spec.template.spec.containers[name="web"].image')

  r = await k('scale', 'deployment', name, '--replicas=2')
  t.equal(r.code, 0, r.stderr)
  obj = await jsonOf(k, name)
  const scaler = obj.metadata.managedFields.find((e: any) => e.operation === 'Update' && e.fieldsV1['f:spec']?.['f:replicas'] !== undefined)
  t.ok(scaler, 'kubectl scale recorded an Update entry owning .spec.replicas')
  r = await k('apply', '--server-side', '-f', manifest(name, 4, 'busybox:1'))
  t.equal(r.code, 1, 'replicas changed by kubectl scale now conflict')
  t.match(r.stderr, `conflict with "${scaler.manager}"`)
  t.match(r.stderr, '.spec.replicas')
}

async function migrationFlow (t: Test, k: Kubectl, name: string): Promise<void> {
  let r = await k('apply', '-f', manifest(name, 1, 'busybox:1', { tier: 'a' }))
  t.equal(r.code, 0, r.stderr)
  t.same(managers(await jsonOf(k, name)), ['kubectl-client-side-apply/Update'])
  r = await k('apply', '--server-side', '-f', manifest(name, 2, 'busybox:2', { tier: 'b' }))
  t.equal(r.code, 0, `client-side to server-side apply migrates without conflicts: ${r.stderr}`)
  const obj = await jsonOf(k, name)
  t.equal(obj.spec.replicas, 2)
  t.equal(obj.metadata.labels.tier, 'b')
  t.ok(managers(obj).includes('kubectl/Apply'))
  const last = JSON.parse(obj.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration'])
  t.equal(last.spec.replicas, 2, 'the last-applied annotation follows the server-side apply')
}

t.test('kubectl apply --server-side against orch up', async t => {
  const orch: OrchProcess = await startOrch(join(dir, 'data'))
  t.teardown(() => orch.stop())
  const k129: Kubectl = async (...args) => await runKubectl(orch.kubeconfig, join(dir, 'cache-129'), args)
  const k133: Kubectl = async (...args) => await runKubectl(orch.kubeconfig, join(dir, 'cache-133'), args, { binary: KUBECTL_133 })
  await t.test('kubectl 1.29: apply, conflicts, force, dry-run, diff, sharing', async t => await ssaFlow(t, k129, 'ssa'))
  await t.test('kubectl 1.29: migration from client-side apply', async t => await migrationFlow(t, k129, 'csa'))
  await t.test('kubectl 1.33: apply, conflicts, force, dry-run, diff, sharing', async t => await ssaFlow(t, k133, 'ssa133'))
  await t.test('kubectl 1.33: migration from client-side apply', async t => await migrationFlow(t, k133, 'csa133'))
})
