// Drives the real kubectl against `orch up` (started from source), then restarts on the same data dir.

import t from 'tap'
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runKubectl, startOrch, type OrchProcess } from './orch-process.js'

const KUBECTL = '/usr/bin/kubectl'
const dir = mkdtempSync(join(tmpdir(), 'orch-kubectl-'))
const dataDir = join(dir, 'data')
t.teardown(() => rmSync(dir, { recursive: true, force: true }))

interface Run { code: number; stdout: string; stderr: string }

const cacheOf = (orch: OrchProcess): string => join(dir, `cache-${orch.child.pid ?? 0}`)

function kubectl (orch: OrchProcess, ...args: string[]): Promise<Run> {
  return runKubectl(orch.kubeconfig, cacheOf(orch), args)
}

function file (name: string, text: string): string {
  const p = join(dir, name)
  writeFileSync(p, text)
  return p
}

async function until (what: string, check: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise(resolve => setTimeout(resolve, 100))
  }
}

const CONFIGMAP = `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: default
data:
  color: blue
`

const DEPLOYMENT = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
spec:
  replicas: 2
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

const CRD = `apiVersion: apiextensions.orch.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, shortNames: [wd]}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
`

const WIDGET = `apiVersion: example.com/v1
kind: Widget
metadata:
  name: w1
  namespace: default
spec:
  size: 3
`

