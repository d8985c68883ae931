// Client-certificate authentication over real TLS connections: users, refusals, and the per-connection outcome.
import t from 'tap'
import { createServer } from 'node:https'
import { Agent, request } from 'node:https'
import type { AddressInfo } from 'node:net'
import type { TLSSocket } from 'node:tls'
import { createCa, issueCertificate } from '../pki/certs.js'
import { x509Authenticator } from './x509.js'

t.test('a client certificate names the user on every request; TLS 1.3 connections read it once', async t => {
  const ca = await createCa('test-ca')
  const serving = await issueCertificate(ca, { subject: { commonName: 'localhost' }, usage: 'server', hosts: ['127.0.0.1'] })
  const alice = await issueCertificate(ca, { subject: { commonName: 'alice', organizations: ['devs', 'ops'] }, usage: 'client' })
  const wrongUsage = await issueCertificate(ca, { subject: { commonName: 'bob' }, usage: 'server' })
  const authn = x509Authenticator()
  let reads = 0
  const server = createServer({ cert: serving.certPem, key: serving.keyPem, ca: ca.certPem, requestCert: true, rejectUnauthorized: false, minVersion: 'TLSv1.2' }, (req, res) => {
    authn.authenticate(req).then(
      r => res.end(JSON.stringify(r?.user ?? null)),
      (err: Error) => { res.statusCode = 401; res.end(err.message) })
  })
  server.on('secureConnection', (s: TLSSocket) => {
    const orig = s.getPeerCertificate.bind(s)
    s.getPeerCertificate = ((detailed?: boolean) => { reads++; return orig(detailed as true) }) as TLSSocket['getPeerCertificate']
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.close() })
  const port = (server.address() as AddressInfo).port
  const get = async (agent: Agent): Promise<{ status: number, body: string }> => await new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port, path: '/', agent }, res => {
      let body = ''
      res.on('data', (c: Buffer) => { body += c.toString() })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }))
    }).on('error', reject).end()
  })
  const agentFor = (pair: { certPem: string, keyPem: string }, maxVersion: 'TLSv1.2' | 'TLSv1.3'): Agent =>
    new Agent({ keepAlive: true, maxSockets: 1, cert: pair.certPem, key: pair.keyPem, ca: ca.certPem, maxVersion })

  const a13 = agentFor(alice, 'TLSv1.3')
  t.teardown(() => a13.destroy())
  for (let i = 0; i < 3; i++) t.same(JSON.parse((await get(a13)).body), { username: 'alice', groups: ['devs', 'ops'] })
  t.equal(reads, 1, 'one certificate read for three requests on one TLS 1.3 connection')

  reads = 0
  const a12 = agentFor(alice, 'TLSv1.2')
  t.teardown(() => a12.destroy())
  for (let i = 0; i < 2; i++) t.same(JSON.parse((await get(a12)).body), { username: 'alice', groups: ['devs', 'ops'] })
  t.equal(reads, 2, 'TLS 1.2 (renegotiation possible) reads the certificate on every request')

  const bad = agentFor(wrongUsage, 'TLSv1.3')
  t.teardown(() => bad.destroy())
  const refusals = [await get(bad), await get(bad)]
  for (const r of refusals) {
    t.equal(r.status, 401)
    t.match(r.body, /^verifying certificate SN=[0-9a-f]+, SKID=, AKID= failed: x509: INVALID_PURPOSE$/i)
  }
  t.equal(refusals[1].body, refusals[0].body, 'refused again, the same way, on the same connection')

  const anon = new Agent({ keepAlive: true, maxSockets: 1, ca: ca.certPem })
  t.teardown(() => anon.destroy())
  t.equal((await get(anon)).body, 'null', 'no certificate: not authenticated by this authenticator')
})
