import t from 'tap'
import { createPublicKey, X509Certificate } from 'node:crypto'
import { existsSync, lstatSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parse as parseYaml } from 'yaml'
import { loadKubeconfig } from '../../../apiserver/client/kubeconfig.js'
import { createCa, issueCertificate } from '../../../apiserver/pki/certs.js'
import { parseCsr } from '../../../apiserver/pki/csr.js'
import { bootstrapClientCertificate, isClientConfigStillValid, type BootstrapOptions } from './bootstrap.js'
import { writeOrchconfig } from './orchconfig-file.js'
import { nameOf, newClient, silent, specOf, startCsrApi, type CsrApi } from './testing.js'

const TOKEN = 'abcdef.0123456789abcdef'

function bootstrapFile (dir: string, server: string): string {
  const path = join(dir, 'bootstrap-orchconfig')
  writeFileSync(path, [
    'apiVersion: v1', 'kind: Config',
    'clusters:', `- name: c`, `  cluster: {server: "${server}", certificate-authority-data: ${Buffer.from('CA PEM').toString('base64')}}`,
    'users:', `- name: u`, `  user: {token: "${TOKEN}"}`,
    'contexts:', '- name: x', '  context: {cluster: c, user: u}', 'current-context: x', ''
  ].join('\n'))
  return path
}

function options (dir: string, api: CsrApi, extra: Partial<BootstrapOptions> = {}): BootstrapOptions {
  return {
    orchconfig: join(dir, 'orchlet.conf'),
    bootstrapOrchconfig: bootstrapFile(dir, api.url),
    certDir: join(dir, 'pki'),
    nodeName: 'edge-1',
    makeClient: conn => newClient(conn.server),
    logger: silent,
    pollMs: 2000,
    retryDelayMs: () => 50,
    ...extra
  }
}

const pending = (c: Record<string, unknown>): boolean => ((c.status as { conditions?: unknown[] } | undefined)?.conditions ?? []).length === 0

async function approveNext (api: CsrApi): Promise<Record<string, unknown>> {
  const csr = await api.waitFor(pending)
  await api.decide(nameOf(csr), 'Approved')
  return csr
}

t.test('a connection file is still valid when it loads and its client certificate is within its validity', async t => {
  const dir = t.testdir()
  const ca = await createCa('ca')
  const now = Date.now()
  const file = join(dir, 'conf')
  t.notOk(isClientConfigStillValid(file, now), 'missing')
  writeFileSync(file, 'clusters: [{name: c, cluster: {server: "https://x:1"}}]\nusers: [{name: u, user: {token: t}}]\n')
  t.ok(isClientConfigStillValid(file, now), 'a token-only file')
  const pair = await issueCertificate(ca, { subject: { commonName: 'system:node:edge-1' }, usage: 'client', validitySeconds: 3600 })
  writeFileSync(join(dir, 'pair.pem'), pair.certPem + pair.keyPem)
  writeOrchconfig(file, { server: 'https://x:1', insecureSkipTlsVerify: false }, join(dir, 'pair.pem'))
  t.ok(isClientConfigStillValid(file, now), 'a current certificate')
  t.notOk(isClientConfigStillValid(file, now + 2 * 3600_000), 'an expired one')
  writeFileSync(file, ': not yaml [')
  t.notOk(isClientConfigStillValid(file, now), 'unreadable')
})

