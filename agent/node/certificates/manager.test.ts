import t, { type Test } from 'tap'
import { FakeClock } from '../../../apiserver/controllers/clock.js'
import { issueCertificate } from '../../../apiserver/pki/certs.js'
import type { ApiClient } from '../../../apiserver/client/rest-client.js'
import { nodeTemplate } from './csr.js'
import { createFileStore } from './file-store.js'
import { createCertificateManager, retryDelay, rotationDeadline, type CertificateManager } from './manager.js'
import type { CertKeyPair } from './pem.js'
import { CLIENT_SIGNER } from './request.js'
import { nameOf, newClient, silent, specOf, startCsrApi, type CsrApi } from './testing.js'

t.test('the renewal deadline is notBefore plus 70% to 90% of the lifetime', async t => {
  const pair = { certPem: '', keyPem: '', notBefore: 1000, notAfter: 1000 + 100_000 }
  t.equal(rotationDeadline(pair, () => 0), 1000 + 70_000)
  t.equal(rotationDeadline(pair, () => 0.5), 1000 + 80_000)
  t.equal(rotationDeadline(pair, () => 1), 1000 + 90_000)
})

t.test('failed attempts are retried after 2s, 4s, 8s, 16s, then every 32s, with up to 10% jitter', async t => {
  t.same([1, 2, 3, 4, 5, 9].map(n => retryDelay(n, () => 0)), [2000, 4000, 8000, 16_000, 32_000, 32_000])
  t.equal(retryDelay(1, () => 1), 2200)
})

// The signer stamps real time: the first certificate is short so the fake clock, moved to its deadline, stays before the
// deadline of the renewed one (which the signer backdates 5 minutes and makes last 15).
interface Setup { api: CsrApi; clock: FakeClock; manager: CertificateManager; rotated: CertKeyPair[]; dir: string }

async function setup (t: Test, o: { initialLifetimeS?: number; initial?: boolean; fallback?: ApiClient } = {}): Promise<Setup> {
  const api = await startCsrApi(t)
  const client = newClient(api.url)
  t.teardown(() => client.close())
  const dir = t.testdir()
  let initial: { certPem: string; keyPem: string } | undefined
  if (o.initial !== false) initial = await issueCertificate(api.ca, { subject: { commonName: 'system:node:n1', organizations: ['system:nodes'] }, usage: 'client', validitySeconds: o.initialLifetimeS ?? 300 })
  const clock = new FakeClock(Date.now())
  const rotated: CertKeyPair[] = []
  const manager = createCertificateManager({
    name: 'client',
    store: createFileStore({ dir, prefix: 'orchlet-client', initial, now: () => clock.now() }),
    template: () => nodeTemplate('n1'),
    signerName: CLIENT_SIGNER,
    purpose: 'client',
    client: () => client,
    fallbackClient: o.fallback === undefined ? undefined : () => o.fallback,
    expirationSeconds: 600,
    onRotated: p => rotated.push(p),
    logger: silent,
    clock,
    random: () => 0.5,
    pollMs: 2000
  })
  t.teardown(() => manager.stop())
  return { api, clock, manager, rotated, dir }
}

const pending = (c: Record<string, unknown>): boolean => (c.status as { certificate?: string } | undefined)?.certificate === undefined

t.test('renews at the deadline: a new request, the new pair stored and handed on, the next deadline from it', async t => {
  const { api, clock, manager, rotated } = await setup(t)
  const first = manager.current()!
  manager.start()
  const due = manager.nextAttemptAt()!
  t.equal(due, rotationDeadline(first, () => 0.5), 'scheduled at 80% with this random source')
  clock.advance(due - clock.now() - 1)
  t.same(await api.list(), [], 'nothing asked before the deadline')
  clock.advance(1)
  const done = manager.attempted()
  const csr = await api.waitFor(() => true)
  t.match(nameOf(csr), /^csr-/)
  t.equal(specOf(csr).signerName, CLIENT_SIGNER)
  t.same(specOf(csr).usages, ['digital signature', 'client auth'])
  t.equal(specOf(csr).expirationSeconds, 600)
  await api.decide(nameOf(csr), 'Approved')
  t.equal(await done, true)
  t.equal(rotated.length, 1)
  t.not(manager.current()!.certPem, first.certPem)
  t.equal(manager.current()!.notAfter - manager.current()!.notBefore, (600 + 300) * 1000, '600s asked for, 5 minutes backdated by the signer')
  t.equal(manager.nextAttemptAt(), rotationDeadline(manager.current()!, () => 0.5))
})

