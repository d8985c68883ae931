import t from 'tap'
import { loadOrchletConfig } from '../config/load.js'
import { configzOf } from './configz.js'

t.test('/configz shows the running configuration in OrchletConfiguration\'s field layout and spelling', async t => {
  const config = await loadOrchletConfig(['--max-pods=42', '--eviction-hard=memory.available<200Mi,nodefs.available<5%', '--system-reserved=cpu=500m,memory=1Gi', '--node-status-update-frequency=20s'], {}, { logger: { warn () {} } })
  const z = configzOf(config).orchletconfig as any
  t.equal(z.maxPods, 42)
  t.equal(z.nodeStatusUpdateFrequency, '20s', 'durations as Go prints them')
  t.equal(z.fileCheckFrequency, '20s')
  t.same(z.evictionHard, { 'memory.available': '200Mi', 'nodefs.available': '5%' })
  t.same(z.systemReserved, { cpu: '500m', memory: '1Gi' })
  t.equal(z.authentication.anonymous.enabled, true, 'dotted fields become nested objects')
  t.equal(z.authorization.mode, 'AlwaysAllow')
  t.equal(z.authentication.webhook.cacheTTL, '2m0s')
  t.equal(z.registerNode, true)
  t.notOk('certDir' in z, 'flag-only options are not configuration fields')
  t.same(JSON.parse(JSON.stringify(configzOf(config))), configzOf(config), 'plain JSON')
})
