// kubectl 1.33 sends `kubectl create <kind>` bodies as Kubernetes protobuf: they work against `orch up`, and a
// custom resource sent as protobuf answers 415 listing what it takes.
import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { tlsRequester } from './tls-client.js'
import { runKubectl, startOrch } from './orch-process.js'

const tls = tlsRequester()
const request = tls.request
t.teardown(async () => await tls.close())

const KUBECTL_133 = '/usr/lib/google-cloud-sdk/bin/kubectl.1.33'
const dir = mkdtempSync(join(tmpdir(), 'orch-kubectl-protobuf-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))

t.test('kubectl 1.33 imperative creates (protobuf bodies) work', async t => {
  const orch = await startOrch(join(dir, 'data'))
  tls.use(orch.kubeconfig)
  t.teardown(() => orch.stop())
  const k = async (...args: string[]): Promise<{ code: number, stdout: string, stderr: string }> =>
    await runKubectl(orch.kubeconfig, join(dir, 'cache'), args, { binary: KUBECTL_133 })
  const get = async (what: string, path: string): Promise<string> => (await k('get', ...what.split(' '), '-o', `jsonpath=${path}`)).stdout

  for (const args of [
    ['create', 'namespace', 'demo'],
    ['create', 'configmap', 'settings', '--from-literal=mode=fast', '-n', 'demo'],
    ['create', 'secret', 'generic', 'login', '--from-literal=password=hunter2', '-n', 'demo'],
    ['create', 'deployment', 'web', '--image=nginx:1', '--replicas=3', '-n', 'demo'],
    ['create', 'job', 'once', '--image=busybox', '-n', 'demo', '--', 'echo', 'hi'],
    ['create', 'serviceaccount', 'robot', '-n', 'demo']
  ]) {
    const r = await k(...args)
    t.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`)
    t.match(r.stdout, / created/)
  }
  t.equal(await get('configmap settings -n demo', '{.data.mode}'), 'fast')
  t.equal(Buffer.from(await get('secret login -n demo', '{.data.password}'), 'base64').toString(), 'hunter2', 'bytes arrive as bytes')
  t.equal(await get('deployment web -n demo', '{.spec.replicas} {.spec.template.spec.containers[0].image}'), '3 nginx:1')
  t.match(await get('deployment web -n demo', '{.metadata.creationTimestamp}'), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/, 'the server set the creation time')
  t.equal(await get('job once -n demo', '{.spec.template.spec.containers[0].command}'), '["echo","hi"]')
  const r = await k('delete', 'configmap', 'settings', '-n', 'demo')
  t.equal(r.code, 0, r.stderr)

  const bad = await request(`${orch.server}/api/v1/namespaces/demo/configmaps`, {
    method: 'POST', body: Buffer.from('not protobuf'), headers: { 'content-type': 'application/vnd.kubernetes.protobuf' }
  })
  t.equal(bad.statusCode, 400)
  t.match(await bad.body.json(), { kind: 'Status', reason: 'BadRequest', message: /expected prefix \[107 56 115 0\]/ })
})
