// What each built-in signer accepts, and the lifetime of what it issues.
import t from 'tap'
import { createCsr, parseCsr, type CsrRequestOptions } from '../../pki/csr.js'
import { APISERVER_CLIENT, APISERVER_CLIENT_ORCHLET, ORCHLET_SERVING, signerVerdict, validityFor } from './signer-rules.js'

const csr = async (o: CsrRequestOptions): Promise<ReturnType<typeof parseCsr>> => parseCsr((await createCsr(o)).csrPem)
const node = { commonName: 'system:node:n1', organizations: ['system:nodes'] }

t.test('orchlet client certificates: CN system:node:<name>, O exactly system:nodes, no SANs, the client usages', async t => {
  const usages = ['digital signature', 'client auth']
  t.same(signerVerdict(APISERVER_CLIENT_ORCHLET, await csr(node), usages), { problem: undefined })
  t.same(signerVerdict(APISERVER_CLIENT_ORCHLET, await csr(node), ['key encipherment', ...usages]), { problem: undefined }, 'key encipherment may be named too')
  const cases: Array<[string, CsrRequestOptions, string[], string]> = [
    ['another organization', { ...node, organizations: ['system:nodes', 'x'] }, usages, 'subject organization is not system:nodes'],
    ['no organization', { commonName: 'system:node:n1' }, usages, 'subject organization is not system:nodes'],
    ['a DNS name', { ...node, dnsNames: ['n1'] }, usages, 'DNS subjectAltNames are not allowed'],
    ['an IP address', { ...node, ipAddresses: ['10.0.0.1'] }, usages, 'IP subjectAltNames are not allowed'],
    ['another common name', { ...node, commonName: 'alice' }, usages, 'subject common name does not begin with system:node:'],
    ['server usages', node, ['digital signature', 'server auth'], 'usages did not match [client auth digital signature key encipherment]']
  ]
  for (const [what, o, u, want] of cases) t.same(signerVerdict(APISERVER_CLIENT_ORCHLET, await csr(o), u), { problem: want }, what)
})

t.test('orchlet serving certificates: the serving usages, O system:nodes, DNS or IP names, CN system:node:<name>', async t => {
  const usages = ['digital signature', 'key encipherment', 'server auth']
  t.same(signerVerdict(ORCHLET_SERVING, await csr({ ...node, dnsNames: ['n1'], ipAddresses: ['10.0.0.1'] }), usages), { problem: undefined })
  t.same(signerVerdict(ORCHLET_SERVING, await csr(node), usages), { problem: 'DNS or IP subjectAltName is required' })
  t.same(signerVerdict(ORCHLET_SERVING, await csr({ ...node, dnsNames: ['n1'] }), ['client auth']), { problem: 'usages did not match [digital signature key encipherment server auth]' })
  t.same(signerVerdict(ORCHLET_SERVING, await csr({ ...node, commonName: 'n1', dnsNames: ['n1'] }), usages), { problem: 'subject common name does not begin with system:node:' })
})

t.test('API server client certificates: client auth required, only signing and encipherment besides', async t => {
  const alice = await csr({ commonName: 'alice', organizations: ['dev'] })
  t.same(signerVerdict(APISERVER_CLIENT, alice, ['client auth']), { problem: undefined })
  t.same(signerVerdict(APISERVER_CLIENT, alice, ['client auth', 'server auth']), { problem: 'invalid usage for client certificate: server auth' })
  t.same(signerVerdict(APISERVER_CLIENT, alice, ['digital signature']), { problem: 'missing required usage for client certificate: client auth' })
  t.equal(signerVerdict('example.com/other', alice, ['client auth']), undefined, 'signers orch does not run are left alone')
})

t.test('lifetime: backdated 5 minutes, the shorter of the signing duration and the request, never past the CA', async t => {
  const now = Date.parse('2026-01-01T00:00:00Z')
  const year = 365 * 24 * 3600_000
  const caEnd = new Date(now + 10 * year)
  const long = validityFor(now, year, undefined, caEnd)
  t.equal(long.notBefore.getTime(), now - 300_000)
  t.equal(long.notAfter.getTime(), now + year - 300_000, 'a long lifetime is backdated at both ends')
  const short = validityFor(now, year, 3600, caEnd)
  t.equal(short.notAfter.getTime(), now + 3600_000, 'a short one keeps its end')
  t.equal(validityFor(now, 3600_000, 7200, caEnd).notAfter.getTime(), now + 3600_000, 'the signing duration caps the request')
  t.equal(validityFor(now, year, undefined, new Date(now + 3600_000)).notAfter.getTime(), now + 3600_000, 'the CA end caps both')
  t.throws(() => validityFor(now, year, undefined, new Date(now - 1)), /the signer has expired/)
})
