// The real kubectl's patching verbs (label, annotate, patch of every type, scale) and delete against `orch up`.

import t from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runKubectl, startOrch, type OrchProcess } from './orch-process.js'

const dir = mkdtempSync(join(tmpdir(), 'orch-kubectl-patch-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))

interface Run { code: number; stdout: string; stderr: string }

function kubectl (orch: OrchProcess, ...args: string[]): Promise<Run> {
  return runKubectl(orch.kubeconfig, join(dir, 'cache'), args)
}

function file (name: string, text: string): string {
  const p = join(dir, name)
  writeFileSync(p, text)
  return p
}

const MANIFESTS = `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: default
data:
  color: blue
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
spec:
  replicas: 0
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: busybox
`

async function jsonpath (orch: OrchProcess, what: string[], path: string): Promise<string> {
  const r = await kubectl(orch, 'get', ...what, '-o', `jsonpath=${path}`)
  if (r.code !== 0) throw new Error(r.stderr)
  return r.stdout
}

t.test('kubectl label, annotate, patch, scale and delete work against orch up', async t => {
  const orch = await startOrch(join(dir, 'data'))
  t.teardown(() => orch.stop())
  const created = await kubectl(orch, 'create', '-f', file('all.yaml', MANIFESTS))
  t.equal(created.code, 0, created.stderr)

  await t.test('label adds, overwrites and removes labels', async t => {
    let r = await kubectl(orch, 'label', 'configmap', 'settings', 'tier=front')
    t.equal(r.code, 0, r.stderr)
    t.match(r.stdout, 'configmap/settings labeled')
    t.equal(await jsonpath(orch, ['cm', 'settings'], '{.metadata.labels.tier}'), 'front')
    r = await kubectl(orch, 'label', 'configmap', 'settings', 'tier=back')
    t.not(r.code, 0, 'an existing label needs --overwrite')
    r = await kubectl(orch, 'label', 'configmap', 'settings', 'tier=back', '--overwrite')
    t.equal(r.code, 0, r.stderr)
    t.equal(await jsonpath(orch, ['cm', 'settings'], '{.metadata.labels.tier}'), 'back')
    r = await kubectl(orch, 'label', 'deployment', 'web', 'tier-')
    t.equal(r.code, 0, r.stderr)
    r = await kubectl(orch, 'label', 'configmap', 'settings', 'tier-')
    t.equal(r.code, 0, r.stderr)
    t.match(r.stdout, 'configmap/settings unlabeled')
    t.equal(await jsonpath(orch, ['cm', 'settings'], '{.metadata.labels}'), '')
  })

  await t.test('annotate sets an annotation', async t => {
    const r = await kubectl(orch, 'annotate', 'deployment', 'web', 'owner=team-a')
    t.equal(r.code, 0, r.stderr)
    t.match(r.stdout, 'deployment.apps/web annotated')
    t.equal(await jsonpath(orch, ['deploy', 'web'], '{.metadata.annotations.owner}'), 'team-a')
  })

  await t.test('patch --type=merge and --type=json change the object', async t => {
    let r = await kubectl(orch, 'patch', 'configmap', 'settings', '--type=merge', '-p', '{"data":{"color":"red","size":"L"}}')
    t.equal(r.code, 0, r.stderr)
    t.match(r.stdout, 'configmap/settings patched')
    t.equal(await jsonpath(orch, ['cm', 'settings'], '{.data.color},{.data.size}'), 'red,L')
    r = await kubectl(orch, 'patch', 'configmap', 'settings', '--type=json', '-p',
      '[{"op":"test","path":"/data/color","value":"red"},{"op":"remove","path":"/data/size"}]')
    t.equal(r.code, 0, r.stderr)
    t.equal(await jsonpath(orch, ['cm', 'settings'], '{.data}'), '{"color":"red"}')
    r = await kubectl(orch, 'patch', 'configmap', 'settings', '--type=json', '-p', '[{"op":"test","path":"/data/color","value":"blue"}]')
    t.not(r.code, 0)
    t.match(r.stderr, /invalid/i)
    r = await kubectl(orch, 'patch', 'configmap', 'settings', '-p', '{"data":{"color":"green"}}')
    t.equal(r.code, 0, r.stderr)
    t.equal(await jsonpath(orch, ['cm', 'settings'], '{.data.color}'), 'green', 'the default type is strategic merge')
  })

  await t.test('scale deployment patches /scale', async t => {
    const r = await kubectl(orch, 'scale', 'deployment', 'web', '--replicas=3')
    t.equal(r.code, 0, r.stderr)
    t.match(r.stdout, 'deployment.apps/web scaled')
    t.equal(await jsonpath(orch, ['deploy', 'web'], '{.spec.replicas}'), '3')
  })

  await t.test('delete still prints what it deleted', async t => {
    let r = await kubectl(orch, 'delete', 'deployment', 'web')
    t.equal(r.code, 0, r.stderr)
    t.match(r.stdout, 'deployment.apps "web" deleted')
    r = await kubectl(orch, 'delete', 'configmap', 'settings')
    t.equal(r.code, 0, r.stderr)
    t.match(r.stdout, 'configmap "settings" deleted')
    t.equal((await kubectl(orch, 'get', 'cm', 'settings')).code, 1)
  })

  await t.test('kubectl apply updates a custom resource with a merge patch (no strategic merge for CRs)', async t => {
    const crd = `apiVersion: apiextensions.orch.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {size: {type: integer}}}
`
    t.equal((await kubectl(orch, 'apply', '-f', file('crd.yaml', crd))).code, 0)
    t.equal((await kubectl(orch, 'wait', '--for', 'condition=established', 'crd/widgets.example.com', '--timeout=20s')).code, 0)
    const widget = (size: number) => `apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w1, namespace: default}\nspec: {size: ${size}}\n`
    let r = await kubectl(orch, 'apply', '-f', file('w1.yaml', widget(1)))
    t.equal(r.code, 0, r.stderr)
    r = await kubectl(orch, 'apply', '-f', file('w2.yaml', widget(2)))
    t.equal(r.code, 0, r.stderr)
    t.match(r.stdout, 'widget.example.com/w1 configured')
    t.equal(await jsonpath(orch, ['widget', 'w1'], '{.spec.size}'), '2')
    r = await kubectl(orch, 'patch', 'widget', 'w1', '-p', '{"spec":{"size":3}}')
    t.not(r.code, 0, 'custom resources take no strategic merge patch')
    t.match(r.stderr, /strategic-merge-patch\+json/)
    t.match(r.stderr, 'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json')
    t.equal(await jsonpath(orch, ['widget', 'w1'], '{.spec.size}'), '2')
  })
})
