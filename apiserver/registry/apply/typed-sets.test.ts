// What a write from an empty object adds (every create) is found by a walk of its own: it must agree with the
// general comparison, for struct fields, granular maps, keyed and set lists, atomic lists and duplicated keys.
import t from 'tap'
import { printPath } from './field-path.js'
import { smdSchemaType } from './smd-schema.js'
import { compare } from './typed-sets.js'
import type { Json } from '../patch/json-pointer.js'

const type = smdSchemaType(`types:
- name: root
  map:
    fields:
    - name: spec
      type: {namedType: spec}
    - name: labels
      type: {map: {elementType: {scalar: string}}}
- name: spec
  map:
    fields:
    - name: replicas
      type: {scalar: numeric}
    - name: items
      type:
        list:
          elementType: {namedType: item}
          elementRelationship: associative
          keys: [name]
    - name: tags
      type: {list: {elementType: {scalar: string}, elementRelationship: associative}}
    - name: args
      type: {list: {elementType: {scalar: string}, elementRelationship: atomic}}
    - name: empty
      type: {map: {elementType: {scalar: string}}}
- name: item
  map:
    fields:
    - name: name
      type: {scalar: string}
    - name: value
      type: {scalar: string}
`, 'root')

const paths = (lhs: Json, rhs: Json): string[] => compare(lhs, rhs, type).added.paths().map(printPath)

const objects: Record<string, Json> = {
  'struct fields, maps and every list kind': {
    labels: { app: 'web', tier: 'a' },
    spec: { replicas: 3, items: [{ name: 'a', value: '1' }, { name: 'b' }], tags: ['x', 'y'], args: ['--v', '2'], empty: {} },
    unknown: { nested: [1, 2] }
  },
  'a key given twice': { spec: { items: [{ name: 'a', value: '1' }, { name: 'a', value: '2' }, { name: 'c' }] } },
  'nulls and empty lists': { spec: { replicas: null, items: [], tags: null } }
}

for (const [name, obj] of Object.entries(objects)) {
  t.test(`from an empty object, the added paths agree with the general comparison: ${name}`, async t => {
    // A member whose value is undefined keeps the left side non-empty, so the general walk runs.
    const general = paths({ placeholder: undefined } as unknown as Json, obj)
    t.ok(general.length > 0)
    t.same(paths({}, obj), general)
  })
}

t.test('from an empty object nothing is modified or removed', async t => {
  const c = compare({}, objects['struct fields, maps and every list kind'], type)
  t.ok(c.modified.empty())
  t.ok(c.removed.empty())
  t.ok(c.added.paths().map(printPath).includes('.spec.items[name="a"].value'))
})
