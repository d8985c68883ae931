// The sandbox in a worker thread: same results and errors as the synchronous API, event loop left free.

import t from 'tap'
import { createSandboxWorker } from './worker.js'
import { SandboxError } from './errors.js'
import type { StructuralSchema } from '../apiserver/schema/types.js'

t.test('compiles and evaluates in a worker with values, costs and typed errors', async (t) => {
  const w = await createSandboxWorker({ deadlineMs: 2000 })
  t.teardown(() => w.dispose())
  const p = await w.compile('self.n + 1', { variables: { self: { schema: { type: 'object', properties: { n: { type: 'integer' } } } } } })
  t.equal(p.type, 'int')
  const r = await p.evaluateAsync({ self: { n: 41 } })
  t.equal(r.value, 42n)
  t.equal(r.cost, 3)
  await t.rejects(w.compile('1 +'), { code: 'CEL_ERR_COMPILE' })
  const div = await w.compile('1 / x', { variables: { x: { type: 'int' } } })
  const err = await div.evaluateAsync({ x: 0 }).catch((e: unknown) => e)
  t.ok(err instanceof SandboxError && err.code === 'CEL_ERR_EVAL')
  await p.release()
  await t.rejects(p.evaluateAsync({ self: { n: 1 } }), { code: 'SANDBOX_ERR_INTERNAL' })
})

t.test('a long evaluation leaves the event loop free and ends with its deadline', async (t) => {
  const w = await createSandboxWorker({ deadlineMs: 300 })
  t.teardown(() => w.dispose())
  const lst = Array.from({ length: 300 }, (_, i) => i)
  const p = await w.compile('lst.all(x, lst.all(y, lst.all(z, x + y + z >= 0)))', { variables: { lst: { type: 'list<int>' } } })
  let ticks = 0
  const timer = setInterval(() => ticks++, 5)
  const err = await p.evaluateAsync({ lst }, { costLimit: Number.MAX_SAFE_INTEGER }).catch((e: unknown) => e)
  clearInterval(timer)
  t.equal((err as SandboxError).code, 'SANDBOX_ERR_DEADLINE')
  t.ok(ticks >= 10, `timers ran ${ticks} times while the worker evaluated`)
})

t.test('validates CRD rules in the worker', async (t) => {
  const w = await createSandboxWorker()
  t.teardown(() => w.dispose())
  const schema: StructuralSchema = { type: 'object', properties: { replicas: { type: 'integer' } }, 'x-orch-validations': [{ rule: 'self.replicas >= 0', message: 'must not be negative' }] }
  const c = await w.compileValidationRules(schema)
  if (!c.ok) throw new Error('rules did not compile')
  t.same((await c.compiled.evaluateAsync({ replicas: 1 })).errors, [])
  const bad = await c.compiled.evaluateAsync({ replicas: -1 })
  t.match(bad.errors, [{ type: 'FieldValueInvalid', message: /must not be negative/ }])
  await c.compiled.release()
})
