import t from 'tap'
import { codePointLength, validateObject, validateValue } from './validate.js'
import { builtinDefinitions } from './builtin/catalog.js'
import type { ResourceDefinition, StructuralSchema } from './types.js'

const kinds = builtinDefinitions()
const kind = (k: string): ResourceDefinition => kinds.find((d) => d.kind === k) as ResourceDefinition

function customDef (spec: StructuralSchema): ResourceDefinition {
  return {
    group: 'example.com', version: 'v1', kind: 'Widget', listKind: 'WidgetList', plural: 'widgets', singular: 'widget',
    shortNames: [], categories: [], namespaced: true, verbs: [], subresources: {},
    schema: { type: 'object', properties: { apiVersion: { type: 'string' }, kind: { type: 'string' }, metadata: { type: 'object' }, spec } },
    definitions: {}, printerColumns: [], storageVersion: 'v1', allowCreateOnUpdate: false,
    custom: { crdName: 'widgets.example.com', preserveUnknownFieldsAtRoot: false },
  }
}

const deployment = {
  apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', labels: { app: 'web' } },
  spec: {
    replicas: 3,
    selector: { matchLabels: { app: 'web' } },
    strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: 1 } },
    template: {
      metadata: { labels: { app: 'web' }, creationTimestamp: null },
      spec: { containers: [{ name: 'nginx', image: 'nginx:1.25', ports: [{ containerPort: 80 }], resources: { limits: { cpu: '500m', memory: 1e9 } } }] },
    },
  },
}

t.test('a real-looking Deployment validates cleanly', async (t) => {
  t.same(validateObject(kind('Deployment'), deployment), [])
})

t.test('built-in kinds: table of bad fields', async (t) => {
  const pod = (spec: unknown) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec })
  const cases: Array<[string, ResourceDefinition, unknown, Array<Partial<{ type: string; field: string; message: string }>>]> = [
    ['missing containers', kind('Pod'), pod({}),
      [{ type: 'FieldValueRequired', field: 'spec.containers', message: 'Required value' }]],
    ['container without name', kind('Pod'), pod({ containers: [{ image: 'x' }] }),
      [{ type: 'FieldValueRequired', field: 'spec.containers[0].name', message: 'Required value' }]],
    ['string for an integer', kind('Deployment'), { spec: { ...deployment.spec, replicas: 'three' } },
      [{ type: 'FieldValueTypeInvalid', field: 'spec.replicas', message: 'Invalid value: "string": spec.replicas in body must be of type integer: "string"' }]],
    ['fraction for an integer', kind('Deployment'), { spec: { ...deployment.spec, replicas: 1.5 } },
      [{ field: 'spec.replicas', message: 'Invalid value: "number": spec.replicas in body must be of type integer: "number"' }]],
    ['int32 overflow', kind('Deployment'), { spec: { ...deployment.spec, replicas: 2 ** 31 } },
      [{ type: 'FieldValueTypeInvalid', field: 'spec.replicas', message: 'Invalid value: 2147483648: spec.replicas in body must be of type int32: 2147483648' }]],
    ['label value not a string', kind('ConfigMap'), { metadata: { labels: { app: 1 } } },
      [{ field: 'metadata.labels[app]', message: 'Invalid value: "integer": metadata.labels[app] in body must be of type string: "integer"' }]],
    ['bool for int-or-string', kind('Service'), { spec: { ports: [{ port: 80, targetPort: true }] } },
      [{ field: 'spec.ports[0].targetPort', message: 'Invalid value: "boolean": spec.ports[0].targetPort in body must be of type integer,string: "boolean"' }]],
    ['enum from the overlay', kind('Pod'), pod({ containers: [{ name: 'a' }], restartPolicy: 'Sometimes' }),
      [{ type: 'FieldValueNotSupported', field: 'spec.restartPolicy', message: 'Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"' }]],
    ['bad date-time', kind('Pod'), { metadata: { creationTimestamp: 'yesterday' }, spec: { containers: [{ name: 'a' }] } },
      [{ type: 'FieldValueTypeInvalid', field: 'metadata.creationTimestamp', message: 'Invalid value: "yesterday": metadata.creationTimestamp in body must be of type date-time: "yesterday"' }]],
    ['bad base64 in secret data', kind('Secret'), { data: { k: 'not base64!' } },
      [{ field: 'data[k]', message: 'Invalid value: "not base64!": data[k] in body must be of type byte: "not base64!"' }]],
    ['duplicate list-map key (built-in names the key)', kind('Pod'), pod({ containers: [{ name: 'a', ports: [{ containerPort: 80, protocol: 'TCP' }, { containerPort: 80, protocol: 'TCP' }] }] }),
      [{ type: 'FieldValueDuplicate', field: 'spec.containers[0].ports[1]' }]],
    ['object where a list belongs', kind('Pod'), pod({ containers: { name: 'a' } }),
      [{ field: 'spec.containers', message: 'Invalid value: "object": spec.containers in body must be of type array: "object"' }]],
  ]
  for (const [name, def, obj, want] of cases) {
    const got = validateObject(def, obj)
    t.equal(got.length, want.length, `${name}: count (${JSON.stringify(got)})`)
    want.forEach((w, i) => t.match(got[i], w, name))
  }
})

