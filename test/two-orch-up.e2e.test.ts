// Two `orch up` on one machine with default orchlet ports: the second (and here even the first, with the defaults held
// by another program) takes free ports instead of dying on 10250/10248; --orchlet-arg reaches the local orchlet.
import t from 'tap'
import { createServer, type Server } from 'node:net'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runKubectl, startOrch } from './orch-process.js'

const dir = mkdtempSync(join(tmpdir(), 'orch-two-up-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))

async function listen (port: number): Promise<Server | undefined> {
  return await new Promise(resolve => {
    const s = createServer()
    s.once('error', () => resolve(undefined))
    s.listen(port, '127.0.0.1', () => resolve(s))
  })
}

async function freePort (): Promise<number> {
  const s = (await listen(0))!
  const port = (s.address() as { port: number }).port
  await new Promise(resolve => s.close(resolve))
  return port
}

t.test('two orch up side by side, with 10250 and 10248 taken, both get a Ready node', async t => {
  // Whoever holds the default ports (this test, or something else on the machine), they are taken.
  const holders = [await listen(10250), await listen(10248)]
  t.teardown(() => { for (const h of holders) h?.close() })
  const noRuntime = `unix://${join(dir, 'no-runtime.sock')}`
  const args = (node: string, port: number): string[] =>
    ['--port', String(port), '--node-name', node, '--container-runtime-endpoint', noRuntime, '--orchlet-arg=--max-pods=7']
  const a = await startOrch(join(dir, 'a'), 60_000, args('box-a', await freePort()))
  t.teardown(() => a.stop())
  const b = await startOrch(join(dir, 'b'), 60_000, args('box-b', await freePort()))
  t.teardown(() => b.stop())
  for (const [orch, node] of [[a, 'box-a'], [b, 'box-b']] as const) {
    const deadline = Date.now() + 60_000
    let out = ''
    for (;;) {
      const r = await runKubectl(orch.kubeconfig, join(dir, `cache-${node}`), ['get', 'node', node, '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status} {.status.capacity.pods}'])
      out = r.stdout
      if (out === 'True 7') break
      if (Date.now() > deadline) break
      await new Promise(resolve => setTimeout(resolve, 500))
    }
    t.equal(out, 'True 7', `${node} is Ready with the --orchlet-arg max-pods`)
  }
})
