import t from 'tap'
import { readFileSync } from 'node:fs'
import { conformanceData } from '../../../test/conformance-data/locate.js'
import { applyJsonPatch, decodeJsonPatch } from './json-patch.js'
import { isPatchError } from './patch-error.js'
import type { Json } from './json-pointer.js'

const CONFORMANCE = conformanceData('json-patch')

interface TestRecord { comment?: string; doc?: Json; patch?: unknown; expected?: Json; error?: string; disabled?: boolean }

/** JSON text with sorted object keys, so documents compare regardless of member order. */
function canonical (v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`
  if (v !== null && typeof v === 'object') {
    return `{${Object.keys(v).sort().map(k => `${JSON.stringify(k)}:${canonical((v as { [k: string]: unknown })[k])}`).join(',')}}`
  }
  return JSON.stringify(v)
}

function run (doc: Json, patch: unknown): Json {
  return applyJsonPatch(doc, decodeJsonPatch(patch))
}

for (const file of ['tests.json', 'spec_tests.json']) {
  t.test(`passes the public conformance records of ${file}`, async t => {
    const records = JSON.parse(readFileSync(`${CONFORMANCE}/${file}`, 'utf8')) as TestRecord[]
    let passed = 0
    let skipped = 0
    for (const [i, r] of records.entries()) {
      const name = `#${i} ${r.comment ?? ''}`
      if (r.disabled === true || r.doc === undefined || r.patch === undefined) { skipped++; continue }
      const before = JSON.stringify(r.doc)
      if (r.error !== undefined) {
        let failure: unknown
        try { run(r.doc, r.patch) } catch (err) { failure = err }
        t.ok(isPatchError(failure), `${name} fails (${r.error})`)
      } else if (r.expected !== undefined) {
        t.equal(canonical(run(r.doc, r.patch)), canonical(r.expected), name)
      } else {
        t.doesNotThrow(() => run(r.doc as Json, r.patch), name)
      }
      t.equal(JSON.stringify(r.doc), before, `${name} leaves its input unchanged`)
      passed++
    }
    t.comment(`${file}: ${passed} records run, ${skipped} skipped (disabled or comment only)`)
  })
}

t.test('a document that is not an array is an invalid patch', async t => {
  t.throws(() => decodeJsonPatch({ op: 'add' }), { code: 'InvalidPatch', message: /cannot unmarshal object/ })
  t.throws(() => decodeJsonPatch(['add']), { code: 'InvalidPatch', message: /cannot unmarshal string/ })
  t.same(decodeJsonPatch(null), [])
})

t.test('a failing test operation fails with TestFailed', async t => {
  t.throws(() => run({ a: 1 }, [{ op: 'test', path: '/a', value: 2 }]), { code: 'TestFailed', message: 'testing value /a failed: test failed' })
})

t.test('a missing path fails with PathNotFound in the library\'s words', async t => {
  t.throws(() => run({ a: 1 }, [{ op: 'replace', path: '/b', value: 2 }]),
    { code: 'PathNotFound', message: 'replace operation does not apply: doc is missing key: /b: missing value' })
  t.throws(() => run({ a: 1 }, [{ op: 'add', path: '/x/y', value: 2 }]),
    { code: 'PathNotFound', message: 'add operation does not apply: doc is missing path: "/x/y": missing value' })
  t.throws(() => run({ a: 1 }, [{ op: 'remove', path: '/b' }]), { code: 'PathNotFound' })
})

t.test('decodes ~0 and ~1 escapes and appends with -', async t => {
  const out = run({ 'a/b': 1, 'c~d': 2, l: [1] }, [
    { op: 'replace', path: '/a~1b', value: 10 },
    { op: 'remove', path: '/c~0d' },
    { op: 'add', path: '/l/-', value: 2 }
  ])
  t.same(out, { 'a/b': 10, l: [1, 2] })
})

t.test('an unknown op and a bad index are rejected', async t => {
  t.throws(() => run({}, [{ op: 'frob', path: '/a' }]), { code: 'InvalidPatch', message: 'Unexpected kind: frob' })
  t.throws(() => run({ l: [1] }, [{ op: 'add', path: '/l/5', value: 1 }]), { code: 'InvalidIndex' })
  t.throws(() => run({ l: [1] }, [{ op: 'add', path: '/l/01', value: 1 }]), { code: 'InvalidIndex' })
})

t.test('stores a __proto__ member as data, not as a prototype', async t => {
  const out = run({}, [{ op: 'add', path: '/__proto__', value: { polluted: true } }]) as Record<string, unknown>
  t.equal(({} as Record<string, unknown>).polluted, undefined)
  t.same(JSON.parse(JSON.stringify(out)), JSON.parse('{"__proto__":{"polluted":true}}'))
})
