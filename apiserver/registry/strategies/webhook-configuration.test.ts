import t from 'tap'
import { body, ctx, openFixture } from '../testing.js'
import { createSandboxPool } from '../../../sandbox/pool.js'

const webhook = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  name: 'check.example.com', clientConfig: { url: 'https://hooks.example.com/check' }, sideEffects: 'None', admissionReviewVersions: ['v1'],
  rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }], ...extra
})

t.test('webhook configurations get Kubernetes\' defaults and are validated as kube-apiserver does', async t => {
  const pool = createSandboxPool({ size: 1 })
  const fx = await openFixture({ webhookExpressions: pool })
  t.teardown(async () => { await fx.close(); await pool.close() })
  const h = fx.registry.handler('admissionregistration.orch.io', 'v1', 'mutatingwebhookconfigurations')!
  let n = 0
  const create = async (...webhooks: Array<Record<string, unknown>>): Promise<any> => await h.create(ctx(), '', body({
    apiVersion: 'admissionregistration.orch.io/v1', kind: 'MutatingWebhookConfiguration', metadata: { name: `c${++n}` }, webhooks
  })).catch(err => err)

  const made = await create(webhook())
  t.match(made.object.webhooks[0], { failurePolicy: 'Fail', matchPolicy: 'Equivalent', namespaceSelector: {}, objectSelector: {}, timeoutSeconds: 10, reinvocationPolicy: 'Never', rules: [{ scope: '*' }] })
  t.ok(fx.registry.handler('admissionregistration.k8s.io', 'v1', 'mutatingwebhookconfigurations'), 'served under the Kubernetes group too')

  const refused = async (why: string, field: RegExp, ...webhooks: Array<Record<string, unknown>>): Promise<void> => {
    const err = await create(...webhooks)
    t.equal(err.code, 422, why)
    t.match(err.message, field, why)
  }
  await refused('sideEffects required', /webhooks\[0\]\.sideEffects: Required value/, webhook({ sideEffects: undefined }))
  await refused('sideEffects Some is not v1', /webhooks\[0\]\.sideEffects: Unsupported value: "Some"/, webhook({ sideEffects: 'Some' }))
  await refused('review versions', /admissionReviewVersions: Invalid value.*must include at least one of v1, v1beta1/, webhook({ admissionReviewVersions: ['v2'] }))
  await refused('timeout range', /timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds/, webhook({ timeoutSeconds: 31 }))
  await refused('url xor service', /clientConfig: Required value: exactly one of url or service is required/, webhook({ clientConfig: { url: 'https://a.example.com', service: { namespace: 'd', name: 's' } } }))
  await refused('https only', /'https' is the only allowed URL scheme/, webhook({ clientConfig: { url: 'http://a.example.com' } }))
  await refused('caBundle PEM', /caBundle: Invalid value/, webhook({ clientConfig: { url: 'https://a.example.com', caBundle: Buffer.from('junk').toString('base64') } }))
  await refused('names unique', /webhooks\[1\]\.name: Duplicate value: "check\.example\.com"/, webhook(), webhook())
  await refused('names qualified', /webhooks\[0\]\.name: Invalid value: "two\.segments": should be a domain with at least three segments separated by dots/, webhook({ name: 'two.segments' }))
  await refused('names are DNS subdomains', /webhooks\[0\]\.name: Invalid value: "Upper\.example\.com": a lowercase RFC 1123 subdomain/, webhook({ name: 'Upper.example.com' }))
  await refused('match condition names qualified', /matchConditions\[0\]\.name: Invalid value: "-bad"/, webhook({ matchConditions: [{ name: '-bad', expression: 'true' }] }))
  await refused('at most 64 match conditions', /matchConditions: Too many: 65/, webhook({ matchConditions: Array.from({ length: 65 }, (_, i) => ({ name: `c${i}`, expression: 'true' })) }))
  await refused('match conditions compile', /matchConditions\[0\]\.expression: Invalid value: "object\.\(": compilation failed/, webhook({ matchConditions: [{ name: 'bad', expression: 'object.(' }] }))
  await refused('operations known', /operations\[0\]: Unsupported value: "PATCH"/, webhook({ rules: [{ operations: ['PATCH'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }] }))
  t.equal((await create(webhook({ matchConditions: [{ name: 'ok', expression: "request.operation == 'CREATE' && object.metadata.name != 'x'" }] }))).object.metadata.name, `c${n}`)
})
