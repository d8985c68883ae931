// The public strategic-merge-patch cases (test/conformance-data/strategic-merge-patch), each against the
// OpenAPI v2 and v3 forms of their test schema, through the same PatchSchema the built-in kinds use.

import t, { type Test } from 'tap'
import { readFileSync } from 'node:fs'
import { parse } from 'yaml'
import { conformanceData } from '../../../test/conformance-data/locate.js'
import { createResolver } from '../../schema/resolve.js'
import type { SchemaDefinitions, StructuralSchema } from '../../schema/types.js'
import { structuralPatchSchema, type PatchSchema } from './smp-schema.js'
import { createThreeWayMergePatch, createTwoWayMergePatch } from './smp-diff.js'
import { sortMergeListsByNameMap } from './smp-sort.js'
import { strategicMergePatch } from './strategic-merge-patch.js'
import { SmpConflictError, isMap, type JsonMap, type JsonValue } from './smp-values.js'

const dir = (f: string): string => conformanceData(`strategic-merge-patch/${f}`)

/** An OpenAPI v2/v3 document's definitions as orch structural schemas (`x-kubernetes-*` read as `x-orch-*`). */
function loadSchema (file: string, kind: string): PatchSchema {
  const doc = parse(readFileSync(dir(`openapi/${file}`), 'utf8')) as Record<string, any>
  const raw = (doc.definitions ?? doc.components.schemas) as Record<string, unknown>
  const convert = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(convert)
    if (v === null || typeof v !== 'object') return v
    const out: Record<string, unknown> = {}
    for (const [k, x] of Object.entries(v)) {
      if (k === '$ref') out.$ref = String(x).replace(/^#\/(definitions|components\/schemas)\//, '')
      else out[k.replace(/^x-kubernetes-/, 'x-orch-')] = convert(x)
    }
    return out
  }
  const defs = convert(raw) as SchemaDefinitions
  return structuralPatchSchema(defs[kind] as StructuralSchema, createResolver(defs), kind)
}

const SCHEMAS: Array<[string, PatchSchema]> = [
  ['openapi-v2', loadSchema('swagger-merge-item.json', 'mergeItem')],
  ['openapi-v3', loadSchema('swagger-merge-item-v3.json', 'mergeItem')]
]
const PRECISION: Array<[string, PatchSchema]> = [
  ['openapi-v2', loadSchema('swagger-precision-item.json', 'PrecisionItem')],
  ['openapi-v3', loadSchema('swagger-precision-item-v3.json', 'PrecisionItem')]
]

interface Case {
  description: string
  original?: JsonMap; twoWay?: JsonMap; modified?: JsonMap; current?: JsonMap
  threeWay?: JsonMap; result?: JsonMap; twoWayResult?: JsonMap; expectedError?: string; sorted?: JsonMap
}

function cases (file: string): Case[] {
  return (parse(readFileSync(dir(file), 'utf8'), { version: '1.1' }) as { testCases: Case[] }).testCases
}

/** Go's json.Marshal of a decoded document: object keys sorted, big integers kept. */
function goJson (v: JsonValue): string {
  if (Array.isArray(v)) return `[${v.map(goJson).join(',')}]`
  if (isMap(v)) return `{${Object.keys(v).sort().map(k => `${JSON.stringify(k)}:${goJson(v[k])}`).join(',')}}`
  if (typeof v === 'bigint') return v.toString()
  return JSON.stringify(v)
}

const counts = new Map<string, { pass: number; total: number }>()
function tally (file: string, ok: boolean): void {
  const c = counts.get(file) ?? { pass: 0, total: 0 }
  c.total++
  if (ok) c.pass++
  counts.set(file, c)
}
t.teardown(() => {
  for (const [file, c] of counts) t.comment(`${file}: ${c.pass}/${c.total} cases pass`)
})

type Check = (tt: Tap, schema: PatchSchema, name: string) => void
type Tap = Test

/** One test per case; the case passes when every check passes against both schemas. */
function run (file: string, list: Array<{ description: string }>, check: (c: any) => Check): void {
  t.test(file, async t => {
    for (const c of list) {
      await t.test(c.description, async tt => {
        const before = tt.counts.fail
        for (const [name, schema] of SCHEMAS) check(c)(tt, schema, name)
        tally(file, tt.counts.fail === before)
      })
    }
  })
}

