import t, { type Test } from 'tap'
import { body, ctx, eventually, openFixture, silentLogger } from '../../registry/testing.js'
import { createSandboxPool, type SandboxPool } from '../../../sandbox/pool.js'
import type { CertificateAuthority } from '../../pki/certs.js'
import { patchAnswer, startWebhookServer, testCa } from './testing.js'
import { webhookEnv, type WebhookEnv } from './testing.js'
import { createMutatingWebhookPlugin } from './plugins.js'

let ca: CertificateAuthority
let pool: SandboxPool
t.before(async () => { ca = await testCa(); pool = createSandboxPool({ size: 1 }) })
t.teardown(async () => { await pool.close() })

const env = async (t: Test): Promise<WebhookEnv> => await webhookEnv(t, pool)

async function configure (e: WebhookEnv, kind: 'Mutating' | 'Validating', name: string, webhooks: Array<Record<string, any>>): Promise<void> {
  const plural = kind === 'Mutating' ? 'mutatingwebhookconfigurations' : 'validatingwebhookconfigurations'
  await e.fx.registry.handler('admissionregistration.orch.io', 'v1', plural)!.create(ctx(), '',
    body({ apiVersion: 'admissionregistration.orch.io/v1', kind: `${kind}WebhookConfiguration`, metadata: { name }, webhooks }))
  const plugin = kind === 'Mutating' ? e.mutating : e.validating
  await eventually(() => webhooks.every(w => plugin.webhookNames().includes(w.name)))
}

const cmRules = [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }]
const createCm = async (e: WebhookEnv, name: string, labels: Record<string, string> = {}): Promise<any> =>
  await e.fx.registry.handler('', 'v1', 'configmaps')!.create(ctx(), 'default', body({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels } })).catch(err => err)

t.test('a service webhook is reached at an address of its Endpoints or EndpointSlices, verified as <svc>.<ns>.svc', async t => {
  const e = await env(t)
  const paths: string[] = []
  const viaEndpoints = await startWebhookServer(ca, (_r, path) => { paths.push(path); return { allowed: false, status: { message: 'by endpoints' } } }, ['hooks.default.svc'])
  const viaSlice = await startWebhookServer(ca, (_r, path) => { paths.push(path); return { allowed: false, status: { message: 'by slice' } } }, ['sliced.default.svc'])
  t.teardown(async () => { await viaEndpoints.close(); await viaSlice.close() })
  const h = (g: string, v: string, p: string): any => e.fx.registry.handler(g, v, p)
  for (const name of ['hooks', 'sliced']) {
    await h('', 'v1', 'services').create(ctx(), 'default', body({ apiVersion: 'v1', kind: 'Service', metadata: { name },
      spec: { ports: [{ name: 'https', port: 443, targetPort: 8443 }] } }))
  }
  await h('', 'v1', 'endpoints').create(ctx(), 'default', body({ apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'hooks' },
    subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ name: 'https', port: viaEndpoints.port }] }] }))
  await h('discovery.orch.io', 'v1', 'endpointslices').create(ctx(), 'default', body({ apiVersion: 'discovery.orch.io/v1', kind: 'EndpointSlice',
    metadata: { name: 'sliced-x1', labels: { 'kubernetes.io/service-name': 'sliced' } }, addressType: 'IPv4',
    endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready: true } }], ports: [{ name: 'https', port: viaSlice.port }] }))
  const service = (name: string, server: { caBundle: string }): Record<string, unknown> =>
    ({ service: { namespace: 'default', name, path: '/check' }, caBundle: server.caBundle })
  await configure(e, 'Validating', 'svc', [
    { name: 'endpoints.example.com', clientConfig: service('hooks', viaEndpoints), rules: cmRules, sideEffects: 'None', admissionReviewVersions: ['v1'], objectSelector: { matchLabels: { via: 'endpoints' } } },
    { name: 'slice.example.com', clientConfig: service('sliced', viaSlice), rules: cmRules, sideEffects: 'None', admissionReviewVersions: ['v1'], objectSelector: { matchLabels: { via: 'slice' } } }
  ])
  t.equal((await createCm(e, 'a', { via: 'endpoints' })).message, 'admission webhook "endpoints.example.com" denied the request: by endpoints')
  t.equal((await createCm(e, 'b', { via: 'slice' })).message, 'admission webhook "slice.example.com" denied the request: by slice')
  t.same(paths, ['/check', '/check'])
})

t.test('a certificate that does not cover the service name fails the call', async t => {
  const e = await env(t)
  const server = await startWebhookServer(ca, () => ({ allowed: true }), ['other.default.svc'])
  t.teardown(() => server.close())
  await e.fx.registry.handler('', 'v1', 'services')!.create(ctx(), 'default', body({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'hooks' }, spec: { ports: [{ port: 443 }] } }))
  await e.fx.registry.handler('', 'v1', 'endpoints')!.create(ctx(), 'default', body({ apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'hooks' },
    subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ port: server.port }] }] }))
  await configure(e, 'Validating', 'svc', [{ name: 'wrong.example.com', clientConfig: { service: { namespace: 'default', name: 'hooks' }, caBundle: server.caBundle },
    rules: cmRules, sideEffects: 'None', admissionReviewVersions: ['v1'] }])
  const err = await createCm(e, 'a')
  t.equal(err.code, 500)
  t.match(err.message, /failed calling webhook "wrong\.example\.com": failed to call webhook: Post "https:\/\/hooks\.default\.svc:443": /)
})

