import t, { type Test } from 'tap'
import { createPrivateKey, X509Certificate } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { FakeClock } from '../../../apiserver/controllers/clock.js'
import { issueCertificate } from '../../../apiserver/pki/certs.js'
import { parseCsr } from '../../../apiserver/pki/csr.js'
import { writeOrchconfig } from './orchconfig-file.js'
import { createFileStore } from './file-store.js'
import { servingTemplate, setUpCertificates, SERVER_PREFIX, type CertificateSettings } from './orchlet-certificates.js'
import { nameOf, newClient, silent, specOf, startCsrApi, type CsrApi } from './testing.js'

const ADDRESSES = [{ type: 'InternalIP', address: '10.0.0.7' }, { type: 'Hostname', address: 'edge-1.lan' }]

t.test('the serving template: the node name and Hostname addresses as DNS names, the IP addresses as IPs', async t => {
  t.same(servingTemplate('edge-1', ADDRESSES), {
    commonName: 'system:node:edge-1', organizations: ['system:nodes'], dnsNames: ['edge-1', 'edge-1.lan'], ipAddresses: ['10.0.0.7']
  })
  t.equal(servingTemplate('edge-1', []), undefined, 'no addresses yet: nothing to ask for')
})

async function setup (t: Test, settings: Partial<CertificateSettings>): Promise<{ api: CsrApi; dir: string; config: CertificateSettings }> {
  const api = await startCsrApi(t)
  const dir = t.testdir()
  const pair = await issueCertificate(api.ca, { subject: { commonName: 'system:node:edge-1', organizations: ['system:nodes'] }, usage: 'client', validitySeconds: 300 })
  writeFileSync(join(dir, 'given.pem'), pair.certPem + pair.keyPem)
  writeOrchconfig(join(dir, 'orchlet.conf'), { server: api.url, insecureSkipTlsVerify: false }, join(dir, 'given.pem'))
  const config = { orchconfig: join(dir, 'orchlet.conf'), bootstrapOrchconfig: '', certDir: join(dir, 'pki'), rotateCertificates: false, serverTLSBootstrap: false, ...settings }
  return { api, dir, config }
}

const pending = (c: Record<string, unknown>): boolean => ((c.status as { conditions?: unknown[] } | undefined)?.conditions ?? []).length === 0

t.test('without rotation the client is made from --orchconfig and no manager runs', async t => {
  const { config } = await setup(t, {})
  const certs = await setUpCertificates({ config, nodeName: 'edge-1', makeClient: c => newClient(c.server), logger: silent })
  t.teardown(() => { certs.stop(); return certs.client.close() })
  t.equal(certs.clientManager, undefined)
  certs.serve({ updateTls: () => t.fail('no serving certificates without --rotate-server-certificates') }, ADDRESSES)
  t.equal(certs.servingManager(), undefined)
})

t.test('with rotation the client manager starts from the --orchconfig pair', async t => {
  const { config, dir } = await setup(t, { rotateCertificates: true })
  const clock = new FakeClock(Date.now())
  const certs = await setUpCertificates({ config, nodeName: 'edge-1', makeClient: c => newClient(c.server), logger: silent, clock, random: () => 0.5 })
  t.teardown(() => { certs.stop(); return certs.client.close() })
  const given = new X509Certificate(readFileSync(join(dir, 'given.pem'), 'utf8'))
  t.equal(new X509Certificate(certs.clientManager!.current()!.certPem).fingerprint256, given.fingerprint256)
  t.ok(certs.clientManager!.nextAttemptAt()! > clock.now(), 'renewal scheduled ahead')
})

t.test('serving certificates: a request the admin must approve, then the issued pair handed to the server', async t => {
  const { api, config } = await setup(t, { serverTLSBootstrap: true })
  const certs = await setUpCertificates({ config, nodeName: 'edge-1', makeClient: c => newClient(c.server), logger: silent })
  t.teardown(() => { certs.stop(); return certs.client.close() })
  const served: Array<{ cert: Buffer; key: Buffer }> = []
  certs.serve({ updateTls: p => served.push(p) }, ADDRESSES)
  const csr = await api.waitFor(pending)
  t.equal(specOf(csr).signerName, 'orch.io/orchlet-serving')
  t.same(specOf(csr).usages, ['digital signature', 'server auth'])
  const parsed = parseCsr(Buffer.from(specOf(csr).request, 'base64'))
  t.equal(parsed.commonName, 'system:node:edge-1')
  t.same(parsed.organizations, ['system:nodes'])
  t.same(parsed.dnsNames, ['edge-1', 'edge-1.lan'])
  t.same(parsed.ipAddresses, ['10.0.0.7'])
  await new Promise(resolve => setTimeout(resolve, 300))
  t.same(served, [], 'not served before an admin approves')
  const done = certs.servingManager()!.attempted()
  await api.decide(nameOf(csr), 'Approved')
  t.equal(await done, true)
  t.equal(served.length, 1)
  const cert = new X509Certificate(served[0].cert)
  t.ok(cert.checkHost('edge-1.lan') !== undefined && cert.checkIP('10.0.0.7') !== undefined, 'names the node\'s addresses')
  t.ok(cert.checkPrivateKey(createPrivateKey(served[0].key)))
})

t.test('a stored serving pair still valid is served at once and renewed later', async t => {
  const { api, config } = await setup(t, { serverTLSBootstrap: true })
  const stored = await issueCertificate(api.ca, { subject: { commonName: 'system:node:edge-1', organizations: ['system:nodes'] }, usage: 'server', hosts: ['edge-1', 'edge-1.lan', '10.0.0.7'] })
  createFileStore({ dir: config.certDir, prefix: SERVER_PREFIX }).update(stored.certPem, stored.keyPem)
  const certs = await setUpCertificates({ config, nodeName: 'edge-1', makeClient: c => newClient(c.server), logger: silent })
  t.teardown(() => { certs.stop(); return certs.client.close() })
  const served: string[] = []
  certs.serve({ updateTls: p => served.push(p.cert.toString()) }, ADDRESSES)
  t.same(served, [stored.certPem])
  t.ok(certs.servingManager()!.nextAttemptAt()! > Date.now() + 3600_000, 'next renewal far ahead')
})
