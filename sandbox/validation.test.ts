// CRD validation rules: messages, reasons, field paths, transition rules, cost limits, budgets.

import t from 'tap'
import { createSandbox, type Sandbox } from './sandbox.js'
import { compileValidationRules, evaluateValidationRules, type CompiledValidation } from './validation.js'
import type { StructuralSchema, ValidationRule } from '../apiserver/schema/types.js'

let sb: Sandbox
t.before(async () => {
  sb = await createSandbox({ deadlineMs: 2000 })
})
t.teardown(() => sb.dispose())

function compiled(schema: StructuralSchema, limits = {}): CompiledValidation {
  const r = compileValidationRules(schema, { sandbox: sb, limits })
  if (!r.ok) throw new Error(JSON.stringify(r.errors))
  return r.compiled
}

const withRules = (rules: ValidationRule[], props: Record<string, StructuralSchema> = {}): StructuralSchema => ({
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      'x-orch-validations': rules,
      properties: {
        replicas: { type: 'integer' },
        maxReplicas: { type: 'integer' },
        name: { type: 'string', maxLength: 63 },
        ...props,
      },
    },
  },
})

t.test('a broken rule gives FieldValueInvalid with the rule message', async (t) => {
  const c = compiled(withRules([{ rule: 'self.replicas <= self.maxReplicas', message: 'replicas must not exceed maxReplicas' }]))
  t.same(evaluateValidationRules(c, { spec: { replicas: 5, maxReplicas: 3 } }).errors, [
    { type: 'FieldValueInvalid', field: 'spec', message: 'Invalid value: "object": replicas must not exceed maxReplicas' },
  ])
  t.same(evaluateValidationRules(c, { spec: { replicas: 2, maxReplicas: 3 } }).errors, [])
})

t.test('without a message the error names the failed rule', async (t) => {
  const c = compiled(withRules([{ rule: "self.name.startsWith('x')" }]))
  t.same(evaluateValidationRules(c, { spec: { name: 'abc' } }).errors, [
    { type: 'FieldValueInvalid', field: 'spec', message: `Invalid value: "object": failed rule: self.name.startsWith('x')` },
  ])
})

t.test('reason, fieldPath and messageExpression shape the error', async (t) => {
  const c = compiled(
    withRules([
      { rule: 'self.replicas > 0', reason: 'FieldValueForbidden', fieldPath: '.replicas', messageExpression: "'replicas is ' + string(self.replicas)" },
      { rule: 'has(self.name)', reason: 'FieldValueRequired', message: 'name is required' },
    ]),
  )
  t.same(evaluateValidationRules(c, { spec: { replicas: 0 } }).errors, [
    { type: 'FieldValueForbidden', field: 'spec.replicas', message: 'Forbidden: replicas is 0' },
    { type: 'FieldValueRequired', field: 'spec', message: 'Required value: name is required' },
  ])
})

t.test('a messageExpression that fails falls back to the message', async (t) => {
  const c = compiled(withRules([{ rule: 'false', message: 'static', messageExpression: "self.name + ''" }]))
  t.same(evaluateValidationRules(c, { spec: {} }).errors[0].message, 'Invalid value: "object": static')
})

t.test('transition rules are skipped on create and checked on update', async (t) => {
  const c = compiled(withRules([{ rule: 'self.replicas >= oldSelf.replicas', message: 'may not scale down' }]))
  t.same(evaluateValidationRules(c, { spec: { replicas: 1 } }).errors, [])
  t.same(evaluateValidationRules(c, { spec: { replicas: 1 } }, { spec: { replicas: 3 } }).errors, [
    { type: 'FieldValueInvalid', field: 'spec', message: 'Invalid value: "object": may not scale down' },
  ])
  t.same(evaluateValidationRules(c, { spec: { replicas: 4 } }, { spec: { replicas: 3 } }).errors, [])
})

