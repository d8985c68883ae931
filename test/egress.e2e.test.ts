// Egress selection through a real `orch apiserver`: with the `cluster` selection on an HTTP CONNECT proxy, admission
// webhook calls go through the proxy; a bad configuration stops the server with one line.

import t from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { request } from 'undici'
import { spawnOrch, startOrch } from './orch-process.js'
import { startConnectProxy } from './connect-proxy.js'
import { startWebhookServer, testCa } from '../apiserver/admission/webhooks/testing.js'

const dir = mkdtempSync(join(tmpdir(), 'orch-egress-'))
const proxy = await startConnectProxy()
const webhook = await startWebhookServer(await testCa(), () => ({ allowed: true }))
const config = join(dir, 'egress.yaml')
writeFileSync(config, `apiVersion: apiserver.k8s.io/v1beta1
kind: EgressSelectorConfiguration
egressSelections:
- name: cluster
  connection:
    proxyProtocol: HTTPConnect
    transport:
      tcp:
        url: ${proxy.address}
`)
const orch = await startOrch(join(dir, 'data'), 60_000, ['--egress-selector-config-file', config], 'apiserver')
t.teardown(async () => {
  await orch.stop()
  await webhook.close()
  await proxy.close()
  rmSync(dir, { recursive: true, force: true })
})

async function post (path: string, body: unknown): Promise<number> {
  const r = await request(`${orch.server}${path}`, { method: 'POST', dispatcher: orch.dispatcher, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  await r.body.dump()
  return r.statusCode
}

t.test('webhook calls of the cluster class go through the CONNECT proxy', async t => {
  t.equal(await post('/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name: 'via-proxy' },
    webhooks: [{
      name: 'via-proxy.example.com',
      clientConfig: { url: webhook.url, caBundle: webhook.caBundle },
      rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] }],
      sideEffects: 'None',
      admissionReviewVersions: ['v1']
    }]
  }), 201)
  for (let i = 0; webhook.reviews.length === 0 && i < 100; i++) {
    t.equal(await post('/api/v1/namespaces/default/configmaps', { metadata: { name: `via-proxy-${i}` } }), 201)
    if (webhook.reviews.length === 0) await new Promise(resolve => setTimeout(resolve, 100))
  }
  t.ok(webhook.reviews.length > 0, 'the webhook was called')
  t.ok(proxy.targets.includes(`127.0.0.1:${webhook.port}`), `the proxy tunnelled to the webhook (saw ${proxy.targets.join(', ')})`)
})

t.test('a bad egress configuration stops the server with one line and exit 1', async t => {
  const bad = join(dir, 'bad-egress.yaml')
  writeFileSync(bad, 'apiVersion: apiserver.k8s.io/v1beta1\nkind: EgressSelectorConfiguration\negressSelections:\n- name: cluster\n  connection: {proxyProtocol: HTTPConnect}\n')
  const p = spawnOrch(['apiserver', '--data-dir', join(dir, 'bad-data'), '--port', '0', '--egress-selector-config-file', bad])
  t.equal(await p.exited, 1)
  const lines = p.logs().trim().split('\n')
  t.equal(lines.length, 1, p.logs())
  t.match(lines[0], /^--egress-selector-config-file .*bad-egress\.yaml: egressSelections\[0\]\.connection\.transport: Required value/)
})
