// The compiled JavaScript path against the metered interpreter: same value, error code and cost on every
// expression of the conformance corpora, the Kubernetes library cases and the cost cases.

import t from 'tap'
import { createSandbox, type CelEnvironment, type Sandbox } from './sandbox.js'
import { conformanceInputs, CONFORMANCE_FILES } from './conformance/cel-spec.js'
import { readConformanceJson, toOrchSchema } from './conformance/data.js'
import type { StructuralSchema } from '../apiserver/schema/types.js'

interface Input {
  name: string
  expr: string
  env: CelEnvironment
  vars: Record<string, unknown>
}

function outcome(sb: Sandbox, i: Input, interpret: boolean): { compiled?: boolean; result: string } {
  let p
  try {
    p = sb.compile(i.expr, i.env, { interpret })
  } catch (err) {
    return { result: `compile ${(err as { code?: string }).code}` }
  }
  try {
    const r = p.evaluate(i.vars)
    return { compiled: p.compiled, result: `${JSON.stringify(r.tagged)} cost ${r.cost}` }
  } catch (err) {
    const e = err as { code?: string; cost?: number; message: string }
    return { compiled: p.compiled, result: `error ${e.code} cost ${e.cost}` }
  } finally {
    p.release()
  }
}

function inputs(): Input[] {
  const all: Input[] = CONFORMANCE_FILES.flatMap((f) => conformanceInputs(f))
  const k8s = readConformanceJson<{ expr: string; self?: unknown; selfSchema?: unknown }[]>('cel-k8s-library/cel_k8s_library_cases_all.json')
  for (const c of k8s) {
    const env: CelEnvironment = { variables: {} }
    if (c.self !== undefined) env.variables.self = { schema: toOrchSchema(c.selfSchema ?? { type: 'object' }) as StructuralSchema }
    all.push({ name: `k8s: ${c.expr}`, expr: c.expr, env, vars: c.self !== undefined ? { self: c.self } : {} })
  }
  const costs = readConformanceJson<{ cases: { expr: string }[] }>('cel-k8s-library/cel_k8s_library_costs.json')
  for (const c of costs.cases) all.push({ name: `cost: ${c.expr}`, expr: c.expr, env: { variables: {}, homogeneousLiterals: false }, vars: {} })
  return all
}

t.test('compiled programs give the interpreter value, error and cost on every corpus expression', async (t) => {
  const sb = await createSandbox({ deadlineMs: 5000 })
  t.teardown(() => sb.dispose())
  const diffs: string[] = []
  let compiled = 0
  let total = 0
  for (const i of inputs()) {
    const a = outcome(sb, i, true)
    const b = outcome(sb, i, false)
    if (a.result.startsWith('compile')) continue
    total++
    if (b.compiled) compiled++
    if (a.result !== b.result) diffs.push(`${i.name}: interpreter ${a.result} | compiled ${b.result}`)
  }
  t.comment(`${compiled} of ${total} evaluated expressions ran compiled`)
  t.ok(compiled > total / 2, 'most expressions are covered by the compiler')
  t.same(diffs, [])
})

