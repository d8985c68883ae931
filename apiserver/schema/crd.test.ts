import t from 'tap'
import { definitionsFromCRD, normaliseSchema, validateCRD } from './crd.js'
import { validateObject } from './validate.js'
import { findUnknownFields, pruneUnknownFields } from './unknown-fields.js'
import { applyDefaults } from './defaults.js'
import { unresolvedRefs } from './resolve.js'

function crontabCRD (): Record<string, any> {
  return {
    apiVersion: 'apiextensions.orch.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'crontabs.stable.example.com' },
    spec: {
      group: 'stable.example.com',
      scope: 'Namespaced',
      names: { plural: 'crontabs', singular: 'crontab', kind: 'CronTab', shortNames: ['ct'], categories: ['all'] },
      versions: [
        {
          name: 'v1', served: true, storage: true,
          subresources: { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' } },
          additionalPrinterColumns: [{ name: 'Spec', type: 'string', jsonPath: '.spec.cronSpec' }, { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas', priority: 1 }],
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: {
                  type: 'object',
                  required: ['cronSpec'],
                  properties: {
                    cronSpec: { type: 'string', pattern: '^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$' },
                    image: { type: 'string' },
                    replicas: { type: 'integer', minimum: 1, maximum: 10, default: 1 },
                    port: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] },
                    extra: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
                  },
                },
                status: { type: 'object', properties: { replicas: { type: 'integer' }, selector: { type: 'string' } } },
              },
            },
          },
        },
        { name: 'v1beta1', served: false, storage: false, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } },
      ],
    },
  }
}

