// Reuse of converted variables across evaluations: identical variables are sent once, anything else is fresh.

import t from 'tap'
import { createSandbox } from './sandbox.js'

t.test('identical variables are reused across programs and environments, changed ones are not', async (t) => {
  const sb = await createSandbox({ deadlineMs: 2000 })
  t.teardown(() => sb.dispose())
  const schema = { type: 'object', properties: { n: { type: 'integer' }, s: { type: 'string' } } } as const
  const a = sb.compile('self.n + 1', { variables: { self: { schema } } })
  const b = sb.compile('self.s.size()', { variables: { self: { schema } } })
  const dyn = sb.compile('self.n * 2', { variables: { self: { type: 'dyn' } } })
  const o1 = { n: 1, s: 'ab' }
  t.equal(a.evaluate({ self: o1 }).value, 2n)
  t.equal(b.evaluate({ self: o1 }).value, 2n, 'same environment, same object')
  t.equal(dyn.evaluate({ self: o1 }).value, 2n, 'another environment converts the same object itself')
  t.equal(a.evaluate({ self: { n: 5, s: 'abc' } }).value, 6n, 'a changed object is converted again')
  o1.n = 10
  t.equal(a.evaluate({ self: o1 }).value, 11n, 'a mutated object is seen as changed')
  t.equal(dyn.evaluate({ self: o1 }).value, 20n)
})

t.test('an input error is not cached as a value', async (t) => {
  const sb = await createSandbox({ deadlineMs: 2000 })
  t.teardown(() => sb.dispose())
  const p = sb.compile('1 + 1')
  t.throws(() => p.evaluate({ nope: 1 }), { code: 'SANDBOX_ERR_INPUT' })
  t.throws(() => p.evaluate({ nope: 1 }), { code: 'SANDBOX_ERR_INPUT' })
  t.equal(p.evaluate({}).value, 2n)
})

t.test('evaluateOver converts the same base once and binds only the extra variables per call', async (t) => {
  const sb = await createSandbox({ deadlineMs: 2000 })
  t.teardown(() => sb.dispose())
  const env = { variables: { object: { type: 'dyn' }, params: { type: 'dyn' }, variables: { type: 'map<string, dyn>' } } }
  const name = sb.compile('object.name + "/" + string(params)', env)
  const vars = sb.compile('variables.n * 2', env)
  const base = { object: { name: 'a' } }
  t.equal(name.evaluateOver(base, { params: 1 }).value, 'a/1')
  t.equal(name.evaluateOver(base, { params: 2 }).value, 'a/2', 'the extra variables are bound afresh')
  t.equal(vars.evaluateOver(base, { variables: { n: 4 } }).value, 8n)
  t.equal(name.evaluateOver({ object: { name: 'b' } }, { params: 3 }).value, 'b/3', 'another base is converted')
  t.equal(name.evaluate({ object: { name: 'c' }, params: 4 }).value, 'c/4')
  t.equal(name.evaluateOver(base, { params: 5 }).value, 'a/5', 'after an evaluate with other variables the base is sent again')
  t.throws(() => name.evaluateOver(base, { nope: 1 }), { code: 'SANDBOX_ERR_INPUT' })
  t.equal(name.evaluateOver(base, { params: 6 }).value, 'a/6')
})

t.test('evaluateMany runs several programs over one base in one crossing, each with its own extra variables and verdict', async (t) => {
  const sb = await createSandbox({ deadlineMs: 2000 })
  t.teardown(() => sb.dispose())
  const env = { variables: { object: { type: 'dyn' }, params: { type: 'dyn' } } }
  const name = sb.compile('object.name + string(params)', env)
  const div = sb.compile('1 / params == 1', env)
  const base = { object: { name: 'a' } }
  const out = sb.evaluateMany(base, [
    { program: name, extra: { params: 1 } },
    { program: div, extra: { params: 0 } },
    { program: name, extra: { params: 2 } },
  ])
  t.same(out.map((r) => ('value' in r ? r.value : (r as Error).message)), ['a1', 'division by zero', 'a2'])
  t.equal(sb.evaluateMany({ object: { name: 'b' } }, [{ program: name, extra: { params: 3 } }, { program: name, extra: { params: 4 } }]).map((r) => (r as { value: unknown }).value).join(), 'b3,b4', 'a new base is converted')
  const fast = await createSandbox({ deadlineMs: 200 })
  t.teardown(() => fast.dispose())
  const loop = fast.compile('[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, [1,2,3,4,5,6,7,8,9,10].all(d, !object.s.contains("b")))))', env)
  const quick = fast.compile('string(params)', env)
  const slow = fast.evaluateMany({ object: { s: 'a'.repeat(200_000) } }, [{ program: loop, extra: {}, costLimit: 1e15 }, { program: quick, extra: { params: 5 } }])
  t.match(slow[0], { code: 'SANDBOX_ERR_DEADLINE' }, 'a step past the deadline fails alone')
  t.match(slow[1], { value: '5' }, 'the other steps still answer')
})

t.test('a step without extra variables runs over the shared ones; the next step binds its own again', async (t) => {
  const sb = await createSandbox()
  t.teardown(() => sb.dispose())
  const env = { variables: { object: { type: 'dyn' }, params: { type: 'dyn' } } }
  const name = sb.compile('object.name', env)
  const withParams = sb.compile('object.name + string(params)', env)
  const base = { object: { name: 'a' } }
  const out = sb.evaluateMany(base, [
    { program: name, extra: {} },
    { program: withParams, extra: { params: 1 } },
    { program: name, extra: {} },
    { program: withParams, extra: { params: 2 } },
  ])
  t.same(out.map((r) => ('value' in r ? r.value : (r as Error).message)), ['a', 'a1', 'a', 'a2'])
  // an extra variable of one step never leaks into the next step's shared ones
  const leak = sb.evaluateMany(base, [{ program: withParams, extra: { params: 3 } }, { program: withParams, extra: {} }])
  t.equal((leak[0] as { value: unknown }).value, 'a3')
  t.match(leak[1], { message: /params/ }, 'without params the step sees none')
})
