// The 25 public server-side apply cases (structured-merge-diff's merge tests), run against the Updater.

import { readFileSync } from 'node:fs'
import t from 'tap'
import { parse } from 'yaml'
import { conformanceData } from '../../../test/conformance-data/locate.js'
import { jsonEqual, type Json } from '../patch/json-pointer.js'
import { printPath } from './field-path.js'
import { smdSchemaType } from './smd-schema.js'
import { ApplyConflicts, Updater, type Managers } from './updater.js'

interface Op { op: 'apply' | 'forceApply' | 'update'; manager: string; apiVersion: string; object: string; expectConflicts?: Array<{ manager: string; field: string }> }
interface Case {
  id: string
  schema: string
  ops: Op[]
  expectedObject: string
  expectedManaged?: Record<string, { apiVersion: string; fields: string[]; fieldsV1: unknown }> | null
}

const data = JSON.parse(readFileSync(conformanceData('server-side-apply/ssa_cases.json'), 'utf8')) as {
  schemas: Record<string, { rootType: string; schema: string }>
  cases: Case[]
}

const doc = (text: string): Json => (parse(text) ?? {}) as Json

let passed = 0
for (const c of data.cases) {
  t.test(c.id, async (t) => {
    const s = data.schemas[c.schema]
    const updater = new Updater(smdSchemaType(s.schema, s.rootType))
    let live: Json = {}
    let managers: Managers = new Map()
    for (const [i, op] of c.ops.entries()) {
      const config = doc(op.object)
      if (op.op === 'update') {
        managers = updater.update(live, config, op.apiVersion, managers, op.manager)
        live = config
        continue
      }
      try {
        const out = updater.apply(live, config, op.apiVersion, managers, op.manager, op.op === 'forceApply')
        t.notOk(op.expectConflicts, `op ${i} applies`)
        if (out.object !== undefined) live = out.object
        managers = out.managers
      } catch (err) {
        if (!(err instanceof ApplyConflicts)) throw err
        const got = err.conflicts.map(x => `${x.manager} ${printPath(x.path)}`).sort()
        const want = (op.expectConflicts ?? []).map(x => `${x.manager} ${x.field}`).sort()
        t.same(got, want, `op ${i} conflicts`)
      }
    }
    t.ok(jsonEqual(live, doc(c.expectedObject)), `object: got ${JSON.stringify(live)}`)
    for (const [id, m] of managers) t.notOk(m.set.empty(), `${id} has fields`)
    if (c.expectedManaged !== undefined && c.expectedManaged !== null) {
      t.same([...managers.keys()].sort(), Object.keys(c.expectedManaged).sort(), 'managers')
      for (const [id, want] of Object.entries(c.expectedManaged)) {
        const got = managers.get(id)
        if (got === undefined) continue
        t.equal(got.apiVersion, want.apiVersion, `${id} apiVersion`)
        t.same(got.set.paths().map(printPath).sort(), [...want.fields].sort(), `${id} fields`)
        t.ok(jsonEqual(got.set.toFieldsV1() as Json, want.fieldsV1 as Json), `${id} fieldsV1 ${JSON.stringify(got.set.toFieldsV1())}`)
      }
    }
    if (!t.passing()) return
    passed++
  })
}

t.teardown(() => { console.log(`# server-side apply conformance: ${passed}/${data.cases.length} cases pass`) })
