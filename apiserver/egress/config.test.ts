import t from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { egressSettingsFrom, loadEgressSelectorConfig } from './config.js'

const dir = mkdtempSync(join(tmpdir(), 'orch-egress-config-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))
const pem = join(dir, 'x.pem')
writeFileSync(pem, 'x')

const doc = (...egressSelections: unknown[]): unknown => ({ apiVersion: 'apiserver.k8s.io/v1beta1', kind: 'EgressSelectorConfiguration', egressSelections })

t.test('the selections are read per class, master as controlplane', async t => {
  t.same(egressSettingsFrom(doc(
    { name: 'cluster', connection: { proxyProtocol: 'HTTPConnect', transport: { tcp: { url: 'http://127.0.0.1:8131' } } } },
    { name: 'master', connection: { proxyProtocol: 'Direct' } },
    { name: 'etcd', connection: { proxyProtocol: 'HTTPConnect', transport: { uds: { udsName: '/run/proxy.sock' } } } }
  ), 'f'), {
    cluster: { proxyProtocol: 'HTTPConnect', transport: { kind: 'tcp', url: 'http://127.0.0.1:8131', caBundle: undefined, clientCert: undefined, clientKey: undefined } },
    controlplane: { proxyProtocol: 'Direct' },
    etcd: { proxyProtocol: 'HTTPConnect', transport: { kind: 'uds', udsName: '/run/proxy.sock' } }
  })
  const https = egressSettingsFrom(doc({ name: 'cluster', connection: { proxyProtocol: 'HTTPConnect', transport: { tcp: { url: 'https://p:8131', tlsConfig: { caBundle: pem, clientCert: pem, clientKey: pem } } } } }), 'f')
  t.same(https.cluster, { proxyProtocol: 'HTTPConnect', transport: { kind: 'tcp', url: 'https://p:8131', caBundle: pem, clientCert: pem, clientKey: pem } })
  t.same(egressSettingsFrom(doc({ name: 'cluster', connection: { proxyProtocol: 'GRPC', transport: { uds: { udsName: '/s' } } } }), 'f').cluster,
    { proxyProtocol: 'GRPC', transport: { kind: 'uds', udsName: '/s' } })
})

t.test('every rule of spec document 2 §2.1 is checked, with one line naming the field', async t => {
  const tcp = (tcp: unknown): unknown => doc({ name: 'cluster', connection: { proxyProtocol: 'HTTPConnect', transport: { tcp } } })
  const cases: Array<[unknown, RegExp]> = [
    [doc({ name: 'node', connection: { proxyProtocol: 'Direct' } }), /egressSelections\[0\]\.name: Unsupported value: "node"/],
    [doc({ name: 'etcd', connection: { proxyProtocol: 'Direct' } }, { name: 'etcd', connection: { proxyProtocol: 'Direct' } }), /egressSelections\[1\]\.name: Duplicate value: "etcd"/],
    [doc({ name: 'master', connection: { proxyProtocol: 'Direct' } }, { name: 'controlplane', connection: { proxyProtocol: 'Direct' } }), /"master" and "controlplane"/],
    [doc({ name: 'cluster', connection: { proxyProtocol: 'SOCKS' } }), /proxyProtocol: Unsupported value: "SOCKS": supported values: "HTTPConnect", "GRPC", "Direct"/],
    [doc({ name: 'cluster', connection: { proxyProtocol: 'Direct', transport: { uds: { udsName: '/s' } } } }), /transport: Invalid value: must be absent for a Direct connection/],
    [doc({ name: 'cluster', connection: { proxyProtocol: 'HTTPConnect' } }), /transport: Required value/],
    [doc({ name: 'cluster', connection: { proxyProtocol: 'HTTPConnect', transport: {} } }), /transport: Required value: one of tcp or uds/],
    [doc({ name: 'cluster', connection: { proxyProtocol: 'HTTPConnect', transport: { tcp: { url: 'http://p:1' }, uds: { udsName: '/s' } } } }), /mutually exclusive/],
    [doc({ name: 'cluster', connection: { proxyProtocol: 'GRPC', transport: { tcp: { url: 'http://p:1' } } } }), /transport\.tcp: Forbidden: the GRPC protocol is not supported over tcp/],
    [tcp({}), /transport\.tcp\.url: Required value/],
    [tcp({ url: 'ftp://p:1' }), /supported connection protocols are http:\/\/ and https:\/\//],
    [tcp({ url: 'http://p:1', tlsConfig: { caBundle: pem } }), /tlsConfig\.caBundle: Invalid value: ".*": must be empty for an http:\/\/ proxy URL/],
    [tcp({ url: 'http://p:1', tlsConfig: { clientCert: pem } }), /tlsConfig\.clientCert: .*must be empty/],
    [tcp({ url: 'https://p:1', tlsConfig: { clientCert: pem } }), /tlsConfig\.clientKey: Required value/],
    [tcp({ url: 'https://p:1', tlsConfig: { clientKey: pem } }), /tlsConfig\.clientCert: Required value/],
    [tcp({ url: 'https://p:1', tlsConfig: { clientKey: pem, clientCert: join(dir, 'missing.pem') } }), /tlsConfig\.clientCert: Invalid value: ".*missing\.pem": no such file/],
    [doc({ name: 'cluster', connection: { proxyProtocol: 'HTTPConnect', transport: { uds: {} } } }), /transport\.uds\.udsName: Required value/],
    [doc({ name: 'cluster', connection: { proxyProtocol: 'HTTPConnect', transport: { uds: { udsName: 'unix:///s' } } } }), /without the unix:\/\/ prefix/],
    [{ apiVersion: 'v1', kind: 'EgressSelectorConfiguration', egressSelections: [] }, /apiVersion: Unsupported value/],
    [{ apiVersion: 'apiserver.k8s.io/v1beta1', kind: 'TracingConfiguration', egressSelections: [] }, /kind: Unsupported value/],
    [{ apiVersion: 'apiserver.k8s.io/v1beta1', kind: 'EgressSelectorConfiguration' }, /egressSelections: Required value/],
    [doc({ name: 'cluster', connection: { proxyProtocol: 'Direct' }, extra: 1 }), /egressSelections\[0\]\.extra: unknown field/]
  ]
  for (const [d, message] of cases) {
    t.throws(() => egressSettingsFrom(d, 'f'), { name: 'ConfigError', message }, message.source)
    try { egressSettingsFrom(d, 'f') } catch (err) { t.match((err as Error).message, /^--egress-selector-config-file f: [^\n]*$/) }
  }
})

t.test('a file that is missing or not YAML is one line', async t => {
  t.throws(() => loadEgressSelectorConfig(join(dir, 'none.yaml')), { name: 'ConfigError', message: /^--egress-selector-config-file .*none\.yaml: ENOENT/ })
  const bad = join(dir, 'bad.yaml')
  writeFileSync(bad, 'egressSelections: [\n')
  t.throws(() => loadEgressSelectorConfig(bad), { name: 'ConfigError', message: /^--egress-selector-config-file [^\n]*$/ })
})
