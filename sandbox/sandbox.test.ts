// The sandbox API: compile/evaluate, typed errors, schema type mapping, escaping, libraries, authorizer.

import t from 'tap'
import { createSandbox, type Sandbox } from './sandbox.js'
import { SandboxError } from './errors.js'
import type { StructuralSchema } from '../apiserver/schema/types.js'

let sb: Sandbox
t.before(async () => {
  sb = await createSandbox({
    deadlineMs: 2000,
    authorize: (req) => (req.resource === 'pods' && req.verb === 'get' ? { decision: 'allow' } : { decision: 'deny', reason: `no rule for ${req.verb} ${req.resource}` }),
  })
})
t.teardown(() => sb.dispose())

function errorOf(fn: () => unknown): SandboxError {
  try {
    fn()
  } catch (err) {
    if (err instanceof SandboxError) return err
    throw err
  }
  throw new Error('expected a SandboxError')
}

t.test('compiles and evaluates an expression with its cost', async (t) => {
  const p = sb.compile("[1, 2, 3].all(x, x > 0) && 'abc'.startsWith('a')")
  t.equal(p.type, 'bool')
  const r = p.evaluate()
  t.equal(r.value, true)
  t.equal(r.cost, 27)
  t.equal(p.estimatedCost.max, 27)
})

t.test('returns ints as bigint and keeps int/uint/double apart in the tagged value', async (t) => {
  t.equal(sb.compile('2 + 3').evaluate().value, 5n)
  t.same(sb.compile('2u').evaluate().tagged, { t: 'uint', v: '2' })
  t.same(sb.compile('2.5').evaluate().tagged, { t: 'double', v: 2.5 })
})

t.test('a syntax error is CEL_ERR_COMPILE with its position', async (t) => {
  const e = errorOf(() => sb.compile('1 +\n  (2 *'))
  t.equal(e.code, 'CEL_ERR_COMPILE')
  t.equal(e.position?.line, 2)
})

t.test('a type error is CEL_ERR_TYPE_CHECK with its position', async (t) => {
  const e = errorOf(() => sb.compile('x + "a"', { variables: { x: { type: 'int' } } }))
  t.equal(e.code, 'CEL_ERR_TYPE_CHECK')
  t.match(e.message, /no such overload/)
  t.equal(e.position?.offset, 0)
})

t.test('a bad constant regex fails at compile time', async (t) => {
  t.equal(errorOf(() => sb.compile("'a'.find(')')")).code, 'CEL_ERR_COMPILE')
})

t.test('an estimate above maxEstimatedCost is CEL_ERR_COST_ESTIMATE', async (t) => {
  const env = { variables: { l: { type: 'list<string>' } } }
  t.equal(errorOf(() => sb.compile('l.all(a, l.all(b, a.matches(b)))', env, { maxEstimatedCost: 10_000_000 })).code, 'CEL_ERR_COST_ESTIMATE')
  t.equal(sb.compile('1 + 1', { variables: {} }, { maxEstimatedCost: 10 }).evaluate().value, 2n)
})

t.test('evaluation errors are CEL_ERR_EVAL', async (t) => {
  const e = errorOf(() => sb.compile('x / 0', { variables: { x: { type: 'int' } } }).evaluate({ x: 1 }))
  t.equal(e.code, 'CEL_ERR_EVAL')
  t.match(e.message, /division by zero/)
})

t.test('an undeclared variable at evaluation is SANDBOX_ERR_INPUT', async (t) => {
  t.equal(errorOf(() => sb.compile('1').evaluate({ nope: 1 })).code, 'SANDBOX_ERR_INPUT')
})

t.test('non-JSON variables are SANDBOX_ERR_INPUT', async (t) => {
  const cyclic: Record<string, unknown> = {}
  cyclic.self = cyclic
  t.equal(errorOf(() => sb.compile('x', { variables: { x: { type: 'dyn' } } }).evaluate({ x: cyclic })).code, 'SANDBOX_ERR_INPUT')
})

