import t from 'tap'
import { createCa, issueCertificate } from '../../../apiserver/pki/certs.js'
import { nodeTemplate } from './csr.js'
import { canonicalIp, satisfiesTemplate } from './template-match.js'

t.test('IPv6 addresses compare in one canonical form; IPv4 is unchanged', async t => {
  t.equal(canonicalIp('fd00::5'), 'fd00:0:0:0:0:0:0:5')
  t.equal(canonicalIp('FD00:0000::0005'), 'fd00:0:0:0:0:0:0:5')
  t.equal(canonicalIp('::1'), '0:0:0:0:0:0:0:1')
  t.equal(canonicalIp('10.0.0.1'), '10.0.0.1')
})

t.test('a certificate satisfies the template only with the same subject and the same names', async t => {
  const ca = await createCa('ca')
  const pair = await issueCertificate(ca, { subject: { commonName: 'system:node:n1', organizations: ['system:nodes'] }, usage: 'server', hosts: ['n1', '10.0.0.1', 'fd00::1'] })
  t.ok(satisfiesTemplate(pair.certPem, nodeTemplate('n1', { dnsNames: ['n1'], ipAddresses: ['fd00:0::1', '10.0.0.1'] })))
  t.notOk(satisfiesTemplate(pair.certPem, nodeTemplate('n1', { dnsNames: ['n1'], ipAddresses: ['10.0.0.1'] })), 'an address gone')
  t.notOk(satisfiesTemplate(pair.certPem, nodeTemplate('n2', { dnsNames: ['n1'], ipAddresses: ['10.0.0.1', 'fd00::1'] })), 'another node')
  const client = await issueCertificate(ca, { subject: { commonName: 'system:node:n1', organizations: ['system:nodes'] }, usage: 'client' })
  t.ok(satisfiesTemplate(client.certPem, nodeTemplate('n1')))
  const admin = await issueCertificate(ca, { subject: { commonName: 'admin', organizations: ['system:masters'] }, usage: 'client' })
  t.notOk(satisfiesTemplate(admin.certPem, nodeTemplate('n1')))
  t.notOk(satisfiesTemplate('not a certificate', nodeTemplate('n1')))
})
