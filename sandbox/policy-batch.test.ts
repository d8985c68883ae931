// A request's policies in one guest crossing (policy-batch.ts, guest/policies.js) must give exactly what the same
// rules (guest/policy.js) give when the host drives them one expression per crossing.

import t from 'tap'
import { createSandbox, type Program, type Sandbox } from './sandbox.js'
import { evaluatePolicy, evaluatePolicyAsync, stepResult, type PolicyPlan } from './policy-evaluation.js'
import { POLICY_ENVIRONMENT } from '../apiserver/admission/vap/environment.js'

type Spec = { m?: Array<[string, string]>, v?: Array<[string, string]>, val?: Array<{ e: string, message?: string, me?: string, reason?: string }>, a?: Array<[string, string]> }

function plan (sb: Sandbox, s: Spec): PolicyPlan<Program> {
  const c = (e: string): Program => sb.compile(e, POLICY_ENVIRONMENT)
  return {
    matchConditions: (s.m ?? []).map(([name, e]) => ({ name, program: c(e) })),
    variables: new Map((s.v ?? []).map(([name, e]) => [name, c(e)])),
    validations: (s.val ?? []).map(v => ({ program: c(v.e), message: v.message, messageProgram: v.me === undefined ? undefined : c(v.me), reason: v.reason })),
    auditAnnotations: (s.a ?? []).map(([key, e]) => ({ key, program: c(e) }))
  }
}

/** The rules driven by the host, one crossing per expression, as evaluate.ts does on the pool. */
async function oneByOne (plan: PolicyPlan<Program>, base: Record<string, unknown>, params: unknown, failOnError: boolean) {
  return await evaluatePolicyAsync(plan, failOnError, async (program, variables, costLimit) =>
    stepResult(program.evaluate({ ...base, params, variables }, { costLimit })))
}

const specs: Spec[] = [
  { val: [{ e: 'object.metadata.name.startsWith("ok")' }] },
  { v: [['n', 'object.metadata.name']], val: [{ e: 'size(variables.n) < 3', me: "'name too long: ' + variables.n" }] },
  { m: [['is-cm', "object.kind == 'Secret'"]], val: [{ e: 'false' }] },
  { m: [['broken', 'object.nope == 1']], val: [{ e: 'false' }] },
  { v: [['a', 'variables.b + 1'], ['b', 'int(object.data.count)'], ['self', 'variables.self']], val: [{ e: 'variables.a == 4', message: 'a is not 4', reason: 'Forbidden' }, { e: 'variables.self == null' }] },
  { val: [{ e: 'object.data.missing == "x"' }, { e: 'false', me: 'object.nope', message: 'fallback' }, { e: 'false', me: "''" }, { e: 'false' }] },
  { val: [{ e: 'params.max > size(object.data)', me: "'too many keys: ' + string(size(object.data))" }] },
  { v: [['items', 'object.items']], val: [{ e: 'variables.items.all(i, variables.items.all(j, i + j >= 0))' }, { e: 'true' }] },
  { a: [['who', 'request.userInfo.username'], ['empty', "''"], ['bad', 'object.nope']], val: [{ e: 'true' }] },
  { v: [['t', "timestamp('2026-01-01T00:00:00Z')"], ['d', '2.0']], val: [{ e: "variables.t > timestamp('2025-01-01T00:00:00Z')" }, { e: 'type(variables.d) == double' }] }
]

const bases: Array<Record<string, unknown>> = [
  { object: { kind: 'ConfigMap', metadata: { name: 'ok-1' }, data: { count: '3' }, items: Array.from({ length: 1100 }, (_, i) => i) }, oldObject: null, request: { operation: 'CREATE', userInfo: { username: 'alice' } }, namespaceObject: null },
  { object: { kind: 'ConfigMap', metadata: { name: 'x' }, data: { count: '2', other: 'y' }, items: [1, 2] }, oldObject: null, request: { operation: 'CREATE', userInfo: { username: 'bob' } }, namespaceObject: null }
]

t.test('policies in one crossing give what the rules give one expression at a time', async (t) => {
  // a deadline no loaded machine reaches: the expression over the cost limit must fail on cost both ways
  const sb = await createSandbox({ deadlineMs: 30_000 })
  t.teardown(() => sb.dispose())
  const plans = specs.map(s => plan(sb, s))
  for (const base of bases) {
    for (const failOnError of [true, false]) {
      const items = plans.map(p => ({ plan: p, params: { max: 1 }, failOnError }))
      const batched = sb.evaluatePolicies(base, items)
      const expected = await Promise.all(items.map(async i => await oneByOne(i.plan, base, i.params, failOnError)))
      t.same(JSON.parse(JSON.stringify(batched)), JSON.parse(JSON.stringify(expected)), `${(base.object as { metadata: { name: string } }).metadata.name}, failOnError ${failOnError}`)
    }
  }
  const [long, short] = bases.map(base => sb.evaluatePolicies(base, [{ plan: plans[1], params: null, failOnError: true }])[0])
  t.same(long.failures, [{ message: 'name too long: ok-1', expressionIndex: 0 }], 'the messageExpression reads the variable')
  t.same(short, { matched: true, failures: [], auditAnnotations: {} })
  const second = sb.evaluatePolicies(bases[1], [{ plan: plans[4], params: null, failOnError: true }])[0]
  t.same(second.failures.map(f => [f.message, f.reason]), [['a is not 4', 'Forbidden'], ["expression 'variables.self == null' resulted in error: No such key: self", undefined]],
    'variables refer to variables; one referring to itself is unset')
  const nine = sb.evaluatePolicies(bases[0], [{ plan: plans[8], params: null, failOnError: true }])[0]
  t.same(nine.auditAnnotations, { who: 'alice' })
  t.match(nine.failures[0].message, /valueExpression 'object.nope' resulted in error: .*no such key/i)
  t.same(sb.evaluatePolicies(bases[0], [{ plan: plans[9], params: null, failOnError: true }])[0].failures, [], 'variables keep their CEL types between steps')
})