t.test('the per-call cost limit stops an evaluation with CEL_ERR_COST_BUDGET', async (t) => {
  const p = sb.compile('[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map(x, x * 2).size() > 0')
  t.equal(errorOf(() => p.evaluate({}, { costLimit: 50 })).code, 'CEL_ERR_COST_BUDGET')
  t.equal(p.evaluate({}, { costLimit: 500 }).value, true)
})

const schema: StructuralSchema = {
  type: 'object',
  properties: {
    replicas: { type: 'integer' },
    ratio: { type: 'number' },
    port: { 'x-orch-int-or-string': true },
    data: { type: 'string', format: 'byte' },
    day: { type: 'string', format: 'date' },
    at: { type: 'string', format: 'date-time' },
    timeout: { type: 'string', format: 'duration' },
    'dash-name': { type: 'string' },
    'a.b': { type: 'string' },
    'x/y': { type: 'string' },
    foo__bar: { type: 'string' },
    namespace: { type: 'string' },
    labels: { type: 'object', additionalProperties: { type: 'string' } },
    tags: { type: 'array', items: { type: 'string' } },
    'not accessible': { type: 'string' },
  },
}
const obj = {
  replicas: 3, ratio: 1, port: 'http', data: 'aGk=', day: '2024-01-02', at: '2024-01-02T03:04:05Z', timeout: '1m30s',
  'dash-name': 'd', 'a.b': 'dot', 'x/y': 'slash', foo__bar: 'under', namespace: 'kw', labels: { app: 'web' }, tags: ['a'],
}

t.test('maps schema types to CEL types (§2.3.8)', async (t) => {
  const env = { variables: { self: { schema } } }
  const cases: [string, unknown][] = [
    ['type(self.replicas) == int', true],
    ['type(self.ratio) == double', true],
    ['self.port == "http"', true],
    ['self.data == b"hi"', true],
    ["self.day == timestamp('2024-01-02T00:00:00Z')", true],
    ['self.at.getHours() == 3', true],
    ["self.timeout == duration('90s')", true],
    ["self.labels['app'] == 'web'", true],
    ['self.tags[0]', 'a'],
  ]
  for (const [expr, want] of cases) t.equal(sb.compile(expr, env).evaluate({ self: obj }).value, want, expr)
})

t.test('list-type set and map compare ignoring order and concatenate as Kubernetes does', async (t) => {
  const lists: StructuralSchema = {
    type: 'object',
    properties: {
      s: { type: 'array', 'x-orch-list-type': 'set', items: { type: 'string' } },
      t: { type: 'array', 'x-orch-list-type': 'set', items: { type: 'string' } },
      m: { type: 'array', 'x-orch-list-type': 'map', 'x-orch-list-map-keys': ['name'], items: { type: 'object', properties: { name: { type: 'string' }, v: { type: 'integer' } } } },
      n: { type: 'array', 'x-orch-list-type': 'map', 'x-orch-list-map-keys': ['name'], items: { type: 'object', properties: { name: { type: 'string' }, v: { type: 'integer' } } } },
      a: { type: 'array', items: { type: 'string' } },
      b: { type: 'array', items: { type: 'string' } },
    },
  }
  const env = { variables: { self: { schema: lists } } }
  const self = {
    s: ['a', 'b', 'c'], t: ['c', 'a', 'b'],
    m: [{ name: 'x', v: 1 }, { name: 'y', v: 2 }], n: [{ name: 'y', v: 2 }, { name: 'x', v: 1 }],
    a: ['a', 'b'], b: ['b', 'a'],
  }
  const cases: [string, unknown][] = [
    ['self.s == self.t', true],
    ['self.s != self.t', false],
    ['self.m == self.n', true],
    ['self.a == self.b', false],
    ["self.s + ['d', 'a']", ['a', 'b', 'c', 'd']],
    ["(self.m + [self.n[0]]).size()", 2n],
    ["(self.s + ['d']) == ['d', 'c', 'b', 'a']", true],
    ["self.a + ['a']", ['a', 'b', 'a']],
  ]
  for (const [expr, want] of cases) t.same(sb.compile(expr, env).evaluate({ self }).value, want, expr)
})

