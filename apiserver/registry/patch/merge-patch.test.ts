import t from 'tap'
import { readFileSync } from 'node:fs'
import { conformanceData } from '../../../test/conformance-data/locate.js'
import { applyMergePatch } from './merge-patch.js'
import type { Json } from './json-pointer.js'

const CONFORMANCE = conformanceData('json-merge-patch')

for (const file of ['rfc7386_appendix_a.json', 'rfc7386_body_examples.json']) {
  t.test(`gives every result of ${file}`, async t => {
    const rows = JSON.parse(readFileSync(`${CONFORMANCE}/${file}`, 'utf8')) as Array<{ original: Json, patch: Json, result: Json }>
    for (const [i, row] of rows.entries()) {
      const before = JSON.stringify(row.original)
      t.same(applyMergePatch(row.original, row.patch), row.result, `row ${i}: ${JSON.stringify(row.patch)}`)
      t.equal(JSON.stringify(row.original), before, `row ${i} leaves the original unchanged`)
    }
    t.comment(`${file}: ${rows.length} rows`)
  })
}

t.test('merges nested maps, removes with null and replaces lists whole', async t => {
  const cur = { metadata: { name: 'a', labels: { x: '1', y: '2' } }, spec: { list: [1, 2, 3] } }
  const out = applyMergePatch(cur, { metadata: { labels: { x: null, z: '3' } }, spec: { list: [9] } })
  t.same(out, { metadata: { name: 'a', labels: { y: '2', z: '3' } }, spec: { list: [9] } })
  t.same(cur.metadata.labels, { x: '1', y: '2' })
})

t.test('stores a __proto__ member as data', async t => {
  const out = applyMergePatch({}, JSON.parse('{"__proto__":{"polluted":true}}'))
  t.equal(({} as Record<string, unknown>).polluted, undefined)
  t.equal(JSON.stringify(out), '{"__proto__":{"polluted":true}}')
})
