// A webhook's kubeconfig: the current context's cluster and user, inline data or files relative to the kubeconfig.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { createServer as createHttpsServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import { createWebhookClient, loadWebhookTarget } from './webhook-client.js'
import { createCa, issueCertificate } from '../../pki/certs.js'
import { createEgress } from '../../egress/egress.js'
import { startConnectProxy } from '../../../test/connect-proxy.js'

const dir = mkdtempSync(join(tmpdir(), 'webhook-kubeconfig-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))
const write = (name: string, text: string): string => { const p = join(dir, name); writeFileSync(p, text); return p }

t.test('the current context picks cluster and user; relative files are read beside the kubeconfig', async (t) => {
  mkdirSync(join(dir, 'pki'), { recursive: true })
  write('pki/ca.crt', 'CA PEM')
  write('pki/client.crt', 'CERT PEM')
  write('pki/client.key', 'KEY PEM')
  write('token', 'secret-token\n')
  const path = write('a.kubeconfig', `apiVersion: v1
kind: Config
clusters:
- {name: other, cluster: {server: "https://other:1"}}
- {name: hook, cluster: {server: "https://hook:443/authorize", certificate-authority: pki/ca.crt}}
users:
- {name: other, user: {token: nope}}
- {name: me, user: {client-certificate: pki/client.crt, client-key: ${join(dir, 'pki/client.key')}, tokenFile: token}}
contexts:
- {name: a, context: {cluster: other, user: other}}
- {name: b, context: {cluster: hook, user: me}}
current-context: b
`)
  t.same(await loadWebhookTarget(path), { server: 'https://hook:443/authorize', caPem: 'CA PEM', clientCertPem: 'CERT PEM', clientKeyPem: 'KEY PEM', token: 'secret-token', insecureSkipTlsVerify: false })
})

t.test('inline data, a first cluster without contexts, and the errors that name the file', async (t) => {
  const b64 = (s: string): string => Buffer.from(s).toString('base64')
  const inline = write('b.kubeconfig', `clusters: [{name: c, cluster: {server: "https://h", certificate-authority-data: ${b64('CA')}, insecure-skip-tls-verify: true}}]\nusers: [{name: u, user: {client-certificate-data: ${b64('C')}, client-key-data: ${b64('K')}, token: tok}}]\n`)
  t.same(await loadWebhookTarget(inline), { server: 'https://h', caPem: 'CA', clientCertPem: 'C', clientKeyPem: 'K', token: 'tok', insecureSkipTlsVerify: true })
  const noCtx = write('c.kubeconfig', 'clusters: [{name: c, cluster: {server: "https://h"}}]\ncurrent-context: missing\n')
  await t.rejects(loadWebhookTarget(noCtx), { message: `invalid kubeconfig file "${noCtx}": context "missing" does not exist` })
  const noServer = write('d.kubeconfig', 'clusters: [{name: c, cluster: {}}]\n')
  await t.rejects(loadWebhookTarget(noServer), { message: `invalid kubeconfig file "${noServer}": no cluster with a server` })
  const badFile = write('e.kubeconfig', 'clusters: [{name: c, cluster: {server: "https://h", certificate-authority: nope.crt}}]\n')
  await t.rejects(loadWebhookTarget(badFile), { message: /^invalid kubeconfig file ".*e\.kubeconfig": certificate-authority: ENOENT/ })
})

t.test('posts go through the dispatcher it is given (the controlplane egress selection)', async (t) => {
  const ca = await createCa('authz-webhook-ca')
  const pair = await issueCertificate(ca, { subject: { commonName: '127.0.0.1' }, usage: 'server', hosts: ['127.0.0.1'] })
  const server = createHttpsServer({ cert: pair.certPem, key: pair.keyPem }, (req, res) => {
    req.resume()
    req.on('end', () => { res.setHeader('content-type', 'application/json'); res.end('{"status":{"allowed":true}}') })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.closeAllConnections(); server.close() })
  const proxy = await startConnectProxy()
  t.teardown(() => proxy.close())
  const egress = createEgress({ controlplane: { proxyProtocol: 'HTTPConnect', transport: { kind: 'tcp', url: proxy.address } } })
  const port = (server.address() as AddressInfo).port
  const client = createWebhookClient({ server: `https://127.0.0.1:${port}/authorize`, caPem: ca.certPem, insecureSkipTlsVerify: false }, tls => egress.dispatcher('controlplane', tls))
  t.teardown(() => client.close())
  t.same(await client.post({ kind: 'SubjectAccessReview' }, 5000), { status: { allowed: true } })
  t.same(proxy.targets, [`127.0.0.1:${port}`])
})