/** Apply `patch` to `original`; compare with `expected`, or expect an error containing `expectedError`. */
function checkApply (tt: Tap, schema: PatchSchema, what: string, original: JsonMap, patch: JsonMap, expected: JsonMap, expectedError?: string): void {
  let got: JsonMap
  try {
    got = strategicMergePatch(original, patch, schema)
  } catch (err) {
    if (expectedError !== undefined) { tt.match((err as Error).message, expectedError, what); return }
    tt.fail(`${what}: ${(err as Error).message}`)
    return
  }
  if (expectedError !== undefined) { tt.fail(`${what}: expected an error containing ${expectedError}`); return }
  tt.equal(goJson(got), goJson(expected), what)
}

function twoWay (tt: Tap, schema: PatchSchema, name: string, c: Case, prep: (d?: JsonMap) => JsonMap | undefined): void {
  const original = prep(c.original) ?? {}
  const modified = prep(c.modified) ?? {}
  let patch: JsonMap
  try {
    patch = createTwoWayMergePatch(original, modified, schema)
  } catch (err) {
    tt.fail(`${name} two-way creation: ${(err as Error).message}`)
    return
  }
  tt.equal(goJson(patch), goJson(prep(c.twoWay) ?? {}), `${name} two-way patch`)
  checkApply(tt, schema, `${name} two-way result`, original, patch, prep(c.twoWayResult ?? c.modified) ?? {}, c.expectedError)
}

function threeWay (tt: Tap, schema: PatchSchema, name: string, c: Case, prep: (d?: JsonMap) => JsonMap | undefined): void {
  const [o, m, cur] = [prep(c.original) ?? {}, prep(c.modified) ?? {}, prep(c.current) ?? {}]
  const conflictCase = c.description.includes('conflict')
  let patch: JsonMap
  try {
    patch = createThreeWayMergePatch(o, m, cur, schema, false)
    if (conflictCase || c.result === undefined) { tt.fail(`${name}: expected conflict did not occur`); return }
  } catch (err) {
    if (!conflictCase) { tt.fail(`${name}: unexpected error: ${(err as Error).message}`); return }
    tt.ok(err instanceof SmpConflictError, `${name}: conflict reported (${(err as Error).message})`)
    if (!(err instanceof SmpConflictError)) return
    if (c.result === undefined) return
    try {
      patch = createThreeWayMergePatch(o, m, cur, schema, true)
    } catch (err2) {
      tt.fail(`${name} forced three-way creation: ${(err2 as Error).message}`)
      return
    }
  }
  tt.equal(goJson(patch), goJson(prep(c.threeWay) ?? {}), `${name} three-way patch`)
  checkApply(tt, schema, `${name} three-way result`, cur, patch, prep(c.result) ?? {}, c.expectedError)
}

const sorted = (schema: PatchSchema) => (d?: JsonMap): JsonMap | undefined => d === undefined || d === null ? undefined : sortMergeListsByNameMap(d, schema)
const raw = (d?: JsonMap): JsonMap | undefined => d === undefined || d === null ? undefined : d

run('smp_sort_merge_list_cases.yaml', cases('smp_sort_merge_list_cases.yaml'), (c: Case) => (tt, schema, name) => {
  tt.equal(goJson(sortMergeListsByNameMap(c.original ?? {}, schema)), goJson(c.sorted ?? {}), name)
})

run('smp_custom_two_way_cases.yaml', cases('smp_custom_two_way_cases.yaml'), (c: Case) => (tt, schema, name) => {
  const s = sorted(schema)
  checkApply(tt, schema, name, s(c.original) ?? {}, s(c.twoWay) ?? {}, s(c.twoWayResult ?? c.modified) ?? {})
})

run('smp_custom_two_way_raw_cases.yaml', cases('smp_custom_two_way_raw_cases.yaml'), (c: Case) => (tt, schema, name) => {
  checkApply(tt, schema, name, c.original ?? {}, c.twoWay ?? {}, c.twoWayResult ?? c.modified ?? {}, c.expectedError)
})

