// The token cleaner deletes expired bootstrap token Secrets and nothing else.
import t from 'tap'
import { until } from '../testing.js'
import { openFixture, silentLogger } from '../../registry/testing.js'
import { inProcessClient } from '../client/in-process.js'
import { RESOURCES } from '../client/types.js'
import { startControllerManager } from '../manager.js'
import { bootstrapTokenSecret } from '../../cli/token.js'

t.test('expired bootstrap token Secrets are deleted; valid ones, unlimited ones and other Secrets stay', async t => {
  const fx = await openFixture()
  t.teardown(() => fx.close())
  const client = inProcessClient(fx.registry, 'orch-controller-manager')
  const secrets = client.resource(RESOURCES.secrets)
  const now = Date.now()
  await secrets.create('kube-system', bootstrapTokenSecret('old111', '0123456789abcdef', { expiresAt: new Date(now - 60_000), groups: [] }))
  await secrets.create('kube-system', bootstrapTokenSecret('soon11', '0123456789abcdef', { expiresAt: new Date(now + 1500), groups: [] }))
  await secrets.create('kube-system', bootstrapTokenSecret('new111', '0123456789abcdef', { expiresAt: new Date(now + 3600_000), groups: [] }))
  await secrets.create('kube-system', bootstrapTokenSecret('ever11', '0123456789abcdef', { groups: [] }))
  await secrets.create('kube-system', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'other' }, stringData: { expiration: '2000-01-01T00:00:00Z' } })
  const cm = startControllerManager({ client, logger: silentLogger, controllers: ['tokencleaner'] })
  t.teardown(() => cm.stop())
  const names = async (): Promise<string[]> => (await secrets.list('kube-system')).items.map(s => String(s.metadata.name)).sort()
  await until(async () => !(await names()).includes('bootstrap-token-old111'))
  await until(async () => !(await names()).includes('bootstrap-token-soon11'), 10_000)
  t.same(await names(), ['bootstrap-token-ever11', 'bootstrap-token-new111', 'other'])
})
