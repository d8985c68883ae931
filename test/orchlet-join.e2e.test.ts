// A second machine's orchlet joins `orch up` with a bootstrap token: its client certificate comes from a CSR approved
// automatically, its serving certificate from one an administrator approves, and `kubectl logs` reaches it verified.

import t from 'tap'
import { spawn, spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { compileFixture } from '../agent/runtime/wasm/fixtures/compile.js'
import { buildWasmImageLayout, layoutTar } from '../agent/runtime/oci/layout-writer.js'
import { runKubectl, startOrch } from './orch-process.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const NODE = 'edge-1'
const dir = mkdtempSync(join(tmpdir(), 'orch-join-'))
const data = join(dir, 'data')
const orch = await startOrch(data, 60_000, ['--orchlet=false'])
t.teardown(async () => { await orch.stop(); rmSync(dir, { recursive: true, force: true }) })
const kubectl = (...args: string[]): ReturnType<typeof runKubectl> => runKubectl(orch.kubeconfig, join(dir, 'cache'), args)

async function ok (...args: string[]): Promise<string> {
  const r = await kubectl(...args)
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${r.code}): ${r.stderr}`)
  return r.stdout
}

async function until<T> (what: string, f: () => Promise<T | undefined | false>, logs: () => string, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    const v = await f()
    if (v !== undefined && v !== false) return v
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${logs().slice(-3000)}`)
    await new Promise(resolve => setTimeout(resolve, 250))
  }
}

// The administrator's side: a bootstrap token, and the connection file handed to the new machine.
const created = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'apiserver/cli/run.ts'), 'admin', 'token', 'create', '--kubeconfig', orch.kubeconfig, '--ttl', '1h'], { cwd: ROOT, encoding: 'utf8' })
if (created.status !== 0) throw new Error(`orch admin token create failed: ${created.stderr}`)
const token = created.stdout.trim()
const caPem = readFileSync(join(data, 'pki', 'ca.crt'), 'utf8')
const node = join(dir, 'edge')
mkdirSync(join(node, 'state', 'wasm', 'import'), { recursive: true })
writeFileSync(join(node, 'state', 'wasm', 'import', 'tool.tar'), layoutTar(buildWasmImageLayout({ module: await compileFixture('tool'), refName: 'localhost/e2e/tool:1' })))
writeFileSync(join(node, 'bootstrap.conf'), `apiVersion: v1
kind: Config
clusters: [{name: orch, cluster: {server: "${orch.server}", certificate-authority-data: ${Buffer.from(caPem).toString('base64')}}}]
users: [{name: bootstrap, user: {token: "${token}"}}]
contexts: [{name: bootstrap, context: {cluster: orch, user: bootstrap}}]
current-context: bootstrap
`)
writeFileSync(join(node, 'ca.crt'), caPem)
writeFileSync(join(node, 'config.yaml'), `apiVersion: orchlet.config.orch.io/v1beta1
kind: OrchletConfiguration
address: 127.0.0.1
port: 0
readOnlyPort: 0
healthzPort: 0
rotateCertificates: true
serverTLSBootstrap: true
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: ${JSON.stringify(join(node, 'ca.crt'))}}
authorization: {mode: Webhook}
`)
const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'agent/cli/main.ts'),
  '--config', join(node, 'config.yaml'), '--bootstrap-orchconfig', join(node, 'bootstrap.conf'), '--orchconfig', join(node, 'orchlet.conf'),
  '--root-dir', join(node, 'state'), '--cert-dir', join(node, 'pki'), '--hostname-override', NODE, '--node-ip', '127.0.0.1',
  '--container-runtime-endpoint', `unix://${join(node, 'no-runtime.sock')}`
], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
let output = ''
child.stdout.on('data', (d: Buffer) => { output += d.toString() })
child.stderr.on('data', (d: Buffer) => { output += d.toString() })
const logs = (): string => output
t.teardown(async () => {
  if (child.exitCode === null) { child.kill('SIGTERM'); await new Promise(resolve => child.once('exit', resolve)) }
})

t.test('the orchlet joins through an automatically approved client CSR and registers its node', async t => {
  await until('the node to be Ready', async () => (await kubectl('get', 'node', NODE)).stdout.includes(' Ready'), logs)
  const csrs = JSON.parse(await ok('get', 'csr', '-o', 'json')).items as Array<{ spec: { signerName: string, username: string }, status: { conditions?: Array<{ type: string, reason?: string }> } }>
  const client = csrs.find(c => c.spec.signerName === 'orch.io/orch-apiserver-client-orchlet')
  t.equal(client?.spec.username, `system:bootstrap:${token.split('.')[0]}`, 'asked for with the bootstrap token')
  t.equal(client?.status.conditions?.find(c => c.type === 'Approved')?.reason, 'AutoApproved')
  t.match(readFileSync(join(node, 'orchlet.conf'), 'utf8'), /orchlet-client-current\.pem/, 'the orchconfig names the issued pair')
})

t.test('an administrator approves the serving CSR; kubectl logs then reaches the orchlet, verified', async t => {
  const serving = await until('the serving CSR', async () => {
    const items = JSON.parse(await ok('get', 'csr', '-o', 'json')).items as Array<{ metadata: { name: string }, spec: { signerName: string, username: string } }>
    return items.find(c => c.spec.signerName === 'orch.io/orchlet-serving')
  }, logs)
  t.equal(serving.spec.username, `system:node:${NODE}`, 'asked for by the node itself')
  t.match(await ok('certificate', 'approve', serving.metadata.name), /approved/)
  await ok('run', 'hello', '--image=localhost/e2e/tool:1', '--restart=Never',
    `--overrides=${JSON.stringify({ spec: { nodeName: NODE, runtimeClassName: 'wasm' } })}`, '--command', '--', 'tool', 'echo', 'hello from the edge')
  await until('the pod to finish', async () => JSON.parse(await ok('get', 'pod', 'hello', '-o', 'json')).status.phase === 'Succeeded', logs)
  const got = await until('the logs', async () => {
    const r = await kubectl('logs', 'hello')
    return r.code === 0 ? r.stdout : undefined
  }, logs, 30_000)
  t.match(got, 'hello from the edge')
})
