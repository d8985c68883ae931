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
