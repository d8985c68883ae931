// CRD validation rules end to end in the registry: compiled in the real CEL sandbox, checked on custom-object writes.
import t from 'tap'
import { body, ctx, eventually, openFixture, type Fixture } from './testing.js'
import { isStatusError, type StatusError } from '../errors/status-error.js'
import { createSandbox, type Sandbox } from '../../sandbox/sandbox.js'
import { evaluatorCelRules, lazySandboxCelRules, sandboxCelRules, type CelRules } from './cel-rules.js'
import { createSandboxPool } from '../../sandbox/pool.js'

let sandbox: Sandbox
let fx: Fixture
const pool = createSandboxPool({ size: 1, limits: { deadlineMs: 2000 } })
t.before(async () => { sandbox = await createSandbox({ deadlineMs: 2000 }) })
t.teardown(async () => { sandbox.dispose(); await pool.close() })

function crd (specSchema: Record<string, unknown>): Record<string, unknown> {
  return {
    apiVersion: 'apiextensions.orch.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'gadgets.example.com' },
    spec: {
      group: 'example.com',
      scope: 'Namespaced',
      names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget', listKind: 'GadgetList' },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: specSchema } } } }]
    }
  }
}

const scaling = {
  type: 'object',
  properties: {
    replicas: { type: 'integer' },
    maxReplicas: { type: 'integer' },
    mode: { type: 'string', maxLength: 16, 'x-orch-validations': [{ rule: 'self == oldSelf', message: 'mode is immutable' }] }
  },
  'x-orch-validations': [
    { rule: 'self.replicas <= self.maxReplicas', messageExpression: "'replicas ' + string(self.replicas) + ' is above ' + string(self.maxReplicas)", fieldPath: '.replicas' },
    { rule: "!has(self.mode) || self.mode != 'forbidden'", reason: 'FieldValueForbidden' }
  ]
}

async function fail (p: Promise<unknown>): Promise<StatusError> {
  try { await p } catch (err) { if (isStatusError(err)) return err; throw err }
  throw new Error('expected the request to fail')
}

async function serve (schema: Record<string, unknown>) {
  const crds = fx.registry.handler('apiextensions.orch.io', 'v1', 'customresourcedefinitions')!
  await crds.create(ctx(), '', body(crd(schema)))
  await eventually(() => fx.registry.handler('example.com', 'v1', 'gadgets') !== undefined)
  return fx.registry.handler('example.com', 'v1', 'gadgets')!
}

const gadget = (name: string, spec: Record<string, unknown>) => body({ apiVersion: 'example.com/v1', kind: 'Gadget', metadata: { name }, spec })

// Every behaviour holds with the rules on the in-thread sandbox and on the sandbox pool (what `orch` runs).
const backends: Array<[string, () => CelRules]> = [
  ['in-thread sandbox', () => sandboxCelRules(sandbox)],
  ['sandbox pool', () => evaluatorCelRules(pool)]
]

