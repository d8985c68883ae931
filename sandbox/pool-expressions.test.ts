// Single expressions on the sandbox pool: compiled once, evaluated on any thread, budgets and errors as in-thread.

import t from 'tap'
import { createSandboxPool } from './pool.js'
import { SandboxError } from './errors.js'

t.test('an expression compiles once and evaluates with its variables on the pool threads', async (t) => {
  const pool = createSandboxPool({ size: 2 })
  t.teardown(() => pool.close())
  const env = { variables: { claims: { type: 'map<string, dyn>' } } }
  const p = await pool.compileExpression("'oidc:' + claims.sub", env)
  t.equal(p.type, 'string')
  const results = await Promise.all(['a', 'b', 'c', 'd'].map(async (sub) => (await p.evaluate({ claims: { sub } })).value))
  t.same(results, ['oidc:a', 'oidc:b', 'oidc:c', 'oidc:d'])
  const again = await pool.compileExpression("'oidc:' + claims.sub", env)
  t.equal(pool.stats().ruleSets, 0, 'expressions are not counted as rule sets')
  p.release()
  t.equal((await again.evaluate({ claims: { sub: 'e' } })).value, 'oidc:e', 'a second holder keeps the program after the first releases')
  again.release()
  await t.rejects(again.evaluate({ claims: { sub: 'f' } }), { code: 'SANDBOX_ERR_INTERNAL' })
})

t.test('compile errors reject with the sandbox error code and cel-go wording', async (t) => {
  const pool = createSandboxPool({ size: 1 })
  t.teardown(() => pool.close())
  const err = await pool.compileExpression('claims.sub +', { variables: { claims: { type: 'map<string, dyn>' } } }).catch((e: unknown) => e)
  t.ok(err instanceof SandboxError)
  t.equal((err as SandboxError).code, 'CEL_ERR_COMPILE')
  const undeclared = await pool.compileExpression('nope == 1', { variables: {} }).catch((e: unknown) => e)
  t.match((undeclared as SandboxError).issues ?? (undeclared as Error).message, /undeclared reference to 'nope'/)
})

t.test('an evaluation over the cost budget fails with CEL_ERR_COST_BUDGET and the thread keeps serving', async (t) => {
  const pool = createSandboxPool({ size: 1, limits: { perCallCost: 1000 } })
  t.teardown(() => pool.close())
  const env = { variables: { claims: { type: 'map<string, dyn>' } } }
  const heavy = await pool.compileExpression('claims.items.all(i, claims.items.all(j, i + j >= 0))', env)
  const items = Array.from({ length: 100 }, (_, i) => i)
  await t.rejects(heavy.evaluate({ claims: { items } }), { code: 'CEL_ERR_COST_BUDGET' })
  const light = await pool.compileExpression('size(claims.items)', env)
  t.equal((await light.evaluate({ claims: { items } })).value, 100n)
  t.equal((await heavy.evaluate({ claims: { items: [1] } })).value, true)
})

t.test('a request\'s policies evaluate in one crossing with their variables, messages and match conditions', async (t) => {
  const pool = createSandboxPool({ size: 2 })
  const other = createSandboxPool({ size: 1 })
  t.teardown(async () => { await pool.close(); await other.close() })
  const env = { variables: { object: { type: 'dyn' }, params: { type: 'dyn' }, variables: { type: 'map<string, dyn>' } } }
  const c = (e: string) => pool.compileExpression(e, env)
  const long = {
    matchConditions: [{ name: 'named', program: await c("has(object.name)") }],
    variables: new Map([['n', await c('object.name')], ['max', await c('params.max')]]),
    validations: [
      { program: await c('size(variables.n) <= variables.max'), messageProgram: await c("'too long: ' + variables.n") },
      { program: await c('1 / 0 == 1') },
    ],
    auditAnnotations: [{ key: 'seen', program: await c("'saw ' + variables.n") }],
  }
  const skipped = { matchConditions: [{ name: 'never', program: await c('false') }], variables: new Map(), validations: [{ program: await c('false') }], auditAnnotations: [] }
  const out = await pool.evaluatePolicies({ base: { object: { name: 'abcdef' } }, items: [
    { plan: long, params: { max: 3 }, failOnError: true },
    { plan: long, params: { max: 10 }, failOnError: false },
    { plan: skipped, params: null, failOnError: true },
  ] })
  t.same(out[0], { matched: true, failures: [
    { message: 'too long: abcdef', expressionIndex: 0 },
    { message: "expression '1 / 0 == 1' resulted in error: division by zero", expressionIndex: 1 },
  ], auditAnnotations: { seen: 'saw abcdef' } })
  t.same(out[1], { matched: true, failures: [], auditAnnotations: { seen: 'saw abcdef' } }, 'Ignore drops the error')
  t.same(out[2], { matched: false, failures: [], auditAnnotations: {} })
  const foreign = await other.compileExpression('true', env)
  t.equal(pool.owns(long.validations[0].program), true)
  t.equal(pool.owns(foreign), false)
  await t.rejects(pool.evaluatePolicies({ base: {}, items: [{ plan: { ...skipped, validations: [{ program: foreign }] }, params: null, failOnError: true }] }), { code: 'SANDBOX_ERR_INTERNAL' })
  long.validations[1].program.release()
  await t.rejects(pool.evaluatePolicies({ base: { object: { name: 'x' } }, items: [{ plan: long, params: { max: 3 }, failOnError: true }] }), { message: /released/ })
})

t.test('policy plans are sent to a thread once; past what a thread keeps, it drops them and is sent them again', async (t) => {
  const pool = createSandboxPool({ size: 1 })
  t.teardown(() => pool.close())
  const env = { variables: { object: { type: 'dyn' }, variables: { type: 'map<string, dyn>' } } }
  const name = await pool.compileExpression('object.name', env)
  const check = await pool.compileExpression('variables.n.startsWith("a")', env)
  // 1,500 plan objects (one per policy generation, say) over the same programs: more than a thread keeps (1,024)
  const plans = Array.from({ length: 1500 }, (_, i) => ({
    matchConditions: [], auditAnnotations: [], variables: new Map([['n', name]]), validations: [{ program: check, message: `plan ${i}` }]
  }))
  for (let from = 0; from < plans.length; from += 250) {
    const batch = plans.slice(from, from + 250)
    const out = await pool.evaluatePolicies({ base: { object: { name: 'bob' } }, items: batch.map(plan => ({ plan, params: null, failOnError: true })) })
    t.same(out.map(o => o.failures[0]?.message), batch.map((_, i) => `plan ${from + i}`), `plans ${from}..${from + 249}`)
  }
  const again = await pool.evaluatePolicies({ base: { object: { name: 'alice' } }, items: [{ plan: plans[0], params: null, failOnError: true }] })
  t.same(again, [{ matched: true, failures: [], auditAnnotations: {} }], 'a dropped plan is sent again')
})