for (const file of ['smp_create_patch_cases.yaml']) {
  run(file, cases(file), (c: Case) => (tt, schema, name) => {
    twoWay(tt, schema, name, c, sorted(schema))
    threeWay(tt, schema, name, c, sorted(schema))
  })
}

for (const file of ['smp_create_patch_raw_cases.yaml', 'smp_replace_raw_extension_cases.yaml']) {
  run(file, cases(file), (c: Case) => (tt, schema, name) => {
    twoWay(tt, schema, name, c, raw)
    threeWay(tt, schema, name, c, raw)
  })
}

interface TextCase {
  description: string
  Original?: string; Current?: string; Modified?: string
  ExpectedTwoWay?: string; ExpectedTwoWayErr?: string; ExpectedTwoWayResult?: string
  ExpectedThreeWay?: string; ExpectedThreeWayErr?: string; ExpectedThreeWayResult?: string
  Old?: string; New?: string; ExpectedPatch?: string; ExpectedResult?: string
}

/** JSON text parsed with whole numbers as BigInt, so int64 values survive as Go keeps them. */
const exact = (text: string): JsonMap => parse(text, { intAsBigInt: true }) as JsonMap

function checkText (tt: Tap, name: string, make: () => JsonMap, expected?: string, expectedErr?: string): JsonMap | undefined {
  try {
    const got = make()
    if (expected === undefined) { tt.fail(`${name}: expected an error containing ${expectedErr ?? '?'}`); return undefined }
    tt.equal(goJson(got), expected, name)
    return got
  } catch (err) {
    if (expectedErr === undefined) { tt.fail(`${name}: ${(err as Error).message}`); return undefined }
    tt.match((err as Error).message, expectedErr, `${name}: ${expectedErr}`)
    return undefined
  }
}

run('smp_unknown_field_cases.yaml', cases('smp_unknown_field_cases.yaml'), (c: TextCase) => (tt, schema, name) => {
  const [o, cur, m] = [exact(c.Original ?? '{}'), exact(c.Current ?? '{}'), exact(c.Modified ?? '{}')]
  const two = checkText(tt, `${name} two-way`, () => createTwoWayMergePatch(o, m, schema), c.ExpectedTwoWay, c.ExpectedTwoWayErr)
  if (two !== undefined) checkText(tt, `${name} two-way result`, () => strategicMergePatch(o, two, schema), c.ExpectedTwoWayResult)
  const three = checkText(tt, `${name} three-way`, () => createThreeWayMergePatch(o, m, cur, schema, false), c.ExpectedThreeWay, c.ExpectedThreeWayErr)
  if (three !== undefined) checkText(tt, `${name} three-way result`, () => strategicMergePatch(cur, three, schema), c.ExpectedThreeWayResult)
})

t.test('smp_number_conversion_cases.yaml', async t => {
  const file = 'smp_number_conversion_cases.yaml'
  for (const c of cases(file) as unknown as TextCase[]) {
    await t.test(c.description, async tt => {
      const before = tt.counts.fail
      for (const [name, schema] of PRECISION) {
        const [o, n] = [exact(c.Old ?? '{}'), exact(c.New ?? '{}')]
        const patch = checkText(tt, `${name} patch`, () => createTwoWayMergePatch(o, n, schema), c.ExpectedPatch)
        if (patch !== undefined) checkText(tt, `${name} result`, () => strategicMergePatch(o, patch, schema), c.ExpectedResult)
      }
      tally(file, tt.counts.fail === before)
    })
  }
})

t.test('a __proto__ member in a patch stays a data member and changes no prototype', async t => {
  const [, schema] = SCHEMAS[0]
  const patch = JSON.parse('{"simpleMap":{"__proto__":{"polluted":"yes"}},"__proto__":{"x":1}}') as JsonMap
  const out = strategicMergePatch({ simpleMap: { a: 'b' } }, patch, schema)
  t.equal(Object.getPrototypeOf(out), Object.prototype)
  t.equal(Object.getPrototypeOf(out.simpleMap), Object.prototype)
  t.same(Object.keys(out.simpleMap as JsonMap), ['a', '__proto__'])
  t.equal(({} as Record<string, unknown>).polluted, undefined)
})