for (const [backend, makeRules] of backends) {
  t.test(`with the ${backend}`, async t => {
    t.beforeEach(async () => { fx = await openFixture({ celRules: makeRules() }) })
    t.afterEach(async () => { await fx.close() })

    t.test('a write breaking a rule gets 422 naming the field and the message', async t => {
      const gadgets = await serve(scaling)
      await gadgets.create(ctx(), 'default', gadget('ok', { replicas: 1, maxReplicas: 3 }))
      const err = await fail(gadgets.create(ctx(), 'default', gadget('bad', { replicas: 5, maxReplicas: 3 })))
      t.equal(err.code, 422)
      t.equal(err.reason, 'Invalid')
      t.match(err.details?.causes, [{ field: 'spec.replicas', message: /replicas 5 is above 3/ }])
      const forbidden = await fail(gadgets.create(ctx(), 'default', gadget('f', { replicas: 1, maxReplicas: 3, mode: 'forbidden' })))
      t.match(forbidden.details?.causes, [{ reason: 'FieldValueForbidden', field: 'spec' }])
    })

    t.test('transition rules compare with the stored object on update and are skipped on create', async t => {
      const gadgets = await serve(scaling)
      const created = await gadgets.create(ctx(), 'default', gadget('g', { replicas: 1, maxReplicas: 3, mode: 'fast' }))
      const changed = structuredClone(created.object) as { spec: Record<string, unknown> }
      changed.spec.mode = 'slow'
      const err = await fail(gadgets.update(ctx(), 'default', 'g', body(changed as Record<string, unknown>)))
      t.equal(err.code, 422)
      t.match(err.details?.causes, [{ field: 'spec.mode', message: /mode is immutable/ }])
      const same = structuredClone(created.object) as { spec: Record<string, unknown> }
      same.spec.replicas = 2
      const ok = await gadgets.update(ctx(), 'default', 'g', body(same as Record<string, unknown>))
      t.equal((ok.object.spec as Record<string, unknown>).replicas, 2)
    })

    t.test('a CRD whose rule does not compile is rejected naming the rule', async t => {
      const crds = fx.registry.handler('apiextensions.orch.io', 'v1', 'customresourcedefinitions')!
      const err = await fail(crds.create(ctx(), '', body(crd({ type: 'object', properties: { a: { type: 'integer' } }, 'x-orch-validations': [{ rule: 'self.a >' }] }))))
      t.equal(err.code, 422)
      t.match(err.details?.causes?.[0]?.field, /^spec\.versions\[0\]\.schema\.openAPIV3Schema\.properties\[spec\]\.x-orch-validations\[0\]\.rule/)
    })

    t.test('a CRD whose rule is too expensive by estimate is rejected with the cost reason', async t => {
      const crds = fx.registry.handler('apiextensions.orch.io', 'v1', 'customresourcedefinitions')!
      const err = await fail(crds.create(ctx(), '', body(crd({
        type: 'object',
        properties: { items: { type: 'array', items: { type: 'string' } } },
        'x-orch-validations': [{ rule: 'self.items.all(x, self.items.all(y, self.items.all(z, x + y + z != "")))' }]
      }))))
      t.equal(err.code, 422)
      t.match(JSON.stringify(err.details?.causes), /cost/i)
    })

    t.test('a lazy sandbox is made only when the first CRD with rules arrives', async t => {
      let made = 0
      const cel = lazySandboxCelRules(async () => { made++; return sandbox })
      const lazy = await openFixture({ celRules: cel })
      t.teardown(() => lazy.close())
      const crds = lazy.registry.handler('apiextensions.orch.io', 'v1', 'customresourcedefinitions')!
      const plain = crd({ type: 'object', properties: { a: { type: 'integer' } } })
      ;(plain.metadata as Record<string, unknown>).name = 'plains.example.com'
      ;(plain.spec as Record<string, any>).names = { plural: 'plains', singular: 'plain', kind: 'Plain', listKind: 'PlainList' }
      await crds.create(ctx(), '', body(plain))
      await eventually(() => lazy.registry.handler('example.com', 'v1', 'plains') !== undefined)
      t.equal(made, 0, 'no rules, no sandbox')
      await crds.create(ctx(), '', body(crd(scaling)))
      await eventually(() => lazy.registry.handler('example.com', 'v1', 'gadgets') !== undefined)
      t.equal(made, 1, 'made once for the CRD with rules')
      const gadgets = lazy.registry.handler('example.com', 'v1', 'gadgets')!
      const err = await fail(gadgets.create(ctx(), 'default', gadget('bad', { replicas: 5, maxReplicas: 3 })))
      t.equal(err.code, 422, 'and its rules are enforced')
    })

    t.test('a CRD is rejected at write time with Kubernetes-worded errors for each badly formed rule', async t => {
      const crds = fx.registry.handler('apiextensions.orch.io', 'v1', 'customresourcedefinitions')!
      const at = 'spec.versions[0].schema.openAPIV3Schema.properties[spec].x-orch-validations'
      const err = await fail(crds.create(ctx(), '', body(crd({
        type: 'object',
        properties: { a: { type: 'integer' } },
        'x-orch-validations': [
          { rule: 'self.a' },
          { rule: 'self.a > 0', messageExpression: 'self.a' },
          { rule: 'self.nope > 0' }
        ]
      }))))
      t.equal(err.code, 422)
      t.equal(err.reason, 'Invalid')
      t.match(err.details?.causes, [
        { reason: 'FieldValueInvalid', field: `${at}[0].rule`, message: /^Invalid value: apiextensions\.ValidationRule\{Rule:"self\.a", .*\}: cel expression must evaluate to a bool$/ },
        { reason: 'FieldValueInvalid', field: `${at}[1].messageExpression`, message: /: messageExpression must evaluate to a string$/ },
        { reason: 'FieldValueInvalid', field: `${at}[2].rule`, message: /: compilation failed: ERROR: <input>:1:5: undefined field 'nope'\n \| self\.nope > 0\n \| \.\.\.\.\^$/ }
      ])
      t.match(err.message, /cel expression must evaluate to a bool/)
      const shape = await fail(crds.create(ctx(), '', body(crd({
        type: 'object',
        properties: { a: { type: 'integer' } },
        'x-orch-validations': [{ rule: 'self.a > 0', fieldPath: '.nope', reason: 'Bogus', message: 'two\nlines' }]
      }))))
      t.match(shape.details?.causes, [
        { reason: 'FieldValueInvalid', field: `${at}[0].message`, message: 'Invalid value: "two\\nlines": message must not contain line breaks' },
        { reason: 'FieldValueNotSupported', field: `${at}[0].reason`, message: /^Unsupported value: "Bogus": supported values: / },
        { reason: 'FieldValueInvalid', field: `${at}[0].fieldPath`, message: 'Invalid value: ".nope": fieldPath must be a valid path: does not refer to a valid field' }
      ])
      t.equal(fx.registry.handler('example.com', 'v1', 'gadgets'), undefined, 'no resource is served for a rejected CRD')
    })

    t.test('a CRD spelling its rules x-kubernetes-validations makes the lazy sandbox too', async t => {
      let made = 0
      const lazy = await openFixture({ celRules: lazySandboxCelRules(async () => { made++; return sandbox }) })
      t.teardown(() => lazy.close())
      const crds = lazy.registry.handler('apiextensions.orch.io', 'v1', 'customresourcedefinitions')!
      const k8sSpelled = JSON.parse(JSON.stringify(crd(scaling)).replaceAll('x-orch-validations', 'x-kubernetes-validations'))
      await crds.create(ctx(), '', body(k8sSpelled))
      t.equal(made, 1)
      await eventually(() => lazy.registry.handler('example.com', 'v1', 'gadgets') !== undefined)
      const err = await fail(lazy.registry.handler('example.com', 'v1', 'gadgets')!.create(ctx(), 'default', gadget('bad', { replicas: 5, maxReplicas: 3 })))
      t.equal(err.code, 422)
    })
  })
}
