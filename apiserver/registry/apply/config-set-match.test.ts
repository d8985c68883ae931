// The one-walk test of whether a configuration sets exactly a given set must agree with making the set and comparing
// it (toFieldSet, the filter, FieldSet.equals): struct fields, granular maps, keyed and set lists, atomic lists,
// nulls and empty values, undeclared fields, dropped system fields; where it cannot tell it says false.

import t from 'tap'
import { smdSchemaType } from './smd-schema.js'
import { toFieldSet } from './typed-sets.js'
import { fieldElement } from './field-path.js'
import { DEDUCED, type MergeType } from './merge-type.js'
import { setsExactly, type DroppedFields } from './config-set-match.js'
import { cloneJson, type Json } from '../patch/json-pointer.js'
import type { FieldSet } from './field-set.js'

const type = smdSchemaType(`types:
- name: root
  map:
    fields:
    - name: apiVersion
      type: {scalar: string}
    - name: kind
      type: {scalar: string}
    - name: metadata
      type: {namedType: meta}
    - name: spec
      type: {namedType: spec}
    - name: status
      type: {namedType: spec}
- name: meta
  map:
    fields:
    - name: name
      type: {scalar: string}
    - name: namespace
      type: {scalar: string}
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
    - name: nested
      type: {namedType: spec}
- name: item
  map:
    fields:
    - name: name
      type: {scalar: string}
    - name: value
      type: {scalar: string}
    - name: ports
      type:
        list:
          elementType: {namedType: port}
          elementRelationship: associative
          keys: [port, protocol]
- name: port
  map:
    fields:
    - name: port
      type: {scalar: numeric}
    - name: protocol
      type: {scalar: string}
    - name: label
      type: {scalar: string}
`, 'root')

const dropped: DroppedFields = {
  top: new Set(['f:apiVersion', 'f:kind', 'f:status']),
  under: 'f:metadata',
  members: new Set(['name', 'namespace'].map(fieldElement))
}

/** The filter the field manager's main updater applies (what `dropped` describes). */
const filtered = (config: Json, ty: MergeType): FieldSet =>
  toFieldSet(config, ty).dropShallow([...dropped.top], { under: dropped.under, members: [...dropped.members] })

type Obj = Record<string, any>
const base = (): Obj => ({
  apiVersion: 'v1',
  kind: 'Thing',
  metadata: { name: 'a', namespace: 'ns', labels: { app: 'a' } },
  spec: {
    replicas: 2,
    items: [{ name: 'x', value: '1', ports: [{ port: 80, protocol: 'TCP', label: 'web' }] }, { name: 'y' }],
    tags: ['t1', 't2'],
    args: ['--a', '--b'],
    nested: { replicas: 1 }
  }
})

/** Variants of the base configuration: [what, change, whether the walk may only say false (it cannot tell)]. */
const variants: Array<[string, (c: Obj) => void, boolean?]> = [
  ['the same', () => {}],
  ['a value changed', c => { c.spec.items[0].value = '2' }],
  ['a label value changed', c => { c.metadata.labels.app = 'b' }],
  ['a list key value changed', c => { c.spec.items[1].name = 'z' }],
  ['one of two keys changed', c => { c.spec.items[0].ports[0].protocol = 'UDP' }],
  ['a set value changed', c => { c.spec.tags[1] = 't3' }],
  ['a set value added', c => { c.spec.tags.push('t3') }],
  ['an item without fields added', c => { c.spec.items.push({ name: 'v' }) }],
  ['an atomic list changed', c => { c.spec.args = ['--c'] }],
  ['an atomic list emptied', c => { c.spec.args = [] }],
  ['an item added', c => { c.spec.items.push({ name: 'w' }) }],
  ['an item dropped', c => { c.spec.items.pop() }],
  ['a field added', c => { c.spec.items[1].value = 'v' }],
  ['a field dropped', c => { delete c.spec.replicas }],
  ['a null value', c => { c.spec.replicas = null }],
  ['a null map', c => { c.spec.nested = null }],
  ['an empty map', c => { c.spec.nested = {} }],
  ['an empty granular map', c => { c.spec.empty = {} }],
  ['an empty keyed list', c => { c.spec.items = [] }],
  ['a label added', c => { c.metadata.labels.tier = 'x' }],
  ['labels emptied', c => { c.metadata.labels = {} }],
  ['metadata with name only', c => { c.metadata = { name: 'a' } }],
  ['metadata dropped', c => { delete c.metadata }],
  ['another name (dropped)', c => { c.metadata.name = 'b' }],
  ['an undeclared field', c => { c.spec.extra = 'x' }],
  ['an undeclared map', c => { c.spec.extra = { a: 1 } }],
  ['a wrongly typed value', c => { c.spec.nested = 'text' }],
  ['a scalar for a list', c => { c.spec.items = 'x' }],
  ['another apiVersion (dropped)', c => { c.apiVersion = 'v2' }],
  ['status (dropped, not scalar)', c => { c.status = { replicas: 1 } }, true],
  ['a duplicated set value', c => { c.spec.tags = ['t1', 't1'] }, true]
]

for (const [label, ty] of [['typed', type], ['deduced', DEDUCED]] as Array<[string, MergeType]>) {
  t.test(`${label}: the walk agrees with making the set and comparing it`, async t => {
    let kept = 0
    const disagreements: string[] = []
    for (const [targetLabel, changeTarget] of variants) {
      const targetConfig = base()
      changeTarget(targetConfig)
      const target = filtered(targetConfig as Json, ty).compact()
      for (const [configLabel, change, unsure] of variants) {
        const config = base()
        change(config)
        const slow = filtered(cloneJson(config) as Json, ty).equals(target)
        const fast = setsExactly(config as Json, ty, target, dropped)
        // Where the walk may not tell (typed lists with duplicates, dropped maps), it may say false but never wrongly true.
        if (fast !== slow && (unsure !== true || fast)) disagreements.push(`${configLabel} against ${targetLabel}: ${String(fast)}, making the set: ${String(slow)}`)
        if (unsure === true && ty === type) t.equal(fast, false, `${configLabel} against ${targetLabel}: cannot tell`)
        if (fast) kept++
      }
    }
    t.same(disagreements, [], `${variants.length ** 2} pairs`)
    t.ok(kept > variants.length, `configurations found to set the target exactly (${kept})`)
  })
}

t.test('a configuration toFieldSet refuses is not found to set a target', async t => {
  const target = filtered(base() as Json, type).compact()
  const config = base()
  config.spec.items.push({ value: 'no name' })
  t.throws(() => toFieldSet(config as Json, type), /associative list/)
  t.throws(() => setsExactly(config as Json, type, target, dropped), /associative list/)
  const dup = base()
  dup.spec.items.push({ name: 'x' })
  t.equal(setsExactly(dup as Json, type, filtered(dup as Json, type), dropped), false, 'duplicate keyed items: cannot tell')
})
