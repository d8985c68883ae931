// The real kubectl's strategic-merge flows against `orch up`: client-side apply (three-way merge with the
// last-applied annotation), diff, edit, patch (all types), set image/env, rollout restart, cordon, taint, scale;
// with kubectl 1.29 (the dispatcher's pick for a 1.29 server) and again with kubectl 1.33.

import t, { type Test } from 'tap'
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runKubectl, startOrch, type KubectlRun, type OrchProcess } from './orch-process.js'

const dir = mkdtempSync(join(tmpdir(), 'orch-kubectl-apply-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))

const KUBECTL_133 = '/usr/lib/google-cloud-sdk/bin/kubectl.1.33'

function file (name: string, text: string): string {
  const p = join(dir, name)
  writeFileSync(p, text)
  return p
}

interface Deploy { name: string; image: string; ports: number[]; env: Array<[string, string]>; labels?: Record<string, string>; strategy?: string; volume?: string }

function deployment (d: Deploy): string {
  const ports = d.ports.map(p => `        - containerPort: ${p}\n`).join('')
  const env = d.env.map(([k, v]) => `        - name: ${k}\n          value: "${v}"\n`).join('')
  const labels = Object.entries({ app: d.name, ...d.labels }).map(([k, v]) => `    ${k}: ${v}\n`).join('')
  return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${d.name}
  namespace: default
  labels:
${labels}spec:
  replicas: 0
${d.strategy !== undefined ? `  strategy: {type: ${d.strategy}}\n` : ''}  selector:
    matchLabels: {app: ${d.name}}
  template:
    metadata:
      labels: {app: ${d.name}}
    spec:
${d.volume !== undefined ? `      volumes:\n      - name: data\n        ${d.volume}\n` : ''}      containers:
      - name: web
        image: ${d.image}
${ports.length > 0 ? `        ports:\n${ports}` : ''}${env.length > 0 ? `        env:\n${env}` : ''}`
}

type Kubectl = (...args: string[]) => Promise<KubectlRun>

function kubectlFor (orch: OrchProcess, cache: string, binary?: string, env?: Record<string, string>): Kubectl {
  return async (...args) => await runKubectl(orch.kubeconfig, join(dir, cache), args, { binary, env })
}

async function get (k: Kubectl, what: string, path: string): Promise<string> {
  const r = await k('get', ...what.split(' '), '-o', `jsonpath=${path}`)
  if (r.code !== 0) throw new Error(r.stderr)
  return r.stdout
}

const spec = (k: Kubectl, name: string, path: string): Promise<string> => get(k, `deployment ${name}`, path)

/** apply twice with removals, re-apply unchanged, keep a change made by someone else, diff both ways. */
async function applyFlow (t: Test, k: Kubectl, name: string): Promise<void> {
  const v1 = file(`${name}-v1.yaml`, deployment({ name, image: 'busybox:1', ports: [80, 443], env: [['A', '1'], ['B', '2']], volume: 'emptyDir: {}' }))
  let r = await k('apply', '-f', v1)
  t.equal(r.code, 0, r.stderr)
  t.match(r.stdout, `deployment.apps/${name} created`)
  t.match(await get(k, `deployment ${name}`, '{.metadata.annotations}'), 'kubectl.kubernetes.io/last-applied-configuration')

  r = await k('annotate', 'deployment', name, 'owner=someone-else')
  t.equal(r.code, 0, r.stderr)
  const v2 = file(`${name}-v2.yaml`, deployment({ name, image: 'busybox:2', ports: [80], env: [['A', '1']], labels: { tier: 'web' }, strategy: 'Recreate', volume: 'configMap: {name: settings}' }))
  r = await k('diff', '-f', v2)
  t.equal(r.code, 1, `diff exits 1 when the apply would change the object: ${r.stderr}`)
  t.match(r.stdout, /busybox:2/)
  r = await k('apply', '-f', v2)
  t.equal(r.code, 0, r.stderr)
  t.match(r.stdout, `deployment.apps/${name} configured`)
  t.equal(await spec(k, name, '{.spec.template.spec.containers[0].image}'), 'busybox:2')
  t.equal(await spec(k, name, '{.spec.template.spec.containers[0].ports[*].containerPort}'), '80', 'the removed port is gone')
  t.equal(await spec(k, name, '{.spec.template.spec.containers[0].env[*].name}'), 'A', 'the removed env var is gone')
  t.equal(await spec(k, name, '{.metadata.labels.tier}'), 'web')
  t.equal(await spec(k, name, '{.metadata.annotations.owner}'), 'someone-else', 'a field the manifest never set survives')
  t.equal(await spec(k, name, '{.spec.strategy}'), '{"type":"Recreate"}', 'retainKeys cleared the defaulted rollingUpdate')
  t.equal(await spec(k, name, '{.spec.template.spec.volumes[0].emptyDir}'), '', 'retainKeys on volumes dropped the old volume source')
  t.equal(await spec(k, name, '{.spec.template.spec.volumes[0].configMap.name}'), 'settings')

  r = await k('diff', '-f', v2)
  t.equal(r.code, 0, `diff exits 0 without a change: ${r.stdout}${r.stderr}`)
  const rv = await spec(k, name, '{.metadata.resourceVersion}')
  r = await k('apply', '-f', v2)
  t.equal(r.code, 0, r.stderr)
  t.match(r.stdout, `deployment.apps/${name} unchanged`)
  t.equal(await spec(k, name, '{.metadata.resourceVersion}'), rv)
}

/** patch (strategic by default, merge, json), set image, set env, label, annotate, rollout restart, scale. */
async function patchFlow (t: Test, k: Kubectl, name: string): Promise<void> {
  let r = await k('patch', 'deployment', name, '-p', '{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"busybox:4","env":[{"name":"P","value":"p"}]}]}}}}')
  t.equal(r.code, 0, r.stderr)
  t.match(r.stdout, `deployment.apps/${name} patched`)
  t.equal(await spec(k, name, '{.spec.template.spec.containers[*].name}'), 'web', 'containers merged by name')
  t.equal(await spec(k, name, '{.spec.template.spec.containers[0].image}'), 'busybox:4')
  t.match(await spec(k, name, '{.spec.template.spec.containers[0].env[*].name}'), /\bP\b.*\bA\b|\bA\b.*\bP\b/)

  r = await k('patch', 'deployment', name, '--type=merge', '-p', '{"metadata":{"labels":{"merged":"yes"}}}')
  t.equal(r.code, 0, r.stderr)
  r = await k('patch', 'deployment', name, '--type=json', '-p', '[{"op":"replace","path":"/spec/revisionHistoryLimit","value":3}]')
  t.equal(r.code, 0, r.stderr)
  t.equal(await spec(k, name, '{.metadata.labels.merged},{.spec.revisionHistoryLimit}'), 'yes,3')

  r = await k('set', 'image', `deployment/${name}`, 'web=busybox:5')
  t.equal(r.code, 0, r.stderr)
  t.match(r.stdout, `deployment.apps/${name} image updated`)
  t.equal(await spec(k, name, '{.spec.template.spec.containers[0].image}'), 'busybox:5')
  r = await k('set', 'env', `deployment/${name}`, 'C=3')
  t.equal(r.code, 0, r.stderr)
  r = await k('set', 'env', `deployment/${name}`, 'P-')
  t.equal(r.code, 0, r.stderr)
  const env = await spec(k, name, '{.spec.template.spec.containers[0].env[*].name}')
  t.match(env, /\bC\b/)
  t.notMatch(env, /\bP\b/)

  r = await k('label', 'deployment', name, 'tier=back', '--overwrite')
  t.equal(r.code, 0, r.stderr)
  r = await k('annotate', 'deployment', name, 'note=hello', '--overwrite')
  t.equal(r.code, 0, r.stderr)
  t.equal(await spec(k, name, '{.metadata.labels.tier},{.metadata.annotations.note}'), 'back,hello')

  r = await k('rollout', 'restart', `deployment/${name}`)
  t.equal(r.code, 0, r.stderr)
  t.match(r.stdout, `deployment.apps/${name} restarted`)
  t.match(await spec(k, name, '{.spec.template.metadata.annotations}'), 'kubectl.kubernetes.io/restartedAt')

  r = await k('scale', 'deployment', name, '--replicas=2')
  t.equal(r.code, 0, r.stderr)
  t.equal(await spec(k, name, '{.spec.replicas}'), '2')
}

async function nodeFlow (t: Test, k: Kubectl, node: string): Promise<void> {
  let r = await k('apply', '-f', file(`${node}.yaml`, `apiVersion: v1\nkind: Node\nmetadata:\n  name: ${node}\n`))
  t.equal(r.code, 0, r.stderr)
  r = await k('cordon', node)
  t.equal(r.code, 0, r.stderr)
  t.match(r.stdout, `node/${node} cordoned`)
  t.equal(await get(k, `node ${node}`, '{.spec.unschedulable}'), 'true')
  r = await k('uncordon', node)
  t.equal(r.code, 0, r.stderr)
  t.equal(await get(k, `node ${node}`, '{.spec.unschedulable}'), '')
  r = await k('taint', 'nodes', node, 'dedicated=db:NoSchedule')
  t.equal(r.code, 0, r.stderr)
  t.match(r.stdout, `node/${node} tainted`)
  t.equal(await get(k, `node ${node}`, '{.spec.taints[0].key}={.spec.taints[0].value}:{.spec.taints[0].effect}'), 'dedicated=db:NoSchedule')
  r = await k('taint', 'nodes', node, 'dedicated:NoSchedule-')
  t.equal(r.code, 0, r.stderr)
  t.equal(await get(k, `node ${node}`, '{.spec.taints}'), '')
}

t.test('kubectl apply, diff, edit, patch, set, rollout restart, cordon and taint work against orch up', async t => {
  const orch = await startOrch(join(dir, 'data'))
  t.teardown(() => orch.stop())
  const k = kubectlFor(orch, 'cache-129')

  await t.test('kubectl 1.29: apply twice, diff', async t => await applyFlow(t, k, 'web'))
  await t.test('kubectl 1.29: patch, set image/env, label, annotate, rollout restart, scale', async t => await patchFlow(t, k, 'web'))
  await t.test('kubectl 1.29: cordon, uncordon, taint', async t => await nodeFlow(t, k, 'n1'))

  await t.test('kubectl edit sends the edited object as a strategic merge patch', async t => {
    const editor = file('editor.sh', '#!/bin/sh\nsed -i "s/busybox:5/busybox:6/" "$1"\n')
    chmodSync(editor, 0o755)
    const edit = kubectlFor(orch, 'cache-129', undefined, { KUBE_EDITOR: editor })
    const r = await edit('edit', 'deployment', 'web')
    t.equal(r.code, 0, r.stderr)
    t.match(r.stdout, 'deployment.apps/web edited')
    t.equal(await spec(k, 'web', '{.spec.template.spec.containers[0].image}'), 'busybox:6')
  })

  const k133 = kubectlFor(orch, 'cache-133', KUBECTL_133)
  await t.test('kubectl 1.33: apply twice, diff', async t => await applyFlow(t, k133, 'web133'))
  await t.test('kubectl 1.33: patch, set image/env, label, annotate, rollout restart, scale', async t => await patchFlow(t, k133, 'web133'))
  await t.test('kubectl 1.33: cordon, uncordon, taint', async t => await nodeFlow(t, k133, 'n2'))
})
