// Well-known node labels and the node Lease through kubectl: `describe node` shows the Lease the orchlet renews in
// kube-node-lease, and a pod selecting kubernetes.io/hostname (or orch.io/hostname) is scheduled onto the node.
import t from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runKubectl, startOrch } from './orch-process.js'

const NODE = 'lease-node'
const dir = mkdtempSync(join(tmpdir(), 'orch-describe-node-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))

t.test('kubectl describe node shows the Lease; hostname selectors under both prefixes match the node', async t => {
  const orch = await startOrch(join(dir, 'data'), 60_000, ['--node-name', NODE])
  t.teardown(() => orch.stop())
  const k = async (...args: string[]) => await runKubectl(orch.kubeconfig, join(dir, 'cache'), args)
  const until = async (what: string, check: () => Promise<boolean>): Promise<void> => {
    const deadline = Date.now() + 40_000
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${orch.logs().slice(-2000)}`)
      await new Promise(resolve => setTimeout(resolve, 250))
    }
  }
  await until('the node lease in kube-node-lease', async () => (await k('get', 'lease', '-n', 'kube-node-lease', NODE)).code === 0)
  const described = await k('describe', 'node', NODE)
  t.equal(described.code, 0, described.stderr)
  t.notMatch(described.stdout, 'Failed to get lease')
  t.match(described.stdout, /Lease:\s*\n\s*HolderIdentity:\s+lease-node/)
  t.match(described.stdout, /kubernetes\.io\/hostname=lease-node/)
  t.match(described.stdout, /kubernetes\.io\/os=linux/)

  for (const [name, key] of [['by-k8s-label', 'kubernetes.io/hostname'], ['by-orch-label', 'orch.io/hostname']]) {
    const file = join(dir, `${name}.yaml`)
    writeFileSync(file, `apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: default}
spec:
  nodeSelector: {${key}: ${NODE}}
  containers: [{name: main, image: "localhost/absent:1"}]
`)
    const created = await k('create', '-f', file)
    t.equal(created.code, 0, created.stderr)
    await until(`${name} scheduled`, async () => (await k('get', 'pod', name, '-o', 'jsonpath={.spec.nodeName}')).stdout === NODE)
  }
  const ns = await k('get', 'ns', 'default', '-o', 'jsonpath={.metadata.labels}')
  t.match(ns.stdout, '"kubernetes.io/metadata.name":"default"')
})
