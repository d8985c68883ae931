// orch up's generated orchlet configuration: what it turns on beyond the orchlet's defaults.
import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pino from 'pino'
import { prepareLocalNode } from './local-node.js'

t.test('the generated configuration learns memory pressure from the kernel\'s memcg notification where available', async t => {
  const dataDir = mkdtempSync(join(tmpdir(), 'orch-local-node-'))
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }))
  const p = await prepareLocalNode({ dataDir, kubeconfigPath: join(dataDir, 'orchlet.kubeconfig'), nodeName: 'box', port: 0, logger: pino({ level: 'silent' }) })
  t.equal(p.config.kernelMemcgNotification, true)
  t.match(p.generated?.text, /^kernelMemcgNotification: true$/m)
  const off = await prepareLocalNode({ dataDir, kubeconfigPath: join(dataDir, 'orchlet.kubeconfig'), nodeName: 'box', port: 0, logger: pino({ level: 'silent' }), extraArgs: ['--kernel-memcg-notification=false'] })
  t.equal(off.config.kernelMemcgNotification, false, '--orchlet-arg turns it off')
})
