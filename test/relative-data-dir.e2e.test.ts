// `orch up` the way `npm start` runs it: a data directory relative to the working directory (`./.orch`), the local
// orchlet included; every path written into the generated configuration must still be found.

import t from 'tap'
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { runKubectl } from './orch-process.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const cwd = mkdtempSync(join(tmpdir(), 'orch-relative-'))
t.teardown(() => rmSync(cwd, { recursive: true, force: true }))

t.test('orch up --data-dir ./.orch serves and its node becomes Ready', async t => {
  // tsx found from this repository, not from the working directory.
  const child = spawn(process.execPath, ['--import', import.meta.resolve('tsx'), join(ROOT, 'apiserver/cli/run.ts'), 'up', '--data-dir', './.orch', '--port', '0', '--node-name', 'rel-node'],
    { cwd, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.on('data', (d: Buffer) => { output += d.toString() })
  child.stderr.on('data', (d: Buffer) => { output += d.toString() })
  const exited = new Promise<number | null>(resolve => child.once('exit', code => resolve(code)))
  t.teardown(async () => { if (child.exitCode === null) { child.kill('SIGTERM'); await exited } })
  const kubeconfig = join(cwd, '.orch', 'kubeconfig')
  let ready = false
  for (let i = 0; i < 240 && !ready; i++) {
    if (child.exitCode !== null) break
    if (existsSync(kubeconfig)) ready = (await runKubectl(kubeconfig, join(cwd, 'cache'), ['get', 'node', 'rel-node'])).stdout.includes(' Ready')
    if (!ready) await new Promise(resolve => setTimeout(resolve, 250))
  }
  t.ok(ready, `the node is Ready\n${output.slice(-2000)}`)
  t.equal(child.exitCode, null, 'still running')
  child.kill('SIGTERM')
  t.equal(await exited, 0, 'exits 0 on SIGTERM')
})
