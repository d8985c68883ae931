// Cascading deletion with the real kubectl against `orch up`: --cascade=foreground returns once dependents are gone,
// --cascade=orphan keeps them without the ownerReference, and the default (background) collects them.

import t from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runKubectl, startOrch, type OrchProcess } from './orch-process.js'

const dir = mkdtempSync(join(tmpdir(), 'orch-gc-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))

interface Run { code: number, stdout: string, stderr: string }

function kubectl (orch: OrchProcess, ...args: string[]): Promise<Run> {
  return runKubectl(orch.kubeconfig, join(dir, 'cache'), args)
}

async function apply (orch: OrchProcess, name: string, yaml: string): Promise<void> {
  const p = join(dir, `${name}.yaml`)
  writeFileSync(p, yaml)
  const r = await kubectl(orch, 'create', '-f', p)
  if (r.code !== 0) throw new Error(`kubectl create ${name} failed: ${r.stderr}`)
}

const configMap = (name: string): string => `apiVersion: v1
kind: ConfigMap
metadata: {name: ${name}, namespace: default}
data: {a: b}
`

async function uidOf (orch: OrchProcess, name: string): Promise<string> {
  const r = await kubectl(orch, 'get', 'configmap', name, '-o', 'jsonpath={.metadata.uid}')
  if (r.code !== 0 || r.stdout === '') throw new Error(`no uid for ${name}: ${r.stderr}`)
  return r.stdout
}

async function dependentOf (orch: OrchProcess, name: string, owner: string): Promise<void> {
  const uid = await uidOf(orch, owner)
  await apply(orch, name, `apiVersion: v1
kind: ConfigMap
metadata:
  name: ${name}
  namespace: default
  ownerReferences:
  - {apiVersion: v1, kind: ConfigMap, name: ${owner}, uid: ${uid}, blockOwnerDeletion: true}
data: {a: b}
`)
}

async function until (what: string, check: () => Promise<boolean>, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise(resolve => setTimeout(resolve, 100))
  }
}

t.test('kubectl delete --cascade=foreground, =orphan and the default cascade', async t => {
  const orch = await startOrch(join(dir, 'data'))
  t.teardown(async () => { await orch.stop() })

  await t.test('--cascade=foreground returns and the dependent is gone', async t => {
    await apply(orch, 'fg-owner', configMap('fg-owner'))
    await dependentOf(orch, 'fg-dep', 'fg-owner')
    const r = await kubectl(orch, 'delete', 'configmap', 'fg-owner', '--cascade=foreground', '--timeout=30s')
    t.equal(r.code, 0, r.stderr)
    t.match(r.stdout, /deleted/)
    t.equal((await kubectl(orch, 'get', 'configmap', 'fg-dep')).code, 1, 'dependent gone')
    t.equal((await kubectl(orch, 'get', 'configmap', 'fg-owner')).code, 1, 'owner gone')
  })

  await t.test('--cascade=orphan keeps the dependent without the ownerReference', async t => {
    await apply(orch, 'or-owner', configMap('or-owner'))
    await dependentOf(orch, 'or-dep', 'or-owner')
    const r = await kubectl(orch, 'delete', 'configmap', 'or-owner', '--cascade=orphan', '--timeout=30s')
    t.equal(r.code, 0, r.stderr)
    t.equal((await kubectl(orch, 'get', 'configmap', 'or-owner')).code, 1, 'owner gone')
    const dep = await kubectl(orch, 'get', 'configmap', 'or-dep', '-o', 'jsonpath={.metadata.ownerReferences}')
    t.equal(dep.code, 0, dep.stderr)
    t.equal(dep.stdout, '', 'ownerReference removed')
  })

  await t.test('the default (background) cascade collects the dependent', async t => {
    await apply(orch, 'bg-owner', configMap('bg-owner'))
    await dependentOf(orch, 'bg-dep', 'bg-owner')
    const r = await kubectl(orch, 'delete', 'configmap', 'bg-owner')
    t.equal(r.code, 0, r.stderr)
    await until('the dependent to be collected', async () => (await kubectl(orch, 'get', 'configmap', 'bg-dep')).code === 1)
  })
})