t.test('built-in kinds read null as absent', async (t) => {
  t.same(validateObject(kind('ConfigMap'), { metadata: { name: 'a', labels: null, creationTimestamp: null }, data: null }), [])
  t.match(validateObject(kind('Pod'), { spec: { containers: null } }), [{ type: 'FieldValueRequired', field: 'spec.containers' }])
})

t.test('custom kinds: table of kube-openapi checks', async (t) => {
  const cases: Array<[string, StructuralSchema, unknown, string[]]> = [
    ['required', { type: 'object', required: ['size'], properties: { size: { type: 'integer' } } }, {},
      ['spec.size: Required value']],
    ['null where not nullable', { type: 'object', properties: { size: { type: 'integer' } } }, { size: null },
      ['spec.size: Invalid value: "null": spec.size in body must be of type integer: "null"']],
    ['nullable null', { type: 'object', properties: { size: { type: 'integer', nullable: true } } }, { size: null }, []],
    ['enum', { type: 'string', enum: ['a', 'b'] }, 'c', ['spec: Unsupported value: "c": supported values: "a", "b"']],
    ['maxLength', { type: 'string', maxLength: 3 }, 'abcd', ['spec: Too long: may not be longer than 3']],
    ['minLength', { type: 'string', minLength: 3 }, 'ab', ['spec: Invalid value: "ab": spec in body should be at least 3 chars long']],
    ['maxLength counts code points: 3 emoji fit 3', { type: 'string', maxLength: 3 }, '😀😀😀', []],
    ['maxLength counts code points: 3 emoji exceed 2', { type: 'string', maxLength: 2 }, '😀😀😀', ['spec: Too long: may not be longer than 2']],
    ['minLength counts code points: 2 emoji are short of 3', { type: 'string', minLength: 3 }, '😀😀', ['spec: Invalid value: "😀😀": spec in body should be at least 3 chars long']],
    ['minLength counts code points: 3 emoji meet 3', { type: 'string', minLength: 3 }, '😀😀😀', []],
    ['a lone surrogate counts as one', { type: 'string', maxLength: 2 }, 'a\ud800b', ['spec: Too long: may not be longer than 2']],
    ['pattern', { type: 'string', pattern: '^[a-z]+$' }, 'A1', ['spec: Invalid value: "A1": spec in body should match \'^[a-z]+$\'']],
    ['maximum', { type: 'integer', maximum: 5 }, 6, ['spec: Invalid value: 6: spec in body should be less than or equal to 5']],
    ['exclusive minimum', { type: 'number', minimum: 0, exclusiveMinimum: true }, 0, ['spec: Invalid value: 0: spec in body should be greater than 0']],
    ['multipleOf', { type: 'integer', multipleOf: 5 }, 7, ['spec: Invalid value: 7: spec in body should be a multiple of 5']],
    ['integer accepted as number', { type: 'number' }, 3, []],
    ['maxItems', { type: 'array', maxItems: 1, items: { type: 'string' } }, ['a', 'b'], ['spec: Too many: 2: must have at most 1 items']],
    ['minItems', { type: 'array', minItems: 2, items: { type: 'string' } }, ['a'], ['spec: Invalid value: 1: spec in body should have at least 2 items']],
    ['maxProperties', { type: 'object', maxProperties: 1, additionalProperties: { type: 'string' } }, { a: 'x', b: 'y' }, ['spec: Too many: 2: must have at most 1 items']],
    ['set duplicates', { type: 'array', 'x-orch-list-type': 'set', items: { type: 'string' } }, ['a', 'b', 'a'], ['spec[2]: Duplicate value: "a"']],
    ['map-list duplicates', { type: 'array', 'x-orch-list-type': 'map', 'x-orch-list-map-keys': ['name'], items: { type: 'object', properties: { name: { type: 'string' }, v: { type: 'integer' } } } },
      [{ name: 'a', v: 1 }, { name: 'a', v: 2 }], ['spec[1]: Duplicate value: map[string]interface {}{"name":"a"}']],
    ['int-or-string accepts both', { type: 'object', properties: { p: { 'x-orch-int-or-string': true } } }, { p: 'http' }, []],
    ['preserve-unknown without type takes anything', { 'x-orch-preserve-unknown-fields': true }, [1, 'x'], []],
    ['anyOf none', { type: 'integer', anyOf: [{ minimum: 10 }, { maximum: 1 }] }, 5, ['spec: Invalid value: 5: spec in body must validate at least one schema (anyOf)']],
    ['oneOf two', { type: 'integer', oneOf: [{ minimum: 1 }, { maximum: 10 }] }, 5, ['spec: Invalid value: 5: spec in body must validate one and only one schema (oneOf)']],
    ['not', { type: 'string', not: { enum: ['x'] } }, 'x', ['spec: Invalid value: "x": spec in body should not validate the schema']],
    ['allOf', { type: 'integer', allOf: [{ minimum: 10 }] }, 5, ['spec: Invalid value: 5: spec in body should be greater than or equal to 10']],
    ['embedded resource needs apiVersion and kind', { type: 'object', 'x-orch-embedded-resource': true, 'x-orch-preserve-unknown-fields': true }, { metadata: {} },
      ['spec.apiVersion: Required value: must not be empty', 'spec.kind: Required value: must not be empty']],
  ]
  for (const [name, spec, value, want] of cases) {
    const got = validateObject(customDef(spec), { spec: value }).map((e) => `${e.field}: ${e.message}`)
    t.same(got, want, name)
  }
})

