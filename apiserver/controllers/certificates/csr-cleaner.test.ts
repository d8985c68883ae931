// csrcleaner: which requests are done with, and their removal on the hourly pass.
import t from 'tap'
import { until } from '../testing.js'
import { openFixture, silentLogger } from '../../registry/testing.js'
import { inProcessClient } from '../client/in-process.js'
import { RESOURCES, type Obj } from '../client/types.js'
import { startControllerManager } from '../manager.js'
import { FakeClock } from '../clock.js'
import { createCa, issueCertificate } from '../../pki/certs.js'
import { createCsr } from '../../pki/csr.js'
import { csrCleanupReason } from './csr-cleaner.js'

const H = 3600_000
const NOW = Date.parse('2026-03-01T12:00:00Z')
const at = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z')

t.test('pending a day, denied or failed an hour, issued an hour or expired: then a request may go', async t => {
  const ca = await createCa('c', new Date(NOW - 48 * H))
  const expired = await issueCertificate(ca, { subject: { commonName: 'x' }, usage: 'client', now: new Date(NOW - 3 * H), validitySeconds: 3600 })
  const valid = await issueCertificate(ca, { subject: { commonName: 'x' }, usage: 'client', now: new Date(NOW), validitySeconds: 3600 })
  const csr = (created: number, conditions: Obj[], certPem = ''): Obj => ({
    metadata: { creationTimestamp: at(created) },
    status: { conditions, ...(certPem === '' ? {} : { certificate: Buffer.from(certPem).toString('base64') }) }
  })
  const cases: Array<[string, Obj, string | undefined]> = [
    ['pending 23h', csr(NOW - 23 * H, []), undefined],
    ['pending 25h', csr(NOW - 25 * H, []), 'pending for more than 24h'],
    ['denied 30m ago', csr(NOW - 2 * H, [{ type: 'Denied', status: 'True', lastUpdateTime: at(NOW - H / 2) }]), undefined],
    ['denied 2h ago', csr(NOW - 2 * H, [{ type: 'Denied', status: 'True', lastUpdateTime: at(NOW - 2 * H) }]), 'denied more than 1h ago'],
    ['failed 2h ago', csr(NOW - 2 * H, [{ type: 'Approved', status: 'True', lastUpdateTime: at(NOW - 2 * H) }, { type: 'Failed', status: 'True', lastUpdateTime: at(NOW - 2 * H) }]), 'failed more than 1h ago'],
    ['approved 2h ago, not issued', csr(NOW - 2 * H, [{ type: 'Approved', status: 'True', lastUpdateTime: at(NOW - 2 * H) }]), undefined],
    ['issued 30m ago', csr(NOW - H, [{ type: 'Approved', status: 'True', lastUpdateTime: at(NOW - H / 2) }], valid.certPem), undefined],
    ['issued 2h ago', csr(NOW - 3 * H, [{ type: 'Approved', status: 'True', lastUpdateTime: at(NOW - 2 * H) }], valid.certPem), 'issued more than 1h ago'],
    ['issued, certificate expired', csr(NOW - H, [{ type: 'Approved', status: 'True', lastUpdateTime: at(NOW - H / 2) }], expired.certPem), 'its certificate expired']
  ]
  for (const [what, obj, want] of cases) t.equal(csrCleanupReason(obj, NOW), want, what)
})

t.test('the hourly pass deletes what is done with and keeps the rest', async t => {
  const fx = await openFixture()
  t.teardown(() => fx.close())
  const clock = new FakeClock(Date.now())
  const client = inProcessClient(fx.registry, 'orch-controller-manager')
  const csrs = client.resource(RESOURCES.certificateSigningRequests)
  for (const name of ['pending', 'denied']) {
    const { csrPem } = await createCsr({ commonName: name })
    await csrs.create('', { apiVersion: 'certificates.orch.io/v1', kind: 'CertificateSigningRequest', metadata: { name },
      spec: { request: Buffer.from(csrPem).toString('base64'), signerName: 'example.com/s', usages: ['client auth'] } })
  }
  const denied = (await csrs.get('', 'denied'))!
  await csrs.update('', { ...denied, status: { conditions: [{ type: 'Denied', status: 'True' }] } }, 'approval')
  const cm = startControllerManager({ client, logger: silentLogger, clock, controllers: ['csrcleaner'] })
  t.teardown(() => cm.stop())
  const names = async (): Promise<string[]> => (await csrs.list('')).items.map(c => String(c.metadata.name)).sort()
  await cm.informers.waitForSync()
  await new Promise(resolve => setTimeout(resolve, 100))
  t.same(await names(), ['denied', 'pending'], 'nothing is old yet')
  clock.advance(2 * H)
  await until(async () => (await names()).length === 1)
  t.same(await names(), ['pending'])
  clock.advance(23 * H)
  await until(async () => (await names()).length === 0)
})