t.test('kubectl works against orch up, and data survives a restart', async t => {
  let orch = await startOrch(dataDir)
  t.teardown(() => orch.stop())

  await t.test('get ns lists the bootstrap namespaces', async t => {
    const r = await kubectl(orch, 'get', 'ns')
    t.equal(r.code, 0, r.stderr)
    for (const ns of ['default', 'orch-system', 'orch-public', 'orch-node-lease']) t.match(r.stdout, ns)
  })

  await t.test('api-resources lists served kinds', async t => {
    const r = await kubectl(orch, 'api-resources')
    t.equal(r.code, 0, r.stderr)
    t.match(r.stdout, /configmaps\s+cm\s+v1\s+true\s+ConfigMap/)
    t.match(r.stdout, /deployments\s+deploy\s+apps\/v1\s+true\s+Deployment/)
  })

  await t.test('create -f with strict validation, then get -o yaml', async t => {
    let r = await kubectl(orch, 'create', '-f', file('cm.yaml', CONFIGMAP))
    t.equal(r.code, 0, r.stderr)
    t.match(r.stdout, 'configmap/settings created')
    r = await kubectl(orch, 'create', '-f', file('deploy.yaml', DEPLOYMENT))
    t.equal(r.code, 0, r.stderr)
    r = await kubectl(orch, 'get', 'configmap', 'settings', '-o', 'yaml')
    t.equal(r.code, 0, r.stderr)
    t.match(r.stdout, /color: blue/)
    t.match(r.stdout, /resourceVersion: "\d+"/)
    r = await kubectl(orch, 'create', '-f', file('bad.yaml', CONFIGMAP.replace('settings', 'bad').replace('data:', 'bogus: 1\ndata:')))
    t.not(r.code, 0)
    t.match(r.stderr, /bogus/)
  })

  await t.test('get -o wide shows the columns kube-apiserver 1.29 prints', async t => {
    const r = await kubectl(orch, 'get', 'deployments', '-o', 'wide')
    t.equal(r.code, 0, r.stderr)
    t.match(r.stdout, /^NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE\s+CONTAINERS\s+IMAGES\s+SELECTOR\n/)
    t.match(r.stdout, /\n\S+\s+\d+\/\d+\s+\d+\s+\d+\s+\S+\s+web\s+busybox\s+app=web\n/, 'counts are numbers, never <none>')
  })

  await t.test('replace -f updates the object', async t => {
    const r = await kubectl(orch, 'replace', '-f', file('cm2.yaml', CONFIGMAP.replace('blue', 'green')))
    t.equal(r.code, 0, r.stderr)
    const got = await kubectl(orch, 'get', 'cm', 'settings', '-o', 'jsonpath={.data.color}')
    t.equal(got.stdout, 'green')
  })

  await t.test('get -w prints objects created while watching', async t => {
    const watcher = spawn(KUBECTL, ['--kubeconfig', orch.kubeconfig, '--cache-dir', cacheOf(orch), 'get', 'configmaps', '-w'])
    let out = ''
    watcher.stdout.on('data', (d: Buffer) => { out += d.toString() })
    watcher.stderr.on('data', (d: Buffer) => { out += d.toString() })
    try {
      await until('the initial list', () => out.includes('settings'))
      const r = await kubectl(orch, 'create', 'configmap', 'watched', '--from-literal=a=b')
      t.equal(r.code, 0, r.stderr)
      await until('the watch event', () => out.includes('watched'))
      t.match(out, /NAME\s+DATA\s+AGE|NAME\s+/)
    } finally {
      watcher.kill()
    }
  })

  await t.test('delete removes objects, and waits for finalizers', async t => {
    let r = await kubectl(orch, 'delete', 'configmap', 'watched')
    t.equal(r.code, 0, r.stderr)
    t.match(r.stdout, 'configmap "watched" deleted')
    t.equal((await kubectl(orch, 'get', 'cm', 'watched')).code, 1)

    r = await kubectl(orch, 'create', '-f', file('held.yaml', CONFIGMAP.replace('settings', 'held').replace('namespace: default', 'namespace: default\n  finalizers: [example.com/hold]')))
    t.equal(r.code, 0, r.stderr)
    const del = kubectl(orch, 'delete', 'configmap', 'held', '--wait=true', '--timeout=40s')
    await until('the deletionTimestamp', async () => (await kubectl(orch, 'get', 'cm', 'held', '-o', 'jsonpath={.metadata.deletionTimestamp}')).stdout !== '')
    const live = JSON.parse((await kubectl(orch, 'get', 'cm', 'held', '-o', 'json')).stdout)
    live.metadata.finalizers = []
    r = await kubectl(orch, 'replace', '-f', file('held-free.json', JSON.stringify(live)))
    t.equal(r.code, 0, r.stderr)
    const done = await del
    t.equal(done.code, 0, done.stderr)
    t.equal((await kubectl(orch, 'get', 'cm', 'held')).code, 1)
  })

  await t.test('explain reads the OpenAPI documents', async t => {
    const r = await kubectl(orch, 'explain', 'pods.spec.containers')
    t.equal(r.code, 0, r.stderr)
    t.match(r.stdout, /image/)
  })

  await t.test('a CRD serves its custom objects', async t => {
    let r = await kubectl(orch, 'create', '-f', file('crd.yaml', CRD))
    t.equal(r.code, 0, r.stderr)
    r = await kubectl(orch, 'wait', '--for=condition=Established', '--timeout=30s', 'customresourcedefinitions.apiextensions.orch.io/widgets.example.com')
    t.equal(r.code, 0, r.stderr)
    await until('discovery of widgets', async () => (await kubectl(orch, 'create', '-f', file('w1.yaml', WIDGET))).code === 0)
    r = await kubectl(orch, 'get', 'widgets', 'w1', '-o', 'jsonpath={.spec.size}')
    t.equal(r.code, 0, r.stderr)
    t.equal(r.stdout, '3')
    r = await kubectl(orch, 'get', 'widgets')
    t.match(r.stdout, /^NAME\s+AGE\nw1\s+\d+s\n/, 'a custom resource without printer columns shows NAME and AGE')
    r = await kubectl(orch, 'get', 'crd')
    t.match(r.stdout, /^NAME\s+CREATED AT\nwidgets\.example\.com\s+\d{4}-\d\d-\d\dT/, 'the CRD list shows NAME and CREATED AT')
  })

  await t.test('SIGTERM stops cleanly and a restart keeps the data', async t => {
    t.equal(await orch.stop(), 0, orch.logs())
    orch = await startOrch(dataDir)
    const r = await kubectl(orch, 'get', 'cm', 'settings', '-o', 'jsonpath={.data.color}')
    t.equal(r.code, 0, r.stderr)
    t.equal(r.stdout, 'green')
    const w = await kubectl(orch, 'get', 'widgets', 'w1', '-o', 'name')
    t.equal(w.code, 0, w.stderr)
    t.equal(w.stdout.trim(), 'widget.example.com/w1')
  })
})
