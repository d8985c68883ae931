// Validation given a value it accepted before: parts equal to it (held apart) are skipped, and the errors are always
// those of validating everything.

import t from 'tap'
import { validateObject } from './validate.js'
import { sameJsonApart } from './json-equal.js'
import { builtinDefinitions } from './builtin/catalog.js'
import type { ResourceDefinition, StructuralSchema } from './types.js'

const kinds = builtinDefinitions()
const kind = (k: string): ResourceDefinition => kinds.find((d) => d.kind === k) as ResourceDefinition
type Obj = Record<string, any>
const copy = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T

const deployment: Obj = {
  apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', labels: { app: 'web' } },
  spec: {
    replicas: 3,
    selector: { matchLabels: { app: 'web' } },
    strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: 1 } },
    template: {
      metadata: { labels: { app: 'web' } },
      spec: {
        containers: [
          { name: 'a', image: 'a:1', ports: [{ containerPort: 80 }], env: [{ name: 'X', value: '1' }] },
          { name: 'b', image: 'b:1', imagePullPolicy: 'Always' }
        ],
        volumes: [{ name: 'v', emptyDir: {} }]
      }
    }
  }
}

t.test('sameJsonApart: equal JSON in separate objects only', async t => {
  const shared = { x: 1 }
  t.ok(sameJsonApart({ a: [1, { b: null }], c: 'x' }, { c: 'x', a: [1, { b: null }] }), 'member order aside')
  t.ok(sameJsonApart(3, 3))
  t.notOk(sameJsonApart({ a: shared }, { a: shared }), 'a shared object is not vouched for')
  t.notOk(sameJsonApart(shared, shared))
  t.notOk(sameJsonApart({ a: undefined }, {}), 'an undefined member is not an absent one')
  t.notOk(sameJsonApart({}, { a: undefined }))
  t.notOk(sameJsonApart(NaN, NaN))
  t.notOk(sameJsonApart([1, 2], [2, 1]))
  t.notOk(sameJsonApart([], {}))
  t.notOk(sameJsonApart({ a: 1 }, { a: 1, b: 2 }))
  t.notOk(sameJsonApart(null, {}))
})

/** Changes to make somewhere in the object: valid ones and each kind of error the validator reports. */
const changes: Array<[string, (o: Obj) => void]> = [
  ['image', o => { o.spec.template.spec.containers[0].image = 'a:2' }],
  ['replicas type', o => { o.spec.replicas = 'three' }],
  ['enum', o => { o.spec.template.spec.containers[1].imagePullPolicy = 'Sometimes' }],
  ['int32 range', o => { o.spec.template.spec.containers[0].ports[0].containerPort = 2 ** 40 }],
  ['duplicate keyed item', o => { o.spec.template.spec.containers.push({ name: 'a', image: 'c:1' }) }],
  ['required', o => { delete o.spec.template.spec.containers[0].name }],
  ['item added with an error', o => { o.spec.template.spec.volumes.push({ name: 7 }) }],
  ['items reordered', o => { o.spec.template.spec.containers.reverse() }],
  ['nested env type', o => { for (const c of o.spec.template.spec.containers) if (c.env?.[0]?.name === 'X') c.env[0].value = 1 }],
  ['metadata', o => { o.metadata.labels = 'x' }],
  ['env added with a type error', o => { o.spec.template.spec.containers[1].env = [{ name: 'Y', value: 2 }] }],
  ['strategy type', o => { o.spec.strategy.rollingUpdate.maxSurge = true }],
  ['null', o => { o.spec.selector = null }]
]

t.test('the errors are those of validating everything, for each change and each pair of changes', async t => {
  const def = kind('Deployment')
  t.same(validateObject(def, deployment), [], 'the accepted object is valid')
  let withErrors = 0
  for (let i = 0; i < changes.length; i++) {
    for (let j = i; j < changes.length; j++) {
      const next = copy(deployment)
      changes[i][1](next)
      if (j !== i) changes[j][1](next)
      const full = validateObject(def, next)
      if (full.length > 0) withErrors++
      t.same(validateObject(def, next, copy(deployment)), full, `${changes[i][0]} + ${changes[j][0]}`)
    }
  }
  t.ok(withErrors > 20, 'most combinations have errors to report')
})

t.test('a part shared with the accepted value is validated (it may have changed through it)', async t => {
  const def = kind('Deployment')
  const valid = copy(deployment)
  const next = copy(deployment)
  next.spec.template.spec.containers[1] = valid.spec.template.spec.containers[1]
  valid.spec.template.spec.containers[1].imagePullPolicy = 'Sometimes'
  const full = validateObject(def, next)
  t.equal(full.length, 1)
  t.same(validateObject(def, next, valid), full)
})

t.test('custom resources: null and type errors of changed parts are still found', async t => {
  const spec: StructuralSchema = {
    type: 'object',
    properties: {
      size: { type: 'integer', minimum: 1 },
      tags: { type: 'array', items: { type: 'string' }, 'x-orch-list-type': 'set' },
      nested: { type: 'object', properties: { a: { type: 'string' } } }
    }
  }
  const def: ResourceDefinition = {
    group: 'example.com', version: 'v1', kind: 'Widget', listKind: 'WidgetList', plural: 'widgets', singular: 'widget',
    shortNames: [], categories: [], namespaced: true, verbs: [], subresources: {},
    schema: { type: 'object', properties: { apiVersion: { type: 'string' }, kind: { type: 'string' }, metadata: { type: 'object' }, spec } },
    definitions: {}, printerColumns: [], storageVersion: 'v1', allowCreateOnUpdate: false,
    custom: { crdName: 'widgets.example.com', preserveUnknownFieldsAtRoot: false }
  }
  const valid = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: {}, spec: { size: 2, tags: ['a', 'b'], nested: { a: 'x' } } }
  t.same(validateObject(def, valid), [])
  const cases: Obj[] = [
    { ...copy(valid), spec: { size: 0, tags: ['a', 'b'], nested: { a: 'x' } } },
    { ...copy(valid), spec: { size: 2, tags: ['a', 'a'], nested: { a: 'x' } } },
    { ...copy(valid), spec: { size: 2, tags: ['a', 'b'], nested: { a: null } } },
    { ...copy(valid), spec: { size: 2, tags: ['a', 'b'], nested: null } }
  ]
  for (const c of cases) {
    const full = validateObject(def, c)
    t.ok(full.length > 0)
    t.same(validateObject(def, c, copy(valid)), full)
  }
})
