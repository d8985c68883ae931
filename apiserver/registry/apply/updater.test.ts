// Ownership across schema changes (spec §4.11.8), on the Updater directly.
import t from 'tap'
import { printPath } from './field-path.js'
import { smdSchemaType } from './smd-schema.js'
import { ApplyConflicts, Updater, type Managers } from './updater.js'

const schema = (relationship: 'associative' | 'atomic'): string => `types:
- name: root
  map:
    fields:
    - name: list
      type:
        list:
          elementType: {scalar: string}
          elementRelationship: ${relationship}
`

const set = new Updater(smdSchemaType(schema('associative'), 'root'))
const atomic = new Updater(smdSchemaType(schema('atomic'), 'root'))

function conflictsOf (f: () => unknown): string[] {
  try {
    f()
  } catch (err) {
    if (err instanceof ApplyConflicts) return err.conflicts.map(c => `${c.manager} ${printPath(c.path)}`)
    throw err
  }
  return []
}

t.test('a set that became atomic is owned whole by whoever owned an element: later changes conflict', async t => {
  const first = set.apply({}, { list: ['a', 'b'] }, 'v1', new Map(), 'alice', false)
  const live = first.object ?? {}
  t.same(first.managers.get('alice')?.set.paths().map(printPath), ['.list[="a"]', '.list[="b"]'])
  t.same(conflictsOf(() => atomic.apply(live, { list: ['c'] }, 'v1', first.managers, 'bob', false)), ['alice .list'])
})

t.test('an atomic list that became a set infers no ownership of its elements: no conflict', async t => {
  const first = atomic.apply({}, { list: ['a', 'b'] }, 'v1', new Map(), 'alice', false)
  const live = first.object ?? {}
  t.same(first.managers.get('alice')?.set.paths().map(printPath), ['.list'])
  const second = set.apply(live, { list: ['c'] }, 'v1', first.managers as Managers, 'bob', false)
  t.same(second.object, { list: ['a', 'b', 'c'] })
})