t.test('optionalOldSelf rules run on create with oldSelf empty', async (t) => {
  const c = compiled(withRules([{ rule: '!oldSelf.hasValue() || self.name == oldSelf.value().name', optionalOldSelf: true, message: 'name is immutable' }]))
  t.same(evaluateValidationRules(c, { spec: { name: 'a' } }).errors, [])
  t.equal(evaluateValidationRules(c, { spec: { name: 'b' } }, { spec: { name: 'a' } }).errors.length, 1)
})

t.test('rules on list items and map values name the item path; list-type map items correlate by key', async (t) => {
  const schema: StructuralSchema = {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        properties: {
          ports: {
            type: 'array',
            maxItems: 8,
            'x-orch-list-type': 'map',
            'x-orch-list-map-keys': ['name'],
            items: {
              type: 'object',
              properties: { name: { type: 'string', maxLength: 15 }, port: { type: 'integer' } },
              'x-orch-validations': [
                { rule: 'self.port < 65536', message: 'port out of range' },
                { rule: 'self.port == oldSelf.port', message: 'port is immutable' },
              ],
            },
          },
          labels: { type: 'object', maxProperties: 4, additionalProperties: { type: 'string', maxLength: 10, 'x-orch-validations': [{ rule: "self != ''" }] } },
        },
      },
    },
  }
  const c = compiled(schema)
  const out = evaluateValidationRules(
    c,
    { spec: { ports: [{ name: 'a', port: 80 }, { name: 'b', port: 70000 }, { name: 'new', port: 1 }], labels: { app: '' } } },
    { spec: { ports: [{ name: 'b', port: 443 }, { name: 'a', port: 81 }] } },
  )
  t.same(out.errors, [
    { type: 'FieldValueInvalid', field: 'spec.ports[0]', message: 'Invalid value: "object": port is immutable' },
    { type: 'FieldValueInvalid', field: 'spec.ports[1]', message: 'Invalid value: "object": port out of range' },
    { type: 'FieldValueInvalid', field: 'spec.ports[1]', message: 'Invalid value: "object": port is immutable' },
    { type: 'FieldValueInvalid', field: 'spec.labels[app]', message: `Invalid value: "string": failed rule: self != ''` },
  ])
  t.ok(out.cost > 0)
})

t.test('a rule that does not compile rejects the CRD with the rule path', async (t) => {
  const r = compileValidationRules(withRules([{ rule: 'self.nope == 1' }, { rule: 'self.replicas +' }]), { sandbox: sb })
  t.equal(r.ok, false)
  if (r.ok) return
  t.equal(r.errors.length, 2)
  t.match(r.errors[0], { type: 'FieldValueInvalid', field: 'openAPIV3Schema.properties[spec].x-orch-validations[0].rule', message: /compilation failed: .*nope/ })
  t.match(r.errors[1], { field: 'openAPIV3Schema.properties[spec].x-orch-validations[1].rule' })
})

t.test('a rule whose estimated cost exceeds the per-expression limit is rejected', async (t) => {
  const schema = withRules([{ rule: 'self.tags.all(a, self.tags.all(b, a.matches(b)))' }], { tags: { type: 'array', items: { type: 'string' } } })
  const r = compileValidationRules(schema, { sandbox: sb })
  t.equal(r.ok, false)
  if (!r.ok) t.match(r.errors[0], { type: 'FieldValueForbidden', message: /estimated rule cost exceeds budget by factor of/ })
  const bounded = withRules([{ rule: 'self.tags.all(a, self.tags.all(b, a.matches(b)))' }], { tags: { type: 'array', maxItems: 10, items: { type: 'string', maxLength: 20 } } })
  t.equal(compileValidationRules(bounded, { sandbox: sb }).ok, true, 'maxItems and maxLength bring it under the limit')
})

