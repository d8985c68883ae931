// The etcd store's traffic through the `etcd` egress selection: a real (one-member) etcd reached through a test
// HTTP CONNECT proxy and through a test konnectivity server, by way of loopback forwarders.
import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pino } from 'pino'
import { startTestEtcd } from '../storage/etcd/etcd-for-tests.js'
import { createEgress } from '../egress/egress.js'
import { startConnectProxy } from '../../test/connect-proxy.js'
import { startKonnectivityServer } from '../../test/konnectivity-server.js'
import { openEtcdBackend } from './etcd-backend.js'

const cluster = startTestEtcd(1)
if ('skip' in cluster) {
  t.plan(0, cluster.skip)
} else {
  t.teardown(() => cluster.stop())
  const dir = mkdtempSync(join(tmpdir(), 'orch-etcd-egress-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const logger = pino({ level: 'silent' })
  const etcdPort = new URL(cluster.endpoints[0]!).port
  const options = (prefix: string) => ({ servers: cluster.endpoints, prefix, compactionIntervalMs: 0 })

  t.test('through an HTTP CONNECT proxy: writes and reads work, and the proxy carried them', async t => {
    const proxy = await startConnectProxy()
    t.teardown(() => proxy.close())
    const egress = createEgress({ etcd: { proxyProtocol: 'HTTPConnect', transport: { kind: 'tcp', url: proxy.address } } })
    const store = await openEtcdBackend(options('/via-proxy'), logger, egress)
    const made = await store.create('k/a', () => Buffer.from('through the proxy'))
    t.equal((await store.get('k/a'))?.value.toString(), 'through the proxy')
    t.ok(made.modRevision > 0)
    await store.close()
    t.ok(proxy.targets.length > 0 && proxy.targets.every(x => x.endsWith(`:${etcdPort}`)), `tunnelled to etcd (${proxy.targets.join(', ')})`)
  })

  t.test('through a konnectivity server (GRPC over a Unix socket)', async t => {
    const server = await startKonnectivityServer(join(dir, 'konnectivity.sock'))
    t.teardown(() => server.close())
    const egress = createEgress({ etcd: { proxyProtocol: 'GRPC', transport: { kind: 'uds', udsName: server.socketPath } } })
    t.teardown(() => egress.close())
    const store = await openEtcdBackend(options('/via-konnectivity'), logger, egress)
    await store.create('k/b', () => Buffer.from('through konnectivity'))
    t.equal((await store.get('k/b'))?.value.toString(), 'through konnectivity')
    await store.close()
    t.ok(server.dialled.some(x => x.endsWith(`:${etcdPort}`)), `dialled etcd (${server.dialled.join(', ')})`)
  })
}