t.test('reinvocationPolicy IfNeeded calls a webhook again when a later one changed the object', async t => {
  const e = await env(t)
  const first = await startWebhookServer(ca, r => patchAnswer([{ op: 'add', path: '/metadata/labels/first', value: String(Object.keys(r.request.object.metadata.labels ?? {}).length) }]))
  const second = await startWebhookServer(ca, () => patchAnswer([{ op: 'add', path: '/metadata/labels/second', value: 'yes' }]))
  t.teardown(async () => { await first.close(); await second.close() })
  const w = (name: string, s: { url: string; caBundle: string }, extra: Record<string, unknown> = {}): Record<string, unknown> =>
    ({ name, clientConfig: { url: s.url, caBundle: s.caBundle }, rules: cmRules, sideEffects: 'None', admissionReviewVersions: ['v1'], ...extra })
  await configure(e, 'Mutating', 'a-first', [w('first.example.com', first, { reinvocationPolicy: 'IfNeeded' })])
  await configure(e, 'Mutating', 'b-second', [w('second.example.com', second)])
  const made = await createCm(e, 'a')
  t.equal(first.reviews.length, 2, 'first called again')
  t.equal(second.reviews.length, 1)
  t.same(made.object.metadata.labels, { first: '2', second: 'yes' }, 'the second call saw the second webhook\'s change')
})

t.test('reinvocation: an IfNeeded webhook is called again when a later admission plugin changed the object', async t => {
  const mutating = createMutatingWebhookPlugin({ evaluator: pool, logger: silentLogger })
  const later = { async admit (a: { object: Record<string, any> }) { if (a.object.kind === 'ConfigMap') a.object.data = { later: String(a.object.metadata.labels?.seen ?? 'none') } } }
  const fx = await openFixture({ mutatingAdmission: [mutating, later, mutating.reinvocation] })
  await mutating.start(fx.registry)
  t.teardown(async () => { await mutating.stop(); await fx.close() })
  const server = await startWebhookServer(ca, r => patchAnswer([{ op: 'add', path: '/metadata/labels', value: { seen: r.request.object.data === undefined ? 'no-data' : 'data' } }]))
  t.teardown(() => server.close())
  await fx.registry.handler('admissionregistration.orch.io', 'v1', 'mutatingwebhookconfigurations')!.create(ctx(), '', body({ apiVersion: 'admissionregistration.orch.io/v1',
    kind: 'MutatingWebhookConfiguration', metadata: { name: 'again' }, webhooks: [{ name: 'again.example.com', reinvocationPolicy: 'IfNeeded',
      clientConfig: { url: server.url, caBundle: server.caBundle }, rules: cmRules, sideEffects: 'None', admissionReviewVersions: ['v1'] }] }))
  await eventually(() => mutating.webhookNames().includes('again.example.com'))
  const made = await fx.registry.handler('', 'v1', 'configmaps')!.create(ctx(), 'default', body({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' } }))
  t.equal(server.reviews.length, 2, 'called again after the later plugin')
  t.same((made.object.metadata as any).labels, { seen: 'data' }, 'the second call saw the later plugin\'s change')
  t.same(made.object.data, { later: 'no-data' })
})

t.test('matchPolicy Equivalent matches the other spelling of a group; Exact does not', async t => {
  const e = await env(t)
  const server = await startWebhookServer(ca, () => ({ allowed: true }))
  t.teardown(() => server.close())
  const rule = [{ operations: ['CREATE'], apiGroups: ['coordination.k8s.io'], apiVersions: ['v1'], resources: ['leases'] }]
  const w = (name: string, matchPolicy: string, label: string): Record<string, unknown> => ({ name, matchPolicy, rules: rule, clientConfig: { url: server.url, caBundle: server.caBundle },
    sideEffects: 'None', admissionReviewVersions: ['v1'], objectSelector: { matchLabels: { policy: label } } })
  await configure(e, 'Validating', 'leases', [w('equivalent.example.com', 'Equivalent', 'equivalent'), w('exact.example.com', 'Exact', 'exact')])
  const leases = e.fx.registry.handler('coordination.orch.io', 'v1', 'leases')!
  const lease = (name: string, policy: string): Record<string, unknown> => ({ apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name, labels: { policy } } })
  await leases.create(ctx(), 'default', body(lease('a', 'equivalent')))
  await leases.create(ctx(), 'default', body(lease('b', 'exact')))
  t.equal(server.reviews.length, 1, 'only the Equivalent webhook was called')
  t.match(server.reviews[0].request, { name: 'a', resource: { group: 'coordination.k8s.io', resource: 'leases' }, requestResource: { group: 'coordination.orch.io' } })
})
