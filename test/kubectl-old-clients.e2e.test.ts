// kubectl 1.27 and 1.28 read the OpenAPI v2 document as protobuf: create -f, apply -f (twice, a three-way merge
// driven by the document's patch strategies), diff and explain work against `orch up`.
import t from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { tlsRequester } from './tls-client.js'
import { runKubectl, startOrch } from './orch-process.js'

const tls = tlsRequester()
const request = tls.request
t.teardown(async () => await tls.close())

const dir = mkdtempSync(join(tmpdir(), 'orch-kubectl-old-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))

const deployment = (name: string, image: string, env: string): string => `apiVersion: apps/v1
kind: Deployment
metadata: {name: ${name}, namespace: default}
spec:
  replicas: 0
  selector: {matchLabels: {app: ${name}}}
  template:
    metadata: {labels: {app: ${name}}}
    spec:
      containers:
      - name: web
        image: ${image}
        env: [${env}]
`

t.test('kubectl 1.27 and 1.28 create, apply, diff and explain against orch up', async t => {
  const orch = await startOrch(join(dir, 'data'))
  tls.use(orch.kubeconfig)
  t.teardown(() => orch.stop())
  const pb = await request(`${orch.server}/openapi/v2`, { headers: { accept: 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf' } })
  t.equal(pb.statusCode, 200)
  t.equal(pb.headers['content-type'], 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf')
  t.ok((await pb.body.arrayBuffer()).byteLength > 10_000, 'a protobuf document')
  for (const version of ['1.27', '1.28']) {
    const k = async (...args: string[]): Promise<{ code: number, stdout: string, stderr: string }> =>
      await runKubectl(orch.kubeconfig, join(dir, `cache-${version}`), args, { binary: `/usr/lib/google-cloud-sdk/bin/kubectl.${version}` })
    const name = `web${version.replace('.', '')}`
    const v1 = join(dir, `${name}-1.yaml`)
    const v2 = join(dir, `${name}-2.yaml`)
    writeFileSync(v1, deployment(name, 'busybox:1', '{name: A, value: "1"}, {name: B, value: "2"}'))
    writeFileSync(v2, deployment(name, 'busybox:2', '{name: A, value: "1"}'))
    let r = await k('create', '-f', v1)
    t.equal(r.code, 0, `${version} create -f: ${r.stderr}`)
    r = await k('apply', '-f', v2)
    t.equal(r.code, 0, `${version} apply -f: ${r.stderr}`)
    r = await k('get', 'deployment', name, '-o', 'jsonpath={.spec.template.spec.containers[0].image} {.spec.template.spec.containers[0].env[*].name}')
    t.equal(r.stdout, 'busybox:2 A B', `${version}: create -f left no last-applied annotation, so B stays`)
    r = await k('apply', '-f', v2)
    t.equal(r.code, 0, r.stderr)
    r = await k('diff', '-f', v2)
    t.equal(r.code, 0, `${version} diff without a change: ${r.stdout}${r.stderr}`)
    r = await k('explain', 'pods.spec.containers.image')
    t.equal(r.code, 0, r.stderr)
    t.match(r.stdout, /KIND:\s+Pod/)
  }
})
