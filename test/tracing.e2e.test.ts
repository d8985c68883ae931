// Request tracing through a real `orch apiserver`: spans exported over OTLP/gRPC to a test collector, continuing the
// client's W3C traceparent, with the lifecycle steps as children and the trace passed on to an admission webhook.

import t from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { request } from 'undici'
import { startOrch } from './orch-process.js'
import { startTestCollector, type CollectedSpan } from './otlp-collector.js'
import { startWebhookServer, testCa } from '../apiserver/admission/webhooks/testing.js'

const dir = mkdtempSync(join(tmpdir(), 'orch-tracing-'))
const collector = await startTestCollector()
const webhook = await startWebhookServer(await testCa(), () => ({ allowed: true }))
const config = join(dir, 'tracing.yaml')
writeFileSync(config, `apiVersion: apiserver.config.k8s.io/v1beta1
kind: TracingConfiguration
endpoint: ${collector.endpoint}
samplingRatePerMillion: 1000000
`)
const orch = await startOrch(join(dir, 'data'), 60_000, ['--tracing-config-file', config], 'apiserver')
t.teardown(async () => {
  await orch.stop()
  await webhook.close()
  await collector.close()
  rmSync(dir, { recursive: true, force: true })
})

async function call (method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<number> {
  const r = await request(`${orch.server}${path}`, {
    method: method as 'POST', dispatcher: orch.dispatcher, headers: { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body)
  })
  await r.body.dump()
  return r.statusCode
}

t.test('a write continues the client trace: request span, lifecycle children, traceparent to the webhook', async t => {
  t.equal(await call('POST', '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name: 'traced' },
    webhooks: [{
      name: 'traced.example.com',
      clientConfig: { url: webhook.url, caBundle: webhook.caBundle },
      rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] }],
      sideEffects: 'None',
      admissionReviewVersions: ['v1']
    }]
  }), 201)
  const traceId = '4bf92f3577b34da6a3ce929d0e0e4736'
  const clientSpan = '00f067aa0ba902b7'
  // The webhook configuration is picked up by a watch: retry until the webhook saw a create.
  for (let i = 0; webhook.reviews.length === 0 && i < 100; i++) {
    t.equal(await call('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: `traced-${i}` } }, { traceparent: `00-${traceId}-${clientSpan}-01` }), 201)
    if (webhook.reviews.length === 0) await new Promise(resolve => setTimeout(resolve, 100))
  }
  t.ok(webhook.reviews.length > 0, 'the webhook was called')
  const sent = String(webhook.headers.at(-1)?.traceparent ?? '')
  t.match(sent, new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`), 'the webhook got the request\'s trace')

  const inTrace = (spans: CollectedSpan[]): CollectedSpan[] => spans.filter(s => s.traceId === traceId)
  const requestSpan = (spans: CollectedSpan[]): CollectedSpan | undefined => inTrace(spans)
    .filter(s => s.name === 'KubernetesAPI' && s.attributes['http.method'] === 'POST').at(-1)
  const spans = await collector.waitFor(all => {
    const r = requestSpan(all)
    if (r === undefined) return false
    const children = new Set(inTrace(all).filter(s => s.parentSpanId === r.spanId).map(s => s.name))
    return ['authentication', 'authorization', 'admission.validating', 'storage', 'encode'].every(n => children.has(n))
  })
  const r = requestSpan(spans)!
  t.equal(r.parentSpanId, clientSpan, 'the request span is the child of the client\'s span')
  t.equal(r.service, 'apiserver')
  t.equal(r.attributes['http.status_code'], 201)
  t.match(String(r.attributes['http.target']), /^\/api\/v1\/namespaces\/default\/configmaps/)
  const storage = inTrace(spans).filter(s => s.parentSpanId === r.spanId && s.name === 'storage')
  t.ok(storage.some(s => s.attributes.operation === 'create'), 'the store\'s create is a span')
  t.equal(sent.split('-')[1], traceId)
})

t.test('a request without traceparent starts its own sampled trace at rate 1,000,000 per million', async t => {
  t.equal(await call('GET', '/api/v1/namespaces/default/configmaps'), 200)
  const spans = await collector.waitFor(all => all.some(s => s.name === 'KubernetesAPI' && s.attributes['http.method'] === 'GET' &&
    s.parentSpanId === '' && String(s.attributes['http.target']).startsWith('/api/v1/namespaces/default/configmaps')))
  const root = spans.find(s => s.name === 'KubernetesAPI' && s.attributes['http.method'] === 'GET' && s.parentSpanId === '')!
  t.ok(spans.some(s => s.parentSpanId === root.spanId && s.name === 'storage' && s.attributes.operation === 'list'), 'the list read is a child span')
})
