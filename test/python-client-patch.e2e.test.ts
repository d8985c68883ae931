// The Debian python3 kubernetes client's default patch (a dict body goes out as a strategic merge patch) against
// `orch up`. As root, .ci/python-client.sh installs Debian's python3-kubernetes when it is missing; skipped when it
// still cannot be imported (not root and not installed). ORCH_TEST_PYTHONPATH may point at an unpacked copy.

import t from 'tap'
import { execFile, execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { startOrch } from './orch-process.js'

const PYTHON = '/usr/bin/python3'
const env = { ...process.env, ...(process.env.ORCH_TEST_PYTHONPATH !== undefined ? { PYTHONPATH: process.env.ORCH_TEST_PYTHONPATH } : {}) }

const INSTALL = fileURLToPath(new URL('../.ci/python-client.sh', import.meta.url))

function hasClient (): boolean {
  if (!importable() && process.getuid?.() === 0) {
    try {
      execFileSync('bash', [INSTALL], { stdio: 'ignore', timeout: 300_000 })
    } catch {
      return false
    }
  }
  return importable()
}

function importable (): boolean {
  try {
    execFileSync(PYTHON, ['-c', 'import kubernetes'], { env, stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

const SCRIPT = `
import json, sys
from kubernetes import client, config
config.load_kube_config(config_file=sys.argv[1])
apps = client.AppsV1Api()
core = client.CoreV1Api()
apps.create_namespaced_deployment('default', {
  'apiVersion': 'apps/v1', 'kind': 'Deployment', 'metadata': {'name': 'py'},
  'spec': {'replicas': 0, 'selector': {'matchLabels': {'app': 'py'}},
    'template': {'metadata': {'labels': {'app': 'py'}}, 'spec': {'containers': [
      {'name': 'web', 'image': 'busybox:1'}, {'name': 'log', 'image': 'busybox:1'}]}}}})
d = apps.patch_namespaced_deployment('py', 'default',
  {'spec': {'template': {'spec': {'containers': [{'name': 'web', 'image': 'busybox:2'}]}}}})
core.create_node({'apiVersion': 'v1', 'kind': 'Node', 'metadata': {'name': 'py-node'}})
n = core.patch_node('py-node', {'spec': {'unschedulable': True}})
print(json.dumps({
  'containers': [c.name + '=' + c.image for c in d.spec.template.spec.containers],
  'unschedulable': n.spec.unschedulable,
}))
`

t.test('the python client patches a deployment and a node with its default (strategic merge) patch', { skip: hasClient() ? false : 'python3-kubernetes is not importable by /usr/bin/python3' }, async t => {
  const dir = mkdtempSync(join(tmpdir(), 'orch-python-patch-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const orch = await startOrch(join(dir, 'data'))
  t.teardown(() => orch.stop())
  const script = join(dir, 'patch.py')
  writeFileSync(script, SCRIPT)
  const out = await new Promise<string>((resolve, reject) => {
    execFile(PYTHON, [script, orch.kubeconfig], { env, timeout: 60_000 }, (err, stdout, stderr) => {
      if (err !== null) reject(new Error(`${err.message}\n${stderr}`))
      else resolve(stdout)
    })
  })
  const result = JSON.parse(out) as { containers: string[]; unschedulable: boolean }
  t.same(result.containers, ['web=busybox:2', 'log=busybox:1'], 'containers merged by name')
  t.equal(result.unschedulable, true)
})
