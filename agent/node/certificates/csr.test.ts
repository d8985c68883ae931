import t from 'tap'
import { generateKeyPairSync } from 'node:crypto'
import { parseAndVerifyCsr } from '../../../apiserver/pki/csr.js'
import { createCsrPem, generatePrivateKey, nodeTemplate, usagesFor } from './csr.js'

t.test('a node client request names system:node:<name> in system:nodes and verifies with its key', async t => {
  const key = await generatePrivateKey()
  t.match(key, /^-----BEGIN PRIVATE KEY-----\n/)
  const csr = await parseAndVerifyCsr(await createCsrPem(key, nodeTemplate('edge-1')))
  t.equal(csr.commonName, 'system:node:edge-1')
  t.same(csr.organizations, ['system:nodes'])
  t.same(csr.dnsNames, [])
  t.same(csr.ipAddresses, [])
  t.equal(csr.raw.publicKey.algorithm.name, 'ECDSA')
})

t.test('a serving request carries the DNS and IP subject alternative names', async t => {
  const key = await generatePrivateKey()
  const csr = await parseAndVerifyCsr(await createCsrPem(key, nodeTemplate('edge-1', { dnsNames: ['edge-1', 'edge-1.local'], ipAddresses: ['10.0.0.5', 'fd00::5'] })))
  t.same(csr.dnsNames, ['edge-1', 'edge-1.local'])
  t.same(csr.ipAddresses, ['10.0.0.5', 'fd00::5'])
})

t.test('usages: ECDSA keys ask for digital signature and the auth usage; RSA keys add key encipherment', async t => {
  const ec = await generatePrivateKey()
  t.same(usagesFor(ec, 'client'), ['digital signature', 'client auth'])
  t.same(usagesFor(ec, 'server'), ['digital signature', 'server auth'])
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'pem', type: 'pkcs1' }).toString()
  t.same(usagesFor(rsa, 'client'), ['digital signature', 'key encipherment', 'client auth'])
  t.same(usagesFor(rsa, 'server'), ['digital signature', 'key encipherment', 'server auth'])
  const csr = await parseAndVerifyCsr(await createCsrPem(rsa, nodeTemplate('edge-2')))
  t.equal(csr.commonName, 'system:node:edge-2', 'an RSA key signs its request too')
})
