// `orchlet --runonce` starts the local pods, prints how each one started and exits.
import t from 'tap'
import { execFile } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { compileFixture } from '../agent/runtime/wasm/fixtures/compile.js'
import { buildWasmImageLayout, layoutTar } from '../agent/runtime/oci/layout-writer.js'

const root = mkdtempSync(join(tmpdir(), 'orchlet-runonce-'))
t.teardown(() => rmSync(root, { recursive: true, force: true }))
const manifests = join(root, 'manifests')
mkdirSync(manifests)
mkdirSync(join(root, 'state', 'wasm', 'import'), { recursive: true })
writeFileSync(join(root, 'state', 'wasm', 'import', 'tool.tar'), layoutTar(buildWasmImageLayout({ module: await compileFixture('tool'), refName: 'localhost/e2e/tool:1' })))

function manifest (name: string, image: string, args: string[]): void {
  writeFileSync(join(manifests, `${name}.yaml`), `apiVersion: v1
kind: Pod
metadata: {name: ${name}}
spec:
  runtimeClassName: wasm
  terminationGracePeriodSeconds: 1
  containers: [{name: main, image: "${image}", imagePullPolicy: Never, command: [tool], args: ${JSON.stringify(args)}}]
`)
}

function runOnce (): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise(resolve => {
    execFile(process.execPath, ['--import', 'tsx', 'agent/cli/main.ts', '--runonce', '--enable-server=false', '--healthz-port', '0',
      '--pod-manifest-path', manifests, '--root-dir', join(root, 'state'), '--hostname-override', 'box',
      '--runtime-request-timeout', '3s', '--container-runtime-endpoint', `unix://${join(root, 'none.sock')}`],
    { timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err === null ? 0 : typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1, stdout, stderr })
    })
  })
}

t.test('exits 0 once every local pod is running', async t => {
  manifest('web', 'localhost/e2e/tool:1', ['spin'])
  const r = await runOnce()
  t.equal(r.code, 0, r.stderr)
  t.equal(r.stdout, 'default/web-box: Running\n')
})

t.test('exits 1 and says why when a pod cannot start', async t => {
  manifest('broken', 'localhost/e2e/absent:1', ['spin'])
  const r = await runOnce()
  t.equal(r.code, 1)
  t.match(r.stdout, /default\/broken-box: Pending \(ErrImageNeverPull: /)
  t.match(r.stdout, /default\/web-box: Running/)
})
