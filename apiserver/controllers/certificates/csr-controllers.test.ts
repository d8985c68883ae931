// csrsigning and csrapproving on a real registry: approved requests signed by the CA with their subject, usages and
// lifetime; rule breakers Failed; orchlet client requests approved only for requesters the authorizer allows.
import t, { type Test } from 'tap'
import { X509Certificate } from 'node:crypto'
import * as x509 from '@peculiar/x509'
import { until } from '../testing.js'
import { openFixture, silentLogger } from '../../registry/testing.js'
import { inProcessClient } from '../client/in-process.js'
import { RESOURCES, type Obj } from '../client/types.js'
import { startControllerManager } from '../manager.js'
import { createCa } from '../../pki/certs.js'
import { createCsr, type CsrRequestOptions } from '../../pki/csr.js'
import type { RequestContext, UserInfo } from '../../registry/types.js'
import type { Attributes, Authorizer } from '../../auth/types.js'

const b64 = (s: string): string => Buffer.from(s).toString('base64')

async function csrObject (name: string, subject: CsrRequestOptions, spec: Obj): Promise<Obj> {
  const { csrPem } = await createCsr(subject)
  return { apiVersion: 'certificates.orch.io/v1', kind: 'CertificateSigningRequest', metadata: { name }, spec: { request: b64(csrPem), ...spec } }
}

const as = (user: UserInfo): RequestContext => ({ user, dryRun: false, fieldValidation: 'Strict', warnings: [] })

async function setup (t: Test, authorizer?: Authorizer, perSigner = false): Promise<{ create(user: UserInfo, obj: Obj): Promise<void>, get(name: string): Promise<Obj | undefined>, approve(name: string): Promise<void>, caPem: string }> {
  const fx = await openFixture()
  t.teardown(() => fx.close())
  const ca = await createCa('test-ca')
  const client = inProcessClient(fx.registry, 'orch-controller-manager')
  const cm = startControllerManager({
    client, logger: silentLogger, controllers: ['csrsigning', 'csrapproving'],
    settings: {
      csrSigning: perSigner ? { signers: { 'orch.io/orchlet-serving': ca } } : { ca, durationMs: 24 * 3600_000 },
      csrApprovalAuthorizer: authorizer
    }
  })
  t.teardown(() => cm.stop())
  const handler = fx.registry.handler('certificates.orch.io', 'v1', 'certificatesigningrequests')!
  const csrs = client.resource(RESOURCES.certificateSigningRequests)
  return {
    caPem: ca.certPem,
    async create (user, obj) { await handler.create(as(user), '', { object: obj, duplicateFields: [] }) },
    get: async name => await csrs.get('', name),
    async approve (name) {
      const cur = (await csrs.get('', name))!
      await csrs.update('', { ...cur, status: { conditions: [{ type: 'Approved', status: 'True', reason: 'Test' }] } }, 'approval')
    }
  }
}

const alice: UserInfo = { username: 'alice', groups: ['system:authenticated'] }

t.test('an approved client request is signed by the CA with its subject, the usages and the requested lifetime', async t => {
  const s = await setup(t)
  await s.create(alice, await csrObject('alice', { commonName: 'alice', organizations: ['dev', 'ops'] },
    { signerName: 'orch.io/orch-apiserver-client', usages: ['client auth', 'digital signature'], expirationSeconds: 3600 }))
  await new Promise(resolve => setTimeout(resolve, 200))
  t.equal((await s.get('alice'))?.status?.certificate, undefined, 'nothing is signed before approval')
  await s.approve('alice')
  const done = await until(async () => { const c = await s.get('alice'); return c?.status?.certificate !== undefined ? c : undefined })
  const pem = Buffer.from(done.status.certificate, 'base64').toString()
  const cert = new X509Certificate(pem)
  t.ok(cert.verify(new X509Certificate(s.caPem).publicKey), 'signed by the cluster CA')
  t.same(cert.subject.split('\n').sort(), ['CN=alice', 'O=dev', 'O=ops'], 'the subject of the request')
  const life = Date.parse(cert.validTo) - Date.parse(cert.validFrom)
  t.ok(Math.abs(life - (3600 + 300) * 1000) <= 2000, `one hour (+5 minutes backdated): ${life}`)
  const peculiar = new x509.X509Certificate(pem)
  const eku = peculiar.getExtension(x509.ExtendedKeyUsageExtension)
  t.same(eku?.usages, [x509.ExtendedKeyUsage.clientAuth])
  t.equal(peculiar.getExtension(x509.KeyUsagesExtension)?.usages, x509.KeyUsageFlags.digitalSignature)
  t.equal(peculiar.getExtension(x509.BasicConstraintsExtension)?.ca, false)
})

