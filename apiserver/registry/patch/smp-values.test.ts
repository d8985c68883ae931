import t from 'tap'
import { deduplicateScalars, goStableSort, goString, goType, sliceElementType, sortScalars } from './smp-values.js'

t.test('goStableSort is a stable sort for any length (Go blocks of 20 and symmetric merges)', async t => {
  let seed = 7
  const rand = (n: number): number => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n }
  for (const n of [0, 1, 5, 20, 21, 40, 41, 99, 257]) {
    const items = Array.from({ length: n }, (_, i) => ({ key: rand(10), at: i }))
    const got = goStableSort(items.slice(), (a, b) => a.key < b.key)
    const want = items.slice().sort((a, b) => a.key - b.key)
    t.same(got, want, `n=${n}`)
  }
})

t.test('values print as Go prints them with %v', async t => {
  t.equal(goString({ b: [1, 'x'], a: null }), 'map[a:<nil> b:[1 x]]')
  t.equal(goString(1.5), '1.5')
  t.equal(goString(1234567.5), '1.2345675e+06')
  t.equal(goString(0.00001), '1e-05')
  t.equal(goString(true), 'true')
  t.equal(goType(2), 'int64')
  t.equal(goType(2.5), 'float64')
  t.equal(goType([]), '[]interface {}')
})

t.test('scalars sort by their text and de-duplicate as Kubernetes does', async t => {
  t.same(sortScalars([10, 2, 'a', 1]), [1, 10, 2, 'a'])
  t.same(deduplicateScalars([1, 2, 1, 3, 2]), [1, 2, 3])
  t.same(deduplicateScalars([1, 1, 2, 3]), [1, 3, 2], 'a duplicate is replaced by the last item')
  const big = Array.from({ length: 1000 }, (_, i) => i % 300)
  t.same(deduplicateScalars(big), Array.from({ length: 300 }, (_, i) => i), 'long lists keep first occurrences')
})

t.test('list element kinds: mixed or nested lists are errors with Kubernetes wording', async t => {
  t.equal(sliceElementType([{ a: 1 }], [{ b: 2 }]), 'map')
  t.throws(() => sliceElementType([[1]]), { message: 'lists of lists are not supported' })
  t.throws(() => sliceElementType([1, 'a']), { message: 'list element types are not identical: [[1 a]]' })
  t.throws(() => sliceElementType([], []), { message: 'no elements in any of the given slices' })
})