t.test('compiled and interpreted agree on Kubernetes-style rules over schema-typed objects', async (t) => {
  const sb = await createSandbox({ deadlineMs: 5000 })
  t.teardown(() => sb.dispose())
  const schema = {
    type: 'object',
    properties: {
      name: { type: 'string', maxLength: 63 },
      replicas: { type: 'integer' },
      spec: { type: 'object', properties: { mode: { type: 'string' }, limits: { type: 'object', additionalProperties: { type: 'integer' } } } },
      ports: { type: 'array', maxItems: 16, items: { type: 'object', properties: { name: { type: 'string' }, port: { type: 'integer' } } } },
      tags: { type: 'array', items: { type: 'string' }, 'x-orch-list-type': 'set' },
    },
  } as unknown as StructuralSchema
  const env: CelEnvironment = { variables: { self: { schema }, oldSelf: { schema } } }
  const objects = [
    { name: 'web', replicas: 3, spec: { mode: 'a', limits: { cpu: 2 } }, ports: [{ name: 'http', port: 80 }, { port: 443 }], tags: ['x', 'y'] },
    { name: 'db', replicas: -1, spec: {}, ports: [], tags: [] },
    { name: 'x'.repeat(40), replicas: 9007199254740991, ports: [{ name: 'a', port: 1 }] },
  ]
  const rules = [
    'has(self.spec.mode)',
    '!has(self.spec) || has(self.spec.limits)',
    'self.ports.all(p, has(p.name) && p.name.size() > 0)',
    'self.ports.exists(p, p.port == 443)',
    "self.ports.filter(p, has(p.name)).map(p, p.name + ':' + string(p.port)).size() >= 0",
    'self.ports.exists_one(p, p.port > 100)',
    'self.replicas + 1 > self.replicas',
    'self.replicas * 1024 > 0',
    "self.name.matches('^[a-z]+$') && self.name.size() < 32",
    "has(self.spec.limits) && self.spec.limits.all(k, self.spec.limits[k] < 10) && 'cpu' in self.spec.limits",
    "self.tags == oldSelf.tags && self.tags.all(t, t in ['x', 'y', 'z'])",
    'self.replicas >= oldSelf.replicas ? self.name == oldSelf.name : true',
    "self.ports.map(p, p.port).filter(x, x / (x - 80) > 0).size() == 1",
    'cel.bind(n, self.name, n.size() > 1 || n == "")',
    "self.spec.?mode.orValue('none') != ''",
    '[1, 2, 3].map(x, [x, x * 2]).all(l, l.size() == 2 && l[1] == l[0] * 2)',
  ]
  const diffs: string[] = []
  let compiled = 0
  for (const rule of rules) {
    for (const self of objects) {
      for (const oldSelf of objects) {
        const i = { name: rule, expr: rule, env, vars: { self, oldSelf } }
        const a = outcome(sb, i, true)
        const b = outcome(sb, i, false)
        if (b.compiled) compiled++
        if (a.result !== b.result) diffs.push(`${rule} on ${JSON.stringify(self)}: interpreter ${a.result} | compiled ${b.result}`)
      }
    }
  }
  t.equal(compiled, rules.length * objects.length ** 2, 'every rule ran compiled')
  t.same(diffs, [])
})

t.test('dyn fast paths and per-node overload caches agree with the interpreter whatever types reach a node in turn', async (t) => {
  const sb = await createSandbox({ deadlineMs: 5000 })
  t.teardown(() => sb.dispose())
  const env: CelEnvironment = { variables: { object: { type: 'dyn' }, other: { type: 'dyn' }, variables: { type: 'map<string, dyn>' } } }
  const rules = [
    'object.v == other.v',
    'object.v != other',
    'object.v < other.v',
    'object.v + other.v',
    'size(object.v)',
    'string(object.v)',
    'object.v.startsWith("a")',
    'object.v.contains(other.v)',
    'object.v in [dyn(1), dyn("a"), dyn(2.5), dyn(null)]',
    'variables.x == object.v',
    'object.v == null',
    'int(object.v) * 2',
    'object.missing == 1',
    'object.v.size() > other.v.size()',
  ]
  // each value reaches every node after and before the others: a cache made for one type must not serve another
  const values: unknown[] = ['a', 'abc', 7, 2.5, -1, true, null, { k: 'a' }, ['a', 'b'], '', 'x'.repeat(30), 9007199254740991]
  const sequence = [...values, ...[...values].reverse(), ...values]
  const diffs: string[] = []
  for (const rule of rules) {
    const compiled = sb.compile(rule, env)
    const interpreted = sb.compile(rule, env, { interpret: true })
    t.equal(compiled.compiled, true, `${rule} runs compiled`)
    for (const [i, v] of sequence.entries()) {
      const vars = { object: { v }, other: { v: sequence[(i + 1) % sequence.length] }, variables: { x: v } }
      const run = (p: typeof compiled): string => {
        try {
          const r = p.evaluate(vars)
          return `${JSON.stringify(r.tagged)} cost ${r.cost}`
        } catch (err) {
          return `error ${(err as { code?: string }).code} cost ${(err as { cost?: number }).cost}`
        }
      }
      const a = run(interpreted)
      const b = run(compiled)
      if (a !== b) diffs.push(`${rule} with ${JSON.stringify(vars)}: interpreter ${a} | compiled ${b}`)
    }
    compiled.release()
    interpreted.release()
  }
  t.same(diffs, [])
})
