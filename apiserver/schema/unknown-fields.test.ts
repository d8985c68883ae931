import t from 'tap'
import { findUnknownFields, pruneUnknownFields } from './unknown-fields.js'
import { builtinDefinitions } from './builtin/catalog.js'
import type { ResourceDefinition, StructuralSchema } from './types.js'

const kinds = builtinDefinitions()
const kind = (k: string): ResourceDefinition => kinds.find((d) => d.kind === k) as ResourceDefinition
const custom = (schema: StructuralSchema): ResourceDefinition => ({
  ...kind('ConfigMap'), schema, definitions: {}, custom: { crdName: 'x.example.com', preserveUnknownFieldsAtRoot: false },
})

t.test('finds unknown fields at any depth in a Pod', async (t) => {
  const pod = {
    apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', labels: { a: 'b' }, bogus: 1 },
    spec: { foo: 1, containers: [{ name: 'a', image: 'x', bar: true, ports: [{ containerPort: 1, baz: 2 }] }] },
    extra: {},
  }
  t.same(findUnknownFields(kind('Pod'), pod),
    ['metadata.bogus', 'spec.foo', 'spec.containers[0].bar', 'spec.containers[0].ports[0].baz', 'extra'])
})

t.test('maps, preserved and embedded nodes have no unknown fields', async (t) => {
  const def = custom({
    type: 'object',
    properties: {
      metadata: { type: 'object', properties: { name: { type: 'string' } } },
      spec: {
        type: 'object',
        properties: {
          labels: { type: 'object', additionalProperties: { type: 'string' } },
          free: { type: 'object', 'x-orch-preserve-unknown-fields': true, properties: { known: { type: 'object', properties: {} } } },
          any: { type: 'object', additionalProperties: true },
          embedded: { type: 'object', 'x-orch-embedded-resource': true, properties: {} },
          size: { 'x-orch-int-or-string': true },
        },
      },
    },
  })
  const obj = {
    apiVersion: 'example.com/v1', kind: 'X', metadata: { name: 'a' },
    spec: {
      labels: { x: 'y' }, free: { anything: 1, known: { dropped: 1 } }, any: { z: 1 },
      embedded: { apiVersion: 'v1', kind: 'Pod', metadata: {}, stray: 1 }, size: '1Gi',
    },
  }
  t.same(findUnknownFields(def, obj), ['spec.free.known.dropped', 'spec.embedded.stray'])
  t.same(pruneUnknownFields(def, obj), ['spec.free.known.dropped', 'spec.embedded.stray'])
  t.same(obj.spec.free, { anything: 1, known: {} })
  t.same(obj.spec.embedded, { apiVersion: 'v1', kind: 'Pod', metadata: {} })
  t.same(findUnknownFields(def, obj), [])
})

t.test('an object schema without properties knows no fields', async (t) => {
  const def = custom({ type: 'object', properties: { spec: { type: 'object' } } })
  t.same(findUnknownFields(def, { spec: { a: 1 } }), ['spec.a'])
})

t.test('paths through map keys, list items and fields named like numbers', async (t) => {
  const item = { type: 'object' as const, properties: { name: { type: 'string' as const } } }
  const def = custom({
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        properties: {
          byName: { type: 'object', additionalProperties: { type: 'array', items: item } },
          0: { type: 'object', properties: {} }
        }
      }
    }
  })
  const obj = { spec: { byName: { web: [{ name: 'a' }, { name: 'b', extra: 1 }], 7: [{ other: true }] }, 0: { x: 1 } } }
  t.same(findUnknownFields(def, obj), ['spec.0.x', 'spec.byName[7][0].other', 'spec.byName[web][1].extra'])
})