t.test('with no certificate at all it asks at once', async t => {
  const { api, clock, manager } = await setup(t, { initial: false })
  t.equal(manager.current(), undefined)
  manager.start()
  t.equal(manager.nextAttemptAt(), clock.now())
  const done = manager.attempted()
  clock.advance(0)
  await api.decide(nameOf(await api.waitFor(pending)), 'Approved')
  t.equal(await done, true)
  t.ok(manager.current())
})

t.test('a denied request is retried after the back-off, and the next one can succeed', async t => {
  const { api, clock, manager, rotated } = await setup(t, { initial: false })
  manager.start()
  let done = manager.attempted()
  clock.advance(0)
  await api.decide(nameOf(await api.waitFor(pending)), 'Denied')
  t.equal(await done, false)
  t.equal(rotated.length, 0)
  t.ok(manager.nextAttemptAt()! - clock.now() >= 2000 && manager.nextAttemptAt()! - clock.now() <= 2200, 'first retry after about 2s')
  done = manager.attempted()
  clock.advance(2200)
  const second = await api.waitFor(c => pending(c) && ((c.status as { conditions?: unknown[] } | undefined)?.conditions ?? []).length === 0)
  await api.decide(nameOf(second), 'Approved')
  t.equal(await done, true)
  t.equal(rotated.length, 1)
})

t.test('once the certificate has expired, requests go through the fallback (bootstrap) connection', async t => {
  const api0 = await startCsrApi(t)
  const fallback = newClient(api0.url)
  t.teardown(() => fallback.close())
  const { clock, manager } = await setup(t, { initialLifetimeS: 60, fallback })
  clock.advance(120_000)
  t.ok(clock.now() > manager.current()!.notAfter, 'expired by the manager\'s clock')
  manager.start()
  clock.advance(0)
  const csr = await api0.waitFor(pending)
  t.match(nameOf(csr), /^node-csr-/, 'made on the fallback server, named as a bootstrap request')
})

t.test('stop cancels the scheduled renewal', async t => {
  const { clock, manager } = await setup(t)
  manager.start()
  t.equal(clock.pending(), 1)
  manager.stop()
  t.equal(clock.pending(), 0)
  t.equal(manager.nextAttemptAt(), undefined)
})

t.test('a stop during a request abandons it; a start afterwards schedules afresh', async t => {
  const { api, clock, manager, rotated } = await setup(t, { initial: false })
  manager.start()
  clock.advance(0)
  const first = await api.waitFor(pending)
  manager.stop()
  await new Promise(resolve => setTimeout(resolve, 100))
  manager.start()
  const done = manager.attempted()
  clock.advance(0)
  const second = await api.waitFor(c => pending(c) && nameOf(c) !== nameOf(first))
  await api.decide(nameOf(first), 'Approved')
  await api.decide(nameOf(second), 'Approved')
  t.equal(await done, true)
  t.equal(rotated.length, 1, 'only the live attempt stores and hands on a pair')
  t.equal(clock.pending(), 1, 'one renewal timer')
})

t.test('a renewal months away is waited for in timer steps no longer than Node.js timers take', async t => {
  const { clock, manager, api } = await setup(t, { initialLifetimeS: 365 * 24 * 3600 })
  const delays: number[] = []
  const after = clock.after.bind(clock)
  clock.after = (ms: number, fn: () => void) => { delays.push(ms); return after(ms, fn) }
  manager.start()
  const due = manager.nextAttemptAt()!
  t.ok(due - clock.now() > 2 ** 31, 'the deadline is beyond one timer')
  t.ok(delays.every(d => d <= 2 ** 31 - 1), `every timer within 2^31-1 ms (${delays.join(', ')})`)
  clock.advance(2 ** 31 - 1)
  t.same(await api.list(), [], 'the first step ends without a request')
  t.equal(manager.nextAttemptAt(), due, 'still due at the deadline')
})