t.test('int-or-string accepts ints too', async (t) => {
  t.equal(sb.compile('self.port == 8080', { variables: { self: { schema } } }).evaluate({ self: { port: 8080 } }).value, true)
})

t.test('escapes property names (§2.3.9) and hides inaccessible ones', async (t) => {
  const env = { variables: { self: { schema } } }
  t.equal(sb.compile("self.dash__dash__name + self.a__dot__b + self.x__slash__y + self.foo__underscores__bar + self.__namespace__", env).evaluate({ self: obj }).value, 'ddotslashunderkw')
  t.equal(errorOf(() => sb.compile('self.not_accessible', env)).code, 'CEL_ERR_TYPE_CHECK')
})

t.test('type-checks schema-typed variables fully: an unknown field is a compile error', async (t) => {
  t.equal(errorOf(() => sb.compile('self.nope == 1', { variables: { self: { schema } } })).code, 'CEL_ERR_TYPE_CHECK')
})

t.test('gradual typing: a dyn variable accepts any field at check time (§2.3.7)', async (t) => {
  const p = sb.compile('object.spec.replicas > 1', { variables: { object: { type: 'dyn' } } })
  t.equal(p.evaluate({ object: { spec: { replicas: 2 } } }).value, true)
  t.equal(errorOf(() => p.evaluate({ object: {} })).code, 'CEL_ERR_EVAL')
})

t.test('has() tests presence of a schema field', async (t) => {
  const env = { variables: { self: { schema } } }
  t.equal(sb.compile('has(self.replicas)', env).evaluate({ self: { replicas: 1 } }).value, true)
  t.equal(sb.compile('has(self.replicas)', env).evaluate({ self: {} }).value, false)
  t.equal(sb.compile('has(self.labels.app)', env).evaluate({ self: { labels: { app: 'x' } } }).cost, 2, 'the selection above the test costs, the test does not')
})

t.test('optional values work on fields and declared optional variables', async (t) => {
  const env = { variables: { self: { schema }, old: { schema, optional: true } } }
  t.equal(sb.compile("self.?replicas.orValue(0) + old.orValue(self).replicas", env).evaluate({ self: { replicas: 2 } }).value, 4n)
})

t.test('the Kubernetes libraries are present: lists, regex, URLs, string extension', async (t) => {
  const cases: [string, unknown][] = [
    ['[3, 1, 2].min() + [1, 2].sum() + [1, 2, 2].lastIndexOf(2)', 6n],
    ["'ab12cd345'.findAll('[0-9]+')", ['12', '345']],
    ["url('https://example.com:8443/a%20b?x=1').getPort()", '8443'],
    ["isURL('not a url')", false],
    ["'Hello'.charAt(1) + 'a-b-c'.replace('-', '+', 1) + 'X'.lowerAscii() + ['p', 'q'].join('/')", 'ea+b-cxp/q'],
    ["' pad '.trim().upperAscii()", 'PAD'],
    ["'a,b,c'.split(',', 2)", ['a', 'b,c']],
    ["'hello'.substring(1, 3) + string('hello'.indexOf('l'))", 'el2'],
  ]
  for (const [expr, want] of cases) t.same(sb.compile(expr).evaluate().value, want, expr)
})

t.test('the authorizer library asks the host decision function', async (t) => {
  const env = { variables: { authorizer: { type: 'kubernetes.authorization.Authorizer' } }, authorizer: true }
  const p = sb.compile("authorizer.group('').resource('pods').namespace('ns').check('get').allowed()", env)
  t.equal(p.evaluate({ authorizer: { user: 'alice' } }).value, true)
  const q = sb.compile("authorizer.group('apps').resource('deployments').check('delete').reason()", env)
  t.equal(q.evaluate({ authorizer: { user: 'alice' } }).value, 'no rule for delete deployments')
})

t.test('a released program cannot be evaluated', async (t) => {
  const p = sb.compile('1')
  p.release()
  t.equal(errorOf(() => p.evaluate()).code, 'SANDBOX_ERR_INTERNAL')
})