t.test('the per-CRD estimated total counts each rule times its cardinality', async (t) => {
  const schema: StructuralSchema = {
    type: 'object',
    properties: { items: { type: 'array', maxItems: 1000, items: { type: 'string', maxLength: 1000, 'x-orch-validations': [{ rule: "self.matches('^[a-z]+$')" }] } } },
  }
  const r = compileValidationRules(schema, { sandbox: sb, limits: { perCrdEstimate: 100_000 } })
  t.equal(r.ok, false)
  // As Kubernetes: each rule contributing at least 1% of the limit is named, then the total on the schema.
  if (!r.ok) {
    t.same(r.errors.map((e) => [e.type, e.field]), [
      ['FieldValueForbidden', 'openAPIV3Schema.properties[items].items.x-orch-validations[0].rule'],
      ['FieldValueForbidden', 'openAPIV3Schema'],
    ])
    t.match(r.errors[1].message, /^Forbidden: x-orch-validations estimated rule & messageExpression cost total for entire OpenAPIv3 schema exceeds budget by factor of 2\.0x/)
  }
})

t.test('running out of the per-object runtime budget stops further rules', async (t) => {
  const c = compiled(withRules([{ rule: 'self.replicas > 0' }, { rule: 'self.replicas > 1' }, { rule: 'self.replicas > 2' }]), { perObjectRuntime: 6 })
  const out = evaluateValidationRules(c, { spec: { replicas: 5 } })
  t.same(out.errors.map((e) => e.message), ['Invalid value: "object": validation failed due to running out of cost budget, no further validation rules will be run'])
})

t.test('rule errors at runtime are worded as Kubernetes words them, on the rule\'s node', async (t) => {
  const c = compiled(
    withRules(
      [
        { rule: 'self.replicas / (self.maxReplicas - self.maxReplicas) > 0' },
        { rule: "self.labels['size'] == 'a'", message: ' labels need size ', fieldPath: '.labels' },
        { rule: '[1][self.replicas] == 1' },
        { rule: 'self.port + 1 == 2' },
      ],
      { labels: { type: 'object', additionalProperties: { type: 'string' } }, port: { 'x-orch-int-or-string': true } },
    ),
  )
  t.same(evaluateValidationRules(c, { spec: { replicas: 1, maxReplicas: 1, labels: {}, port: 'a' } }).errors, [
    { type: 'FieldValueInvalid', field: 'spec', message: 'Invalid value: "object": division by zero evaluating rule: self.replicas / (self.maxReplicas - self.maxReplicas) > 0' },
    { type: 'FieldValueInvalid', field: 'spec', message: 'Invalid value: "object": no such key: size evaluating rule: labels need size' },
    { type: 'FieldValueInvalid', field: 'spec', message: 'Invalid value: "object": index out of bounds: 1 evaluating rule: [1][self.replicas] == 1' },
    {
      type: 'FieldValueInvalid',
      field: 'spec',
      message: `Invalid value: "object": 'no such overload: dyn<string> + int': call arguments did not match a supported operator, function or macro signature for rule: self.port + 1 == 2`,
    },
  ])
})

t.test('recursive $ref schemas compile and validate at every depth', async (t) => {
  const definitions = {
    Node: { type: 'object', properties: { value: { type: 'integer' }, children: { type: 'array', maxItems: 4, items: { $ref: 'Node' } } }, 'x-orch-validations': [{ rule: 'self.value >= 0', message: 'negative' }] },
  } as Record<string, StructuralSchema>
  const r = compileValidationRules({ $ref: 'Node' }, { sandbox: sb, definitions })
  t.equal(r.ok, true)
  if (!r.ok) return
  const out = evaluateValidationRules(r.compiled, { value: 1, children: [{ value: 2, children: [{ value: -1 }] }] })
  t.same(out.errors, [{ type: 'FieldValueInvalid', field: 'children[0].children[0]', message: 'Invalid value: "object": negative' }])
})

t.test('released rule sets free their programs', async (t) => {
  const c = compiled(withRules([{ rule: 'true' }]))
  c.release()
  t.throws(() => evaluateValidationRules(c, { spec: {} }))
})
