import t from 'tap'
import { cloneJson, jsonEqual, type Json } from './json-pointer.js'

t.test('cloneJson copies every level, so changing the copy leaves the original as it was', async t => {
  const original: Json = { a: [1, { b: 'x' }, null], c: { d: true, e: 2.5 } }
  const copy = cloneJson(original)
  t.same(copy, original)
  ;((copy as { a: Json[] }).a[1] as { b: string }).b = 'changed'
  ;(copy as { c: { d: boolean } }).c.d = false
  t.same(original, { a: [1, { b: 'x' }, null], c: { d: true, e: 2.5 } })
})

t.test('cloneJson keeps a "__proto__" member as an own property instead of setting the prototype', async t => {
  const original = JSON.parse('{"__proto__":{"polluted":1},"x":1}') as Json
  const copy = cloneJson(original) as Record<string, unknown>
  t.equal(Object.getPrototypeOf(copy), Object.prototype)
  t.ok(Object.prototype.hasOwnProperty.call(copy, '__proto__'))
  t.same(Object.getOwnPropertyDescriptor(copy, '__proto__')?.value, { polluted: 1 })
  t.equal((copy as { polluted?: number }).polluted, undefined)
})

t.test('jsonEqual ignores member order and compares arrays item by item', async t => {
  t.ok(jsonEqual({ a: 1, b: [1, 2] }, { b: [1, 2], a: 1 }))
  t.notOk(jsonEqual({ a: [1, 2] }, { a: [2, 1] }))
  t.notOk(jsonEqual({ a: 1 }, { a: 1, b: null }))
})
