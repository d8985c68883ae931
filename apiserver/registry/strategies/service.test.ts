// Service strategy: cluster IP and node port allocation and release.
import t from 'tap'
import { body, ctx, openFixture, type Fixture } from '../testing.js'
import { isStatusError } from '../../errors/status-error.js'
import type { ResourceHandler } from '../types.js'

let fx: Fixture
let svcs: ResourceHandler
t.before(async () => {
  fx = await openFixture({ serviceCIDR: '10.0.0.0/29', nodePortRange: [30000, 30002] })
  svcs = fx.registry.handler('', 'v1', 'services')!
})
t.teardown(async () => { await fx.close() })

const svc = (name: string, spec: Record<string, unknown> = {}): Record<string, unknown> =>
  ({ apiVersion: 'v1', kind: 'Service', metadata: { name }, spec: { ports: [{ port: 80 }], ...spec } })

async function failure (p: Promise<unknown>): Promise<{ code: number, message: string }> {
  try { await p } catch (err) { if (isStatusError(err)) return { code: err.code, message: err.message }; throw err }
  throw new Error('expected failure')
}

t.test('allocates distinct cluster IPs inside the CIDR and keeps them on update', async t => {
  const a = (await svcs.create(ctx(), 'default', body(svc('a')))).object.spec as any
  const b = (await svcs.create(ctx(), 'default', body(svc('b')))).object.spec as any
  t.match(a.clusterIP, /^10\.0\.0\.[1-6]$/); t.match(b.clusterIP, /^10\.0\.0\.[1-6]$/)
  t.not(a.clusterIP, b.clusterIP)
  t.same(a.clusterIPs, [a.clusterIP]); t.equal(a.type, 'ClusterIP')
  const cur = (await svcs.get(ctx(), 'default', 'a', {}) as any).object
  const u = await svcs.update(ctx(), 'default', 'a', body({ ...cur, spec: { ports: [{ port: 81 }] } }))
  t.equal((u.object.spec as any).clusterIP, a.clusterIP)
})

t.test('headless services keep None; an IP in use or out of range is 422', async t => {
  const h = (await svcs.create(ctx(), 'default', body(svc('h', { clusterIP: 'None' })))).object.spec as any
  t.equal(h.clusterIP, 'None')
  const used = ((await svcs.get(ctx(), 'default', 'b', {}) as any).object.spec.clusterIP)
  t.equal((await failure(svcs.create(ctx(), 'default', body(svc('c', { clusterIP: used }))))).code, 422)
  t.equal((await failure(svcs.create(ctx(), 'default', body(svc('d', { clusterIP: '192.168.0.1' }))))).code, 422)
})

t.test('NodePort services get ports from the range; a deleted service releases its IP and port', async t => {
  const n = (await svcs.create(ctx(), 'default', body(svc('np', { type: 'NodePort' })))).object.spec as any
  t.ok(n.ports[0].nodePort >= 30000 && n.ports[0].nodePort <= 30002)
  await svcs.delete(ctx(), 'default', 'np', {})
  const again = (await svcs.create(ctx(), 'default', body(svc('np2', { type: 'NodePort', ports: [{ port: 80, nodePort: n.ports[0].nodePort }], clusterIP: n.clusterIP })))).object.spec as any
  t.equal(again.ports[0].nodePort, n.ports[0].nodePort)
  t.equal(again.clusterIP, n.clusterIP)
})
