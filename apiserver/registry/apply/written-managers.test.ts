// Managers kept from what the field manager encoded: the same as decoding the entries again, and refused once the
// entries were replaced or changed.

import t from 'tap'
import { FieldSet } from './field-set.js'
import { FieldManager } from './field-manager.js'
import { decodeManagedFields } from './managed-fields.js'
import { decodedFromWritten } from './written-managers.js'
import { mergeTypeOf } from './schema-types.js'
import { cloneJson } from '../patch/json-pointer.js'
import { openFixture } from '../testing.js'
import type { GenericStore } from '../generic-store.js'

type Obj = Record<string, unknown>

/** Every node of a set, empty ones too, members and children sorted: equal dumps are equal structures. */
function dump (s: FieldSet): unknown {
  const children: Record<string, unknown> = {}
  for (const pe of [...s.children.keys()].sort()) children[pe] = dump(s.children.get(pe) as FieldSet)
  return { members: [...s.members].sort(), children }
}

function deployment (image: string, sidecar: boolean): Obj {
  const containers: unknown[] = [{ name: 'app', image, ports: [{ containerPort: 80 }] }]
  if (sidecar) containers.push({ name: 'proxy', image: 'proxy:1', env: [{ name: 'X', value: '1' }] })
  return {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'w', namespace: 'default', labels: { app: 'w' } },
    spec: { selector: { matchLabels: { app: 'w' } }, template: { metadata: { labels: { app: 'w' } }, spec: { containers } } }
  }
}

t.test('the kept managers are what decoding the written entries gives', async t => {
  const fx = await openFixture()
  t.teardown(() => fx.close())
  const core = (fx.registry.handler('apps', 'v1', 'deployments') as GenericStore).core
  const fm = new FieldManager({ type: mergeTypeOf(core.def), apiVersion: 'apps/v1', statusSubresource: true, now: () => new Date(Date.UTC(2024, 0, 1)) })
  let live = fm.apply(undefined, deployment('a:1', true), 'deployer', false) as Obj
  const steps: Array<(live: Obj) => Obj | undefined> = [
    l => fm.apply(l, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'w' }, spec: { replicas: 3 } }, 'scaler', true),
    l => fm.apply(l, deployment('a:2', true), 'deployer', false),
    l => fm.apply(l, deployment('a:3', false), 'deployer', false), // drops the sidecar: pruning
    l => {
      const next = cloneJson(l)
      ;(next.metadata as Obj).annotations = { note: 'x' }
      fm.update(l, next, 'kubectl-edit')
      return next
    },
    l => fm.apply(l, deployment('a:4', true), 'other', true)
  ]
  for (const [i, step] of steps.entries()) {
    const next = step(live)
    if (next === undefined) continue
    live = next
    const entries = (live.metadata as Obj).managedFields
    const written = fm.writtenManagers(live)
    if (written === undefined) {
      t.fail(`step ${i + 1}: the entries just written are found`)
      continue
    }
    const copy = cloneJson(entries)
    const fromWritten = decodedFromWritten(written, copy)
    const decoded = decodeManagedFields(copy, true)
    t.same([...fromWritten?.managers.keys() ?? []], [...decoded.managers.keys()], `step ${i + 1}: the same managers in order`)
    for (const [id, m] of decoded.managers) {
      const w = fromWritten?.managers.get(id)
      t.same(w === undefined ? undefined : dump(w.set), dump(m.set), `step ${i + 1}: ${id}'s set, node for node`)
      t.same({ apiVersion: w?.apiVersion, applied: w?.applied }, { apiVersion: m.apiVersion, applied: m.applied })
      t.equal(w?.encoded, m.encoded, 'the tree of the list given, for re-encoding')
    }
    t.same([...fromWritten?.times ?? []], [...decoded.times])
  }
})

t.test('entries replaced, added or changed are not vouched for', async t => {
  const fx = await openFixture()
  t.teardown(() => fx.close())
  const core = (fx.registry.handler('apps', 'v1', 'deployments') as GenericStore).core
  const fm = new FieldManager({ type: mergeTypeOf(core.def), apiVersion: 'apps/v1', statusSubresource: true, now: () => new Date() })
  const fresh = (): Obj => fm.apply(undefined, deployment('a:1', true), 'deployer', false) as Obj
  const entriesOf = (o: Obj): Array<Record<string, unknown>> => (o.metadata as Obj).managedFields as Array<Record<string, unknown>>
  t.ok(fm.writtenManagers(fresh()))
  const copied = fresh()
  ;(copied.metadata as Obj).managedFields = cloneJson(entriesOf(copied))
  t.equal(fm.writtenManagers(copied), undefined, 'an equal copy of the list')
  const retimed = fresh()
  entriesOf(retimed)[0].time = '2020-01-01T00:00:00Z'
  t.equal(fm.writtenManagers(retimed), undefined, 'a time changed')
  const retreed = fresh()
  entriesOf(retreed)[0].fieldsV1 = {}
  t.equal(fm.writtenManagers(retreed), undefined, 'a tree replaced')
  const grown = fresh()
  entriesOf(grown).push({ manager: 'x', operation: 'Update', fieldsType: 'FieldsV1', fieldsV1: {} })
  t.equal(fm.writtenManagers(grown), undefined, 'an entry added')
  t.equal(decodedFromWritten(fm.writtenManagers(fresh()) ?? { entries: [] }, []), undefined, 'a list of another length')
})

t.test('compact leaves out nodes without paths, and returns a set without any as it is', async t => {
  const clean = FieldSet.of([['f:a', 'f:b'], ['f:c']])
  t.equal(clean.compact(), clean)
  const withEmpty = FieldSet.of([['f:a', 'f:b'], ['f:c']])
  withEmpty.child('f:d').child('f:e')
  withEmpty.child('f:a').child('f:x')
  const compacted = withEmpty.compact()
  t.same(dump(compacted), dump(FieldSet.fromFieldsV1(withEmpty.toFieldsV1())))
  t.same(dump(compacted), dump(clean))
  t.ok(withEmpty.children.has('f:d'), 'the set itself is left as it was')
})

t.test('equals: the same paths, whatever empty nodes either side holds', async t => {
  const paths = [['f:a'], ['f:b', 'f:c'], ['f:b', 'f:d', 'f:e'], ['f:f', 'k:{"name":"x"}']]
  // Every pair of subsets of the paths, with and without empty nodes added: equal exactly when the path lists are.
  const subsets: string[][][] = []
  for (let mask = 0; mask < 1 << paths.length; mask++) subsets.push(paths.filter((_, i) => (mask & (1 << i)) !== 0))
  const withEmpty = (ps: string[][], empty: boolean): FieldSet => {
    const s = FieldSet.of(ps)
    if (empty) { s.child('f:z').child('f:y'); s.child('f:b').child('f:w') }
    return s
  }
  let checked = 0
  for (const p of subsets) {
    for (const q of subsets) {
      const same = JSON.stringify(p) === JSON.stringify(q)
      for (const ep of [false, true]) {
        for (const eq of [false, true]) {
          const a = withEmpty(p, ep)
          const b = withEmpty(q, eq)
          if (a.equals(b) !== same || b.equals(a) !== same) t.fail(`${JSON.stringify(p)} ${ep} vs ${JSON.stringify(q)} ${eq}`)
          checked++
        }
      }
    }
  }
  t.equal(checked, 4 * 16 * 16)
  const s = FieldSet.of(paths)
  t.ok(s.equals(s))
})