t.test('bootstrap: a node-csr- request through the bootstrap token, then the pem stored and --orchconfig written', async t => {
  const api = await startCsrApi(t)
  const dir = t.testdir()
  const o = options(dir, api)
  const done = bootstrapClientCertificate(o)
  const csr = await approveNext(api)
  t.equal(await done, true)
  t.match(nameOf(csr), /^node-csr-/)
  t.equal(specOf(csr).signerName, 'orch.io/orch-apiserver-client-orchlet')
  t.same(specOf(csr).usages, ['digital signature', 'client auth'])
  t.equal(specOf(csr).expirationSeconds, undefined, 'the signer\'s default lifetime, as the kubelet asks')
  const parsed = parseCsr(Buffer.from(specOf(csr).request, 'base64'))
  t.equal(parsed.commonName, 'system:node:edge-1')
  t.same(parsed.organizations, ['system:nodes'])

  const current = join(dir, 'pki', 'orchlet-client-current.pem')
  t.ok(lstatSync(current).isSymbolicLink(), '-current is a link to the timestamped file')
  t.notOk(existsSync(join(dir, 'pki', 'orchlet-client.key.tmp')), 'the pending key is gone')
  const doc = parseYaml(readFileSync(o.orchconfig, 'utf8'))
  t.same(doc.users, [{ name: 'default-auth', user: { 'client-certificate': current, 'client-key': current } }])
  t.same(doc.contexts, [{ name: 'default-context', context: { cluster: 'default-cluster', user: 'default-auth', namespace: 'default' } }])
  const conn = loadKubeconfig(o.orchconfig)
  t.equal(conn.server, api.url)
  t.equal(conn.caPem?.toString(), 'CA PEM', 'the CA of the bootstrap file')
  t.equal(conn.token, undefined, 'no bootstrap token in the node\'s file')
  const cert = new X509Certificate(conn.clientCertPem!)
  t.equal(cert.subject.split('\n').sort().join(','), 'CN=system:node:edge-1,O=system:nodes')
  t.ok(cert.checkIssued(new X509Certificate(api.ca.certPem)))

  t.equal(await bootstrapClientCertificate(o), false, 'a valid --orchconfig is left alone')
  t.equal((await api.list()).length, 1)
})

t.test('a denied request is logged and asked for again', async t => {
  const api = await startCsrApi(t)
  const dir = t.testdir()
  const errors: string[] = []
  const logger = { ...silent, info () {}, warn () {}, error (o: object) { errors.push(String((o as { err?: string }).err)) } }
  const done = bootstrapClientCertificate(options(dir, api, { logger }))
  const first = await api.waitFor(pending)
  await api.decide(nameOf(first), 'Denied', 'Unknown', 'who are you')
  const second = await approveNext(api)
  t.not(nameOf(second), nameOf(first))
  t.equal(await done, true)
  t.same(errors, ['certificate signing request is denied, reason: Unknown, message: who are you'])
})

t.test('an interrupted bootstrap asks again with the same pending key', async t => {
  const api = await startCsrApi(t)
  const dir = t.testdir()
  const abort = new AbortController()
  const first = bootstrapClientCertificate(options(dir, api, { signal: abort.signal }))
  const csr1 = await api.waitFor(pending)
  t.ok(existsSync(join(dir, 'pki', 'orchlet-client.key.tmp')), 'the key waits in the cert dir')
  abort.abort()
  await t.rejects(first)
  const second = bootstrapClientCertificate(options(dir, api))
  const csr2 = await api.waitFor(c => nameOf(c) !== nameOf(csr1))
  await api.decide(nameOf(csr2), 'Approved')
  t.equal(await second, true)
  const spki = (c: Record<string, unknown>): string => createPublicKey(parseCsr(Buffer.from(specOf(c).request, 'base64')).raw.publicKey.toString('pem')).export({ type: 'spki', format: 'pem' }).toString()
  t.equal(spki(csr2), spki(csr1))
})

t.test('an expired client certificate in --orchconfig is bootstrapped again', async t => {
  const api = await startCsrApi(t)
  const dir = t.testdir()
  const o = options(dir, api)
  const done = bootstrapClientCertificate(o)
  await approveNext(api)
  await done
  const later = Date.now() + 2 * 365 * 24 * 3600_000
  const again = bootstrapClientCertificate({ ...o, now: () => later })
  await approveNext(api)
  t.equal(await again, true)
  t.equal((await api.list()).length, 2)
})