t.test('an approved request that breaks its signer\'s rules is marked Failed, not signed', async t => {
  const s = await setup(t)
  await s.create(alice, await csrObject('odd', { commonName: 'alice' }, { signerName: 'orch.io/orch-apiserver-client', usages: ['server auth'] }))
  await s.approve('odd')
  const failed = await until(async () => { const c = await s.get('odd'); return (c?.status?.conditions ?? []).find((x: Obj) => x.type === 'Failed') })
  t.match(failed, { status: 'True', reason: 'SignerValidationFailure', message: 'invalid usage for client certificate: server auth' })
  t.equal((await s.get('odd'))?.status?.certificate, undefined)
})

t.test('orchlet client requests are approved for bootstrappers and for the node itself, and then signed', async t => {
  const s = await setup(t)
  const node = { commonName: 'system:node:n1', organizations: ['system:nodes'] }
  const spec = { signerName: 'orch.io/orch-apiserver-client-orchlet', usages: ['digital signature', 'client auth'] }
  await s.create({ username: 'system:bootstrap:abcdef', groups: ['system:bootstrappers', 'system:authenticated'] }, await csrObject('boot', node, spec))
  const boot = await until(async () => { const c = await s.get('boot'); return c?.status?.certificate !== undefined ? c : undefined })
  t.match(boot.status.conditions[0], { type: 'Approved', reason: 'AutoApproved', message: /^Auto approving orchlet client certificate/ })
  await s.create({ username: 'system:node:n1', groups: ['system:nodes', 'system:authenticated'] }, await csrObject('renew', node, spec))
  const renew = await until(async () => { const c = await s.get('renew'); return c?.status?.certificate !== undefined ? c : undefined })
  t.match(renew.status.conditions[0].message, /^Auto approving self orchlet client certificate/)
  await s.create(alice, await csrObject('sneaky', node, spec))
  await new Promise(resolve => setTimeout(resolve, 300))
  t.same((await s.get('sneaky'))?.status?.conditions ?? [], [], 'other users are not approved automatically')
})

t.test('the approval check is the injected authorizer, asked as a SubjectAccessReview would be', async t => {
  const seen: Attributes[] = []
  const authorizer: Authorizer = { async authorize (a) { seen.push(a); return { decision: a.user.username === 'robot' ? 'allow' : 'noOpinion', reason: '' } } }
  const s = await setup(t, authorizer)
  const node = { commonName: 'system:node:n2', organizations: ['system:nodes'] }
  const spec = { signerName: 'orch.io/orch-apiserver-client-orchlet', usages: ['digital signature', 'client auth'] }
  await s.create({ username: 'robot', uid: 'r-1', groups: ['bots'] }, await csrObject('r', node, spec))
  const done = await until(async () => { const c = await s.get('r'); return c?.status?.certificate !== undefined ? c : undefined })
  t.equal(done.status.conditions[0].type, 'Approved')
  t.match(seen[0], { verb: 'create', apiGroup: 'certificates.k8s.io', resource: 'certificatesigningrequests', subresource: 'nodeclient', user: { username: 'robot', uid: 'r-1', groups: ['bots'] } })
  await s.create({ username: 'system:bootstrap:abcdef', groups: ['system:bootstrappers'] }, await csrObject('b', node, spec))
  await new Promise(resolve => setTimeout(resolve, 300))
  t.same((await s.get('b'))?.status?.conditions ?? [], [], 'the default policy is replaced, not added to')
})

t.test('with per-signer CAs, a signer without one leaves its requests alone', async t => {
  const s = await setup(t, undefined, true)
  await s.create(alice, await csrObject('client', { commonName: 'alice' }, { signerName: 'orch.io/orch-apiserver-client', usages: ['client auth'] }))
  await s.create(alice, await csrObject('serving', { commonName: 'system:node:n1', organizations: ['system:nodes'], dnsNames: ['n1'] },
    { signerName: 'orch.io/orchlet-serving', usages: ['digital signature', 'server auth'] }))
  await s.approve('client')
  await s.approve('serving')
  const served = await until(async () => { const c = await s.get('serving'); return c?.status?.certificate !== undefined ? c : undefined })
  const cert = new X509Certificate(Buffer.from(served.status.certificate, 'base64'))
  t.equal(cert.subjectAltName, 'DNS:n1', 'the serving certificate carries the requested names')
  t.equal(lifetime(cert), 365 * 24 * 3600, 'the default signing duration: one year')
  await new Promise(resolve => setTimeout(resolve, 200))
  t.equal((await s.get('client'))?.status?.certificate, undefined)
})

const lifetime = (c: X509Certificate): number => (Date.parse(c.validTo) - Date.parse(c.validFrom)) / 1000
