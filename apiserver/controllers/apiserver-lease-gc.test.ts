// Identity Lease garbage collection: a stopped API server's Lease goes once expired; live and unlabelled ones stay.
import t from 'tap'
import { openFixture, silentLogger } from '../registry/testing.js'
import { inProcessClient } from './client/in-process.js'
import { RESOURCES, type Obj } from './client/types.js'
import { FakeClock } from './clock.js'
import { ApiServerIdentity } from './apiserver-identity.js'
import { ApiServerLeaseGc, IDENTITY_LEASE_GC_PERIOD_MS, identityLeaseExpired } from './apiserver-lease-gc.js'
import { until } from './testing.js'

const micro = (ms: number): string => new Date(ms).toISOString().replace('Z', '000Z')

t.test('a lease expired when renewTime + leaseDurationSeconds is past, or either is missing', async t => {
  const now = Date.parse('2026-03-01T12:00:00Z')
  const lease = (renewMs: number | undefined, seconds: number | undefined): Obj =>
    ({ metadata: {}, spec: { ...(renewMs === undefined ? {} : { renewTime: micro(renewMs) }), ...(seconds === undefined ? {} : { leaseDurationSeconds: seconds }) } })
  t.equal(identityLeaseExpired(lease(now - 3599_000, 3600), now), false, 'renewed within its duration')
  t.equal(identityLeaseExpired(lease(now - 3600_000, 3600), now), false, 'exactly at its end')
  t.equal(identityLeaseExpired(lease(now - 3601_000, 3600), now), true, 'past its end')
  t.equal(identityLeaseExpired(lease(undefined, 3600), now), true, 'no renewTime')
  t.equal(identityLeaseExpired(lease(now, undefined), now), true, 'no duration')
})

t.test("the survivor's collector deletes a stopped API server's identity lease once it expired, and keeps its own", async t => {
  const fx = await openFixture()
  t.teardown(() => fx.close())
  const clock = new FakeClock(Date.now())
  const client = inProcessClient(fx.registry, 'kube-apiserver')
  const leases = client.resource(RESOURCES.leases)
  // Renewals every 10 minutes (10 s in Kubernetes) keep the fake-clock steps few.
  const survivor = new ApiServerIdentity({ client, clock, logger: silentLogger, hostname: 'a', url: 'https://a:6443', renewMs: 600_000 })
  const dead = new ApiServerIdentity({ client, clock, logger: silentLogger, hostname: 'b', url: 'https://b:6443' })
  survivor.start()
  dead.start()
  await until(async () => (await leases.list('kube-system')).items.length === 2)
  // A crash: the dead server's renewal timer is gone, its Lease stays.
  ;(dead as unknown as { stopped: boolean }).stopped = true
  await leases.create('kube-system', { apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name: 'unlabelled', namespace: 'kube-system' },
    spec: { holderIdentity: 'x', leaseDurationSeconds: 10, renewTime: micro(clock.now()) } })
  const gc = new ApiServerLeaseGc({ client, clock, logger: silentLogger })
  gc.start()
  t.teardown(() => { gc.stop(); void survivor.stop() })
  const names = async (): Promise<string[]> => (await leases.list('kube-system')).items.map(l => String(l.metadata.name)).sort()
  const all = [survivor.leaseName, dead.leaseName, 'unlabelled'].sort()
  await new Promise(resolve => setTimeout(resolve, 50))
  t.same(await names(), all, 'nothing is expired at start')
  // Half an hour on: the survivor renewed, the dead lease is within its 3600 s.
  // Each step waits for the survivor's renewal to land, as the real clock would give it time to.
  const step = async (): Promise<void> => {
    clock.advance(600_000)
    await until(async () => (await leases.get('kube-system', survivor.leaseName))?.spec?.renewTime === micro(clock.now()))
  }
  for (let i = 0; i < 3; i++) await step()
  t.same(await gc.collect(), [], 'a pass within the lease duration deletes nothing')
  // The hourly pass at one hour finds the dead lease exactly at its end (not yet expired); the next one removes it.
  const start = clock.now()
  while (clock.now() - start < 2 * IDENTITY_LEASE_GC_PERIOD_MS - 1800_000) await step()
  await until(async () => !(await names()).includes(dead.leaseName))
  t.same(await names(), [survivor.leaseName, 'unlabelled'].sort(), "only the stopped server's identity lease is gone")
})
