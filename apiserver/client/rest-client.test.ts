import t, { type Test } from 'tap'
import { createServer, type Server } from 'node:https'
import type { TLSSocket } from 'node:tls'
import type { AddressInfo } from 'node:net'
import { createCa, issueCertificate } from '../pki/certs.js'
import { createApiClient } from './rest-client.js'
import type { Connection } from './kubeconfig.js'

/** An HTTPS server answering with the caller's certificate CN and bearer token; /slow waits `slowMs` first. */
async function start (t: Test): Promise<{ server: Server; url: string; closedCns: string[]; conn: (cn: string, token?: string) => Promise<Connection> }> {
  const ca = await createCa('ca')
  const serving = await issueCertificate(ca, { subject: { commonName: '127.0.0.1' }, usage: 'server', hosts: ['127.0.0.1'] })
  const closedCns: string[] = []
  const server = createServer({ cert: serving.certPem, key: serving.keyPem, ca: ca.certPem, requestCert: true, rejectUnauthorized: true }, (req, res) => {
    const cn = (req.socket as TLSSocket).getPeerCertificate().subject.CN
    const answer = (): void => { res.setHeader('content-type', 'application/json'); res.end(JSON.stringify({ cn, token: req.headers.authorization ?? '' })) }
    if (req.url === '/slow') setTimeout(answer, 300)
    else answer()
  })
  server.on('secureConnection', (s: TLSSocket) => {
    const cn = String(s.getPeerCertificate()?.subject?.CN)
    s.on('close', () => closedCns.push(cn))
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(async () => { server.closeAllConnections(); await new Promise(resolve => server.close(resolve)) })
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    server,
    url,
    closedCns,
    conn: async (cn, token) => {
      const p = await issueCertificate(ca, { subject: { commonName: cn }, usage: 'client' })
      return { server: url, caPem: Buffer.from(ca.certPem), insecureSkipTlsVerify: false, clientCertPem: Buffer.from(p.certPem), clientKeyPem: Buffer.from(p.keyPem), token }
    }
  }
}

t.test('after setConnection, calls present the new client certificate and token', async t => {
  const s = await start(t)
  const client = createApiClient({ connection: await s.conn('system:node:a', 'bootstrap-token'), qps: 0, burst: 0, contentType: 'application/json', userAgent: 'test' })
  t.teardown(() => client.close())
  t.same(await client.get('/who'), { cn: 'system:node:a', token: 'Bearer bootstrap-token' })
  client.setConnection(await s.conn('system:node:b'))
  t.same(await client.get('/who'), { cn: 'system:node:b', token: '' })
})

t.test('a call under way on the old credentials finishes; the old connection is closed once idle', async t => {
  const s = await start(t)
  const client = createApiClient({ connection: await s.conn('old'), qps: 0, burst: 0, contentType: 'application/json', userAgent: 'test' })
  t.teardown(() => client.close())
  const slow = client.get('/slow')
  await new Promise(resolve => setTimeout(resolve, 100))
  client.setConnection(await s.conn('new'))
  t.same(await client.get('/who'), { cn: 'new', token: '' }, 'new calls do not wait for the old one')
  t.same(s.closedCns, [], 'the busy old connection stays open')
  t.same(await slow, { cn: 'old', token: '' }, 'the old call completes with the old credentials')
  for (let i = 0; i < 50 && !s.closedCns.includes('old'); i++) await new Promise(resolve => setTimeout(resolve, 20))
  t.same(s.closedCns, ['old'], 'then its connection is closed; the new one stays')
})