t.test('validateValue checks a bare schema', async (t) => {
  t.same(validateValue({ type: 'string' }, 1, { path: 'x' }).map((e) => e.type), ['FieldValueTypeInvalid'])
})

t.test('a Pod with several bad fields reports each, in document order', async (t) => {
  const pod = {
    apiVersion: 'v1', kind: 'Pod', metadata: { name: 'bad', labels: { app: 'web' } },
    spec: {
      restartPolicy: 'Sometimes',
      terminationGracePeriodSeconds: '30',
      containers: [
        { name: 'a', image: 'nginx', ports: [{ containerPort: 'http' }] },
        { image: 'busybox', env: [{ name: 'X', value: 1 }] },
      ],
    },
  }
  t.same(validateObject(kind('Pod'), pod).map((e) => `${e.type} ${e.field}`), [
    'FieldValueNotSupported spec.restartPolicy',
    'FieldValueTypeInvalid spec.terminationGracePeriodSeconds',
    'FieldValueTypeInvalid spec.containers[0].ports[0].containerPort',
    'FieldValueRequired spec.containers[1].name',
    'FieldValueTypeInvalid spec.containers[1].env[0].value',
  ])
})

t.test('codePointLength counts surrogate pairs once and lone surrogates as one', async (t) => {
  t.equal(codePointLength(''), 0)
  t.equal(codePointLength('abc'), 3)
  t.equal(codePointLength('a😀b'), 3)
  t.equal(codePointLength('\ud800'), 1)
  t.equal(codePointLength('\udc00\ud800'), 2)
  t.equal(codePointLength('x'.repeat(1000) + '😀'), [...('x'.repeat(1000) + '😀')].length)
})

t.test('date-time checks answer per value, repeated and alternating (the last verdict is kept by value)', async t => {
  const schema = { type: 'string', format: 'date-time' } as const
  const bad = (v: string): boolean => validateValue(schema, v).length > 0
  const cases: Array<[string, boolean]> = [['2026-11-27T21:00:00Z', false], ['2026-11-27T21:00:00Z', false], ['yesterday', true], ['yesterday', true],
    ['2026-11-27T21:00:00Z', false], ['2026-13-01T00:00:00Z', true], ['2026-13-01T00:00:00Z', true],
    ['2026-11-27 21:00:00.5+01:00', false], ['2026-11-27T21:00:00', true], ['2026-11-27T21:00:00Z', false]]
  t.same(cases.map(([v]) => bad(v)), cases.map(([, b]) => b))
  // The verdicts of the uncached check, value by value, whatever V8 makes of a day past the month's end.
  const rfc3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/
  const uncached = (v: string): boolean => !(rfc3339.test(v) && !Number.isNaN(Date.parse(v.replace(' ', 'T'))))
  const values = ['2026-02-30T00:00:00Z', '2026-02-28T00:00:00Z', '2026-02-30T00:00:00Z', '2026-11-27T25:00:00Z', '2026-11-27t21:00:00z', '2026-11-27t21:00:00z']
  t.same(values.map(bad), values.map(uncached))
})