t.test('a released program fails its policy as an evaluation error; the others are evaluated', async (t) => {
  const sb = await createSandbox()
  t.teardown(() => sb.dispose())
  const kept = plan(sb, specs[1])
  const gone = plan(sb, { val: [{ e: 'true' }] })
  t.same(sb.evaluatePolicies(bases[1], [{ plan: gone, params: null, failOnError: true }])[0].failures, [])
  gone.validations[0].program.release()
  const [a, b] = sb.evaluatePolicies(bases[1], [{ plan: kept, params: null, failOnError: true }, { plan: gone, params: null, failOnError: true }])
  t.same(a, { matched: true, failures: [], auditAnnotations: {} })
  t.match(b.failures[0].message, /program was released/)
})

t.test('when the crossing runs past its deadline, each expression runs in its own crossing with its own deadline', async (t) => {
  const sb = await createSandbox({ deadlineMs: 150 })
  t.teardown(() => sb.dispose())
  const slow = plan(sb, { val: [{ e: 'object.items.all(i, object.items.all(j, i + j >= 0))' }] })
  const fast = plan(sb, { val: [{ e: 'object.metadata.name == "x"' }] })
  const base = { ...bases[1], object: { ...(bases[1].object as object), items: Array.from({ length: 400 }, (_, i) => i) } }
  const started = performance.now()
  const [quick, heavy] = sb.evaluatePolicies(base, [{ plan: fast, params: null, failOnError: true }, { plan: slow, params: null, failOnError: true }])
  t.same(quick, { matched: true, failures: [], auditAnnotations: {} }, 'the fast policy is not failed by the slow one')
  t.ok(performance.now() - started < 2000, 'bounded by the deadlines')
  const direct = evaluatePolicy(slow, true, (p, variables, costLimit) => stepResult(p.evaluateOver(base, { variables }, { costLimit })))
  t.same(heavy, direct, 'the slow policy as its expressions alone give it')
})

t.test('programs shared by the policies of a request give each policy what it would get alone', async (t) => {
  const sb = await createSandbox({ deadlineMs: 30_000 })
  t.teardown(() => sb.dispose())
  const c = (e: string): Program => sb.compile(e, POLICY_ENVIRONMENT)
  // one program object in several plans, as the pool gives identical expressions: request-only ones are reused within
  // the request; those reading params or variables are not
  const name = c('object.metadata.name')
  const byParams = c('params.max > size(object.data)')
  const byVariable = c('variables.n == "ok-1"')
  const costly = c('object.items.map(i, i * 2).size() > 0')
  const other = c('"ok-1"')
  const mk = (validations: Program[], n = name): PolicyPlan<Program> => ({
    matchConditions: [], variables: new Map([['n', n]]), auditAnnotations: [],
    validations: validations.map(program => ({ program, message: undefined, messageProgram: undefined, reason: undefined }))
  })
  // byVariable and byParams answer differently in neighbouring policies: a result reused across them would show
  const plans = [mk([byVariable]), mk([byVariable], other), mk([byParams]), mk([byParams, byVariable]), mk([costly]), mk([costly, costly])]
  const paramsOf = [null, null, { max: 5 }, { max: 0 }, null, null]
  for (const base of bases) {
    const items = plans.map((p, i) => ({ plan: p, params: paramsOf[i], failOnError: true }))
    const batched = sb.evaluatePolicies(base, items)
    const expected = await Promise.all(items.map(async i => await oneByOne(i.plan, base, i.params, true)))
    t.same(JSON.parse(JSON.stringify(batched)), JSON.parse(JSON.stringify(expected)), (base.object as { metadata: { name: string } }).metadata.name)
  }
  // a reused result still counts against each policy's budget: the twelfth run of this program (about 860,000 each)
  // has less than its cost left of the policy's 10,000,000, so it fails in every policy as it does alone
  const heavy = c('object.items.all(i, object.items.all(j, i + j >= 0))')
  const twelve = mk(Array.from({ length: 12 }, () => heavy))
  const base = { ...bases[1], object: { ...(bases[1].object as object), items: Array.from({ length: 350 }, (_, i) => i) } }
  const items = [twelve, twelve].map(p => ({ plan: p, params: null, failOnError: true }))
  const batched = sb.evaluatePolicies(base, items)
  const alone = await oneByOne(twelve, base, null, true)
  t.match(alone.failures, [{ expressionIndex: 11 }], 'alone, the twelfth validation runs out of budget')
  t.same(JSON.parse(JSON.stringify(batched)), JSON.parse(JSON.stringify([alone, alone])), 'so it does in both policies of the batch')
})