t.test('a valid CRD has no errors and yields one definition per served version', async (t) => {
  const crd = crontabCRD()
  t.same(validateCRD(crd), [])
  const defs = definitionsFromCRD(crd)
  t.equal(defs.length, 1)
  const d = defs[0]
  t.match(d, {
    group: 'stable.example.com', version: 'v1', kind: 'CronTab', listKind: 'CronTabList', plural: 'crontabs', singular: 'crontab',
    shortNames: ['ct'], categories: ['all'], namespaced: true, storageVersion: 'v1',
    subresources: { status: true, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' } },
    printerColumns: [{ name: 'Spec', type: 'string', jsonPath: '.spec.cronSpec' }, { name: 'Replicas', priority: 1 }],
    custom: { crdName: 'crontabs.stable.example.com', preserveUnknownFieldsAtRoot: false },
  })
  t.same(unresolvedRefs(d), [])
  t.equal(d.schema.properties!.spec.properties!.extra['x-orch-preserve-unknown-fields'], true, 'markers normalised')
  t.equal(d.schema.properties!.spec.properties!.port['x-orch-int-or-string'], true)
})

t.test('custom objects validate, default and prune against the CRD schema', async (t) => {
  const [d] = definitionsFromCRD(crontabCRD())
  const obj: Record<string, any> = {
    apiVersion: 'stable.example.com/v1', kind: 'CronTab', metadata: { name: 'x', labels: { a: 'b' } },
    spec: { cronSpec: '* * * * */5', port: 'http', extra: { any: 1 }, bogus: true },
  }
  t.same(validateObject(d, obj), [])
  t.same(findUnknownFields(d, obj), ['spec.bogus'])
  applyDefaults(d, obj)
  t.equal(obj.spec.replicas, 1)
  pruneUnknownFields(d, obj)
  t.notOk('bogus' in obj.spec)
  const bad = { metadata: { name: 'x' }, spec: { cronSpec: 'nope', replicas: 'many', port: true } }
  t.same(validateObject(d, bad).map((e) => `${e.field}: ${e.message}`), [
    `spec.cronSpec: Invalid value: "nope": spec.cronSpec in body should match '${d.schema.properties!.spec.properties!.cronSpec.pattern}'`,
    'spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"',
    'spec.port: Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean"',
  ])
  t.match(validateObject(d, { metadata: { name: 'x', labels: 'no' }, spec: { cronSpec: '* * * * *' } }),
    [{ field: 'metadata.labels', type: 'FieldValueTypeInvalid' }], 'metadata is ObjectMeta')
})

t.test('CRD rules: table of invalid definitions', async (t) => {
  const cases: Array<[string, (c: Record<string, any>) => void, string[]]> = [
    ['name must be plural.group', (c) => { c.metadata.name = 'crontab.stable.example.com' },
      ['metadata.name: Invalid value: "crontab.stable.example.com": must be spec.names.plural+"."+spec.group']],
    ['group needs a dot', (c) => { c.spec.group = 'stable'; c.metadata.name = 'crontabs.stable' },
      ['spec.group: Invalid value: "stable": should be a domain with at least one dot']],
    ['scope', (c) => { c.spec.scope = 'Global' }, ['spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced"']],
    ['two storage versions', (c) => { c.spec.versions[1].storage = true },
      [/^spec\.versions: Invalid value: .*: must have exactly one version marked as storage version$/.source]],
    ['duplicate version', (c) => { c.spec.versions[1].name = 'v1' }, ['spec.versions[1].name: Invalid value: "v1": must be unique']],
    ['missing schema', (c) => { delete c.spec.versions[1].schema }, ['spec.versions[1].schema.openAPIV3Schema: Required value: schemas are required']],
    ['kind mixed case ok, bad chars not', (c) => { c.spec.names.kind = 'Cron_Tab' },
      [/^spec\.names\.kind: Invalid value: "Cron_Tab": may have mixed case, but should otherwise match: a DNS-1035 label/.source]],
    ['field without type', (c) => { delete c.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.image.type },
      ['spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[image].type: Required value: must not be empty for specified object fields']],
    ['properties with additionalProperties', (c) => { c.spec.versions[0].schema.openAPIV3Schema.properties.spec.additionalProperties = { type: 'string' } },
      ['spec.versions[0].schema.openAPIV3Schema.properties[spec].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive']],
    ['array without items', (c) => { c.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.image = { type: 'array' } },
      ['spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[image].items: Required value: must be specified']],
    ['preserve false', (c) => { c.spec.versions[0].schema.openAPIV3Schema.properties.status['x-kubernetes-preserve-unknown-fields'] = false },
      ['spec.versions[0].schema.openAPIV3Schema.properties[status].x-kubernetes-preserve-unknown-fields: Invalid value: false: must be true or undefined']],
    ['typed value validation', (c) => { c.spec.versions[0].schema.openAPIV3Schema.properties.spec.allOf = [{ type: 'object' }] },
      ['spec.versions[0].schema.openAPIV3Schema.properties[spec].allOf[0].type: Forbidden: must be empty to be structural']],
    ['scale path outside spec', (c) => { c.spec.versions[0].subresources.scale.specReplicasPath = '.status.x' },
      ['spec.versions[0].subresources.scale.specReplicasPath: Invalid value: ".status.x": should be a json path under .spec']],
    ['printer column type', (c) => { c.spec.versions[0].additionalPrinterColumns[0].type = 'text' },
      ['spec.versions[0].additionalPrinterColumns[0].type: Unsupported value: "text": supported values: "integer", "number", "string", "boolean", "date"']],
  ]
  for (const [name, mutate, want] of cases) {
    const crd = crontabCRD()
    mutate(crd)
    const got = validateCRD(crd).map((e) => `${e.field}: ${e.message}`)
    if (want[0].startsWith('^')) t.match(got, [new RegExp(want[0])], name)
    else t.same(got, want, name)
  }
})

t.test('normalising keeps property names and renames markers', async (t) => {
  t.same(normaliseSchema({ type: 'object', properties: { 'x-kubernetes-odd': { type: 'string', 'x-kubernetes-list-type': 'atomic' } } }),
    { type: 'object', properties: { 'x-kubernetes-odd': { type: 'string', 'x-orch-list-type': 'atomic' } } })
})

t.test('a deprecated CRD version is marked deprecated, with its warning or the default one', async (t) => {
  const crd = crontabCRD()
  crd.spec.versions[1].served = true
  crd.spec.versions[1].deprecated = true
  const [v1, beta] = definitionsFromCRD(crd)
  t.equal(v1.deprecated, undefined)
  t.same(beta.deprecated, { warning: 'stable.example.com/v1beta1 CronTab is deprecated' })
  crd.spec.versions[1].deprecationWarning = 'use stable.example.com/v1'
  t.same(definitionsFromCRD(crd)[1].deprecated, { warning: 'use stable.example.com/v1' })
})
