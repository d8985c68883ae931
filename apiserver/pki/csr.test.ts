// CSR parsing, signature checks and signing, for ECDSA and RSA request keys.
import t from 'tap'
import { webcrypto, X509Certificate } from 'node:crypto'
import * as x509 from '@peculiar/x509'
import { createCa } from './certs.js'
import { CsrError, createCsr, parseAndVerifyCsr, parseCsr, signCsr } from './csr.js'

t.test('an ECDSA request: subject, names, signature, and a certificate with the usages asked for', async t => {
  const ca = await createCa('csr-test')
  const { csrPem } = await createCsr({ commonName: 'system:node:n1', organizations: ['system:nodes'], dnsNames: ['n1.local'], ipAddresses: ['10.0.0.7'] })
  const csr = await parseAndVerifyCsr(csrPem)
  t.match(csr, { commonName: 'system:node:n1', organizations: ['system:nodes'], dnsNames: ['n1.local'], ipAddresses: ['10.0.0.7'], emailAddresses: [], uris: [] })
  const notBefore = new Date(Date.parse('2026-01-01T00:00:00Z'))
  const pem = await signCsr(ca, csr, { usages: ['digital signature', 'server auth'], notBefore, notAfter: new Date(notBefore.getTime() + 3600_000) })
  const cert = new X509Certificate(pem)
  t.ok(cert.verify(new X509Certificate(ca.certPem).publicKey))
  t.equal(cert.subjectAltName, 'DNS:n1.local, IP Address:10.0.0.7')
  t.equal(cert.validFrom, 'Jan  1 00:00:00 2026 GMT')
  t.equal(cert.ca, false)
  t.same(new x509.X509Certificate(pem).getExtension(x509.ExtendedKeyUsageExtension)?.usages, [x509.ExtendedKeyUsage.serverAuth])
})

t.test('an RSA request verifies and is signed by an ECDSA CA', async t => {
  const ca = await createCa('csr-test')
  const alg = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256', publicExponent: new Uint8Array([1, 0, 1]), modulusLength: 2048 }
  const keys = await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify']) as CryptoKeyPair
  const req = await x509.Pkcs10CertificateRequestGenerator.create({ name: 'CN=rsa-user, O=dev', keys, signingAlgorithm: alg })
  const csr = await parseAndVerifyCsr(req.toString('pem'))
  t.equal(csr.commonName, 'rsa-user')
  const pem = await signCsr(ca, csr, { usages: ['client auth'], notBefore: new Date(), notAfter: new Date(Date.now() + 600_000) })
  t.equal(new X509Certificate(pem).publicKey.asymmetricKeyType, 'rsa')
})

t.test('what is not a CERTIFICATE REQUEST is refused in the words of Go', async t => {
  t.throws(() => parseCsr('nothing here'), new CsrError('PEM block type must be CERTIFICATE REQUEST'))
  t.throws(() => parseCsr('-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n'), { message: 'PEM block type must be CERTIFICATE REQUEST' })
  t.throws(() => parseCsr('-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----\n'), { name: 'CsrError', message: /^asn1: structure error: / })
})
