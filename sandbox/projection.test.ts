import t from 'tap'
import { createSandbox } from './sandbox.js'
import { projectVariables } from './projection.js'
import type { StructuralSchema } from '../apiserver/schema/types.js'

// Program.evaluate sends an object projected onto the properties the program reads (guest/projection.js), kept
// converted in the guest while the projection's JSON stays the same; evaluateOver never projects. Both must give
// the same value, error and cost.

const schema: StructuralSchema = {
  type: 'object',
  properties: {
    replicas: { type: 'integer' },
    max: { type: 'integer' },
    'x-name': { type: 'string' },
    spec: { type: 'object', properties: { a: { type: 'integer' }, tags: { type: 'array', items: { type: 'string' } } } },
    labels: { type: 'object', additionalProperties: { type: 'string' } },
  },
}

const objects = [
  { replicas: 3, max: 5, 'x-name': 'web', spec: { a: 1, tags: ['x', 'y'] }, labels: { app: 'web' } },
  { replicas: 7, max: 5, 'x-name': 'db', spec: { a: 2, tags: [] }, labels: {} },
  { replicas: 1, 'x-name': 'nomax', spec: { tags: ['z'] } },
  { max: 2 },
  {},
]

const expressions = [
  'self.replicas <= self.max',
  "self.x__dash__name.startsWith('w')",
  'has(self.max) && self.max > 1',
  'self.spec.tags.all(t, t.size() < 3)',
  "self.spec.a == 1 || 'app' in self.labels",
  'self.replicas >= oldSelf.replicas',
  'self == oldSelf',
  'self.labels.size() + size(self.spec.tags) > 0',
  '[1, 2].all(self, self > 0) && oldSelf.max > 0',
  'cel.bind(oldSelf, self, oldSelf.replicas > 0)',
  '(self.?max).orValue(0) >= 0',
]

function outcome(f: () => { value: unknown; cost: number }): unknown {
  try {
    const r = f()
    return { value: r.value, cost: r.cost }
  } catch (err) {
    const e = err as { code?: string; message?: string; cost?: number }
    return { code: e.code, message: e.message, cost: e.cost }
  }
}

t.test('projected and whole evaluations agree on value, error and cost', async (t) => {
  const sb = await createSandbox()
  t.teardown(() => sb.dispose())
  const env = { variables: { self: { schema }, oldSelf: { schema } } }
  for (const expr of expressions) {
    const p = sb.compile(expr, env)
    for (const self of objects) {
      for (const oldSelf of objects) {
        const vars = { self, oldSelf }
        const whole = outcome(() => p.evaluateOver(vars, {}))
        // first sight (sent and kept), then twice from what the guest kept
        for (let i = 0; i < 3; i++) t.same(outcome(() => p.evaluate({ self: { ...self }, oldSelf })), whole, `${expr} on ${JSON.stringify(vars)} (${i})`)
      }
    }
  }
})

t.test('a mutated object is evaluated afresh after projected and cached calls', async (t) => {
  const sb = await createSandbox()
  t.teardown(() => sb.dispose())
  const p = sb.compile('self.replicas <= self.max', { variables: { self: { schema } } })
  const self = { replicas: 3, max: 5 }
  t.equal(p.evaluate({ self }).value, true)
  t.equal(p.evaluate({ self }).value, true)
  t.equal(p.evaluate({ self }).value, true)
  self.replicas = 9
  t.equal(p.evaluate({ self }).value, false)
  t.equal(p.evaluate({ self }).value, false)
  // a property the program does not read may change without the program seeing anything new
  t.equal(p.evaluate({ self: { ...self, other: 'x' } }).value, false)
  t.equal(p.evaluate({ self: { ...self, max: 10 } }).value, true)
})

t.test('an undeclared variable is still an input error when the declared one is projected', async (t) => {
  const sb = await createSandbox()
  t.teardown(() => sb.dispose())
  const p = sb.compile('self.replicas > 0', { variables: { self: { schema } } })
  t.throws(() => p.evaluate({ self: { replicas: 1 }, other: 1 }), { code: 'SANDBOX_ERR_INPUT' })
  t.equal(p.evaluate({ self: { replicas: 1, junk: { deep: [1, 2, 3] } } }).value, true)
})

t.test('which properties a program reads', async (t) => {
  const sb = await createSandbox()
  t.teardown(() => sb.dispose())
  const env = { variables: { self: { schema }, oldSelf: { schema } } }
  const projection = (expr: string) => sb.guest.call<{ projection?: Record<string, string[]> }>('compile', { env, expr }).projection
  t.same(projection('self.replicas <= self.max'), { self: ['replicas', 'max'] })
  t.same(projection("self.x__dash__name.startsWith('w') && has(self.spec.a)"), { self: ['x-name', 'spec'] })
  t.same(projection('self.replicas >= oldSelf.replicas'), { self: ['replicas'], oldSelf: ['replicas'] })
  t.same(projection('self == oldSelf'), undefined)
  t.same(projection('[1, 2].all(self, self > 0) && oldSelf.max > 0'), { oldSelf: ['max'] })
  t.same(projection('(self.?max).orValue(0) >= 0'), undefined)
})

t.test('projectVariables keeps what a batch of programs reads together', async (t) => {
  const sb = await createSandbox()
  t.teardown(() => sb.dispose())
  const env = { variables: { object: { type: 'dyn' }, oldObject: { type: 'dyn' }, request: { type: 'map<string, dyn>' }, params: { type: 'dyn' } } }
  const object = { metadata: { name: 'a', labels: { x: 'y' } }, data: { k: 'v' }, spec: { big: 'x'.repeat(100) } }
  const base = { object, oldObject: null, request: { uid: 'u', operation: 'CREATE' }, params: { limit: 3 } }
  const programs = ["object.metadata.name == 'a'", 'has(object.data.k)', "request.operation == 'CREATE'"].map((e) => sb.compile(e, env))
  t.same(projectVariables(base, programs), { object: { metadata: object.metadata, data: object.data }, request: { operation: 'CREATE' } })
  for (const p of programs) t.same(p.evaluateOver(projectVariables(base, programs), {}).value, p.evaluateOver(base, {}).value)
  const wholeToo = [...programs, sb.compile('size(params) > 0 && object != null', env)]
  t.same(projectVariables(base, wholeToo), { object, request: { operation: 'CREATE' }, params: base.params })
  // an object that is not a plain object stays as it is; a dyn variable's field is the property of that name
  t.same(projectVariables({ ...base, object: [1] }, programs).object, [1])
  const tagged = { '@cel': { t: 'map', v: [[{ t: 'string', v: 'metadata' }, { t: 'int', v: '1' }]] } }
  t.same(projectVariables({ ...base, object: tagged }, programs).object, tagged)
  t.equal(sb.compile("object.metadata.name == 'a'", env).reads?.projection?.object?.[0], 'metadata')
})
