import t from 'tap'
import { createServer as createHttpsServer } from 'node:https'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AddressInfo } from 'node:net'
import { request } from 'undici'
import { createCa, issueCertificate } from '../pki/certs.js'
import { startConnectProxy } from '../../test/connect-proxy.js'
import { startKonnectivityServer } from '../../test/konnectivity-server.js'
import { createEgress } from './egress.js'

const dir = mkdtempSync(join(tmpdir(), 'orch-egress-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))
const ca = await createCa('egress-test-ca')
const pair = await issueCertificate(ca, { subject: { commonName: '127.0.0.1' }, usage: 'server', hosts: ['127.0.0.1'] })
const target = createHttpsServer({ cert: pair.certPem, key: pair.keyPem }, (req, res) => res.end(`served ${req.url ?? ''}`))
await new Promise<void>(resolve => target.listen(0, '127.0.0.1', resolve))
t.teardown(() => { target.closeAllConnections(); target.close() })
const port = (target.address() as AddressInfo).port
const url = `https://127.0.0.1:${port}/hello`

async function get (dispatcher: ReturnType<ReturnType<typeof createEgress>['dispatcher']>): Promise<string> {
  try {
    const r = await request(url, { dispatcher })
    return await r.body.text()
  } finally {
    await dispatcher.close()
  }
}

t.test('HTTPConnect over TCP: the cluster class tunnels through the proxy, TLS to the target end to end', async t => {
  const proxy = await startConnectProxy()
  t.teardown(() => proxy.close())
  const egress = createEgress({ cluster: { proxyProtocol: 'HTTPConnect', transport: { kind: 'tcp', url: proxy.address } } })
  t.equal(await get(egress.dispatcher('cluster', { ca: ca.certPem })), 'served /hello')
  t.same(proxy.targets, [`127.0.0.1:${port}`])
  t.equal(egress.describe('cluster'), `HTTPConnect via ${proxy.address}`)
  // Another class is not selected: it goes direct, the proxy sees nothing more.
  t.equal(await get(egress.dispatcher('controlplane', { ca: ca.certPem })), 'served /hello')
  t.equal(proxy.targets.length, 1)
  t.equal(egress.describe('controlplane'), 'direct')
})

t.test('HTTPConnect over a Unix socket', async t => {
  const proxy = await startConnectProxy(join(dir, 'proxy.sock'))
  t.teardown(() => proxy.close())
  const egress = createEgress({ cluster: { proxyProtocol: 'HTTPConnect', transport: { kind: 'uds', udsName: proxy.address } } })
  t.equal(await get(egress.dispatcher('cluster', { ca: ca.certPem })), 'served /hello')
  t.same(proxy.targets, [`127.0.0.1:${port}`])
})

t.test('the target is still verified through the tunnel', async t => {
  const proxy = await startConnectProxy()
  t.teardown(() => proxy.close())
  const other = await createCa('someone-else')
  const egress = createEgress({ cluster: { proxyProtocol: 'HTTPConnect', transport: { kind: 'tcp', url: proxy.address } } })
  await t.rejects(get(egress.dispatcher('cluster', { ca: other.certPem })))
})


t.test('GRPC over a Unix socket: tunnels through a konnectivity server, TLS to the target inside the tunnel', async t => {
  const server = await startKonnectivityServer(join(dir, 'konnectivity.sock'))
  t.teardown(() => server.close())
  const egress = createEgress({ cluster: { proxyProtocol: 'GRPC', transport: { kind: 'uds', udsName: server.socketPath } } })
  t.teardown(() => egress.close())
  t.equal(await get(egress.dispatcher('cluster', { ca: ca.certPem })), 'served /hello')
  t.equal(await get(egress.dispatcher('cluster', { ca: ca.certPem })), 'served /hello', 'a second connection, a second tunnel')
  t.same(server.dialled, [`127.0.0.1:${port}`, `127.0.0.1:${port}`])
  t.equal(egress.describe('cluster'), `GRPC via unix:${server.socketPath}`)
  // A target that refuses: the dial error reaches the caller.
  const refused = egress.dispatcher('cluster', { ca: ca.certPem })
  await t.rejects(request('https://127.0.0.1:1/', { dispatcher: refused }))
  await refused.close()
})

/** Speaks HTTP/1.1 by hand over a connection `connect` gave (as the exec/attach streams do after their upgrade). */
async function rawGet (socket: import('node:tls').TLSSocket): Promise<string> {
  return await new Promise((resolve, reject) => {
    let text = ''
    socket.on('data', (b: Buffer) => { text += b.toString() })
    socket.once('end', () => resolve(text))
    socket.once('error', reject)
    socket.end('GET /raw HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n')
  })
}

t.test('connect: a TLS stream to the target, direct or through each kind of tunnel', async t => {
  const proxy = await startConnectProxy()
  t.teardown(() => proxy.close())
  const udsProxy = await startConnectProxy(join(dir, 'connect-proxy.sock'))
  t.teardown(() => udsProxy.close())
  const konnectivity = await startKonnectivityServer(join(dir, 'konnectivity-connect.sock'))
  t.teardown(() => konnectivity.close())
  const cases: Array<[string, Parameters<typeof createEgress>[0], string[]]> = [
    ['direct', {}, []],
    ['HTTPConnect over TCP', { cluster: { proxyProtocol: 'HTTPConnect', transport: { kind: 'tcp', url: proxy.address } } }, proxy.targets],
    ['HTTPConnect over a Unix socket', { cluster: { proxyProtocol: 'HTTPConnect', transport: { kind: 'uds', udsName: udsProxy.address } } }, udsProxy.targets],
    ['GRPC', { cluster: { proxyProtocol: 'GRPC', transport: { kind: 'uds', udsName: konnectivity.socketPath } } }, konnectivity.dialled]
  ]
  for (const [name, settings, seen] of cases) {
    const egress = createEgress(settings)
    const socket = await egress.connect('cluster', '127.0.0.1', port, { ca: ca.certPem })
    t.match(await rawGet(socket), /^HTTP\/1\.1 200 [\s\S]*served \/raw$/, name)
    if (name !== 'direct') t.same(seen, [`127.0.0.1:${port}`], `${name}: through the tunnel`)
    egress.close()
  }
  const other = await createCa('not-the-target')
  await t.rejects(createEgress({}).connect('cluster', '127.0.0.1', port, { ca: other.certPem }), 'the target is verified')
})
