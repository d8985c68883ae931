// Merging lists refuses a configuration naming an item twice: the pairwise check of short lists and the set of long
// ones must throw where a map of the elements seen throws (the same element), and nowhere else; the walk matching a
// configuration with a set (firstDuplicate) must find duplicates where a set of the elements is smaller than the list.
import t from 'tap'
import { smdSchemaType } from './smd-schema.js'
import { merge, refuseDuplicates } from './typed-merge.js'
import { firstDuplicate } from './field-path.js'
import type { Json } from '../patch/json-pointer.js'

/** The check as it was made before: a map of the elements seen. */
function withMap (pes: string[]): string | undefined {
  const seen = new Map<string, number>()
  for (const [i, pe] of pes.entries()) {
    if (seen.has(pe)) return `duplicate entries for key ${pe}`
    seen.set(pe, i)
  }
  return undefined
}

function thrown (fn: () => void): string | undefined {
  try {
    fn()
    return undefined
  } catch (err) {
    return (err as Error).message
  }
}

t.test('refuseDuplicates and firstDuplicate find duplicates where a map of the elements seen finds one, with the same element', async t => {
  let seed = 7
  const random = (n: number): number => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n }
  let duplicates = 0
  for (let round = 0; round < 2000; round++) {
    const length = random(40)
    const alphabet = 1 + random(60)
    const pes = Array.from({ length }, () => `k:{"name":"${random(alphabet)}"}`)
    const want = withMap(pes)
    if (want !== undefined) duplicates++
    const got = thrown(() => refuseDuplicates(pes))
    if (got !== want) t.fail(`${JSON.stringify(pes)}: ${String(got)}, want ${String(want)}`)
    if ((firstDuplicate(pes) !== undefined) !== (new Set(pes).size !== pes.length)) t.fail(`${JSON.stringify(pes)}: firstDuplicate disagrees with a set`)
  }
  t.ok(duplicates > 200 && duplicates < 1800, `both outcomes met (${duplicates} of 2000 with a duplicate)`)
})

const type = smdSchemaType(`types:
- name: root
  map:
    fields:
    - name: items
      type:
        list:
          elementType: {namedType: item}
          elementRelationship: associative
          keys: [name]
- name: item
  map:
    fields:
    - name: name
      type: {scalar: string}
    - name: value
      type: {scalar: string}
`, 'root')

t.test('merge refuses a configuration naming an item twice, also when the live list holds the same items', async t => {
  const items = (...names: string[]): Json => ({ items: names.map((name, i) => ({ name, value: String(i) })) })
  t.match(thrown(() => merge(items('a', 'b', 'a'), items('a', 'b', 'a'), type)), /^duplicate entries for key/, 'same order as live')
  t.match(thrown(() => merge(items('a', 'b'), items('b', 'a', 'b'), type)), /^duplicate entries for key/, 'another order')
  t.same(merge(items('a', 'b'), items('a', 'b'), type), items('a', 'b'), 'no duplicates: merged')
})
