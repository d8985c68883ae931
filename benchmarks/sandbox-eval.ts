// Benchmark: CEL validation rules evaluated in the QuickJS sandbox vs the same library in plain V8.
// Run: npx tsx benchmarks/sandbox-eval.ts   (BENCH_ITERATIONS=2000 by default)
// BASELINE=<dir of another checkout> also measures that checkout's sandbox per rule, in alternating rounds with
// this one (same process, same moments), as `baseline` (p50 of each round, then min and median over ROUNDS, default 5).
// Prints one JSON line and writes benchmarks/results/sandbox-eval.json.

import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, resolve } from 'node:path'
import { Environment } from '@marcbachmann/cel-js'
import { getQuickJS } from 'quickjs-emscripten'
import { createSandbox } from '../sandbox/sandbox.js'
import { compileValidationRules, evaluateValidationRules } from '../sandbox/validation.js'
import type { StructuralSchema } from '../apiserver/schema/types.js'

const iterations = Number(process.env.BENCH_ITERATIONS ?? 2000)

const schema: StructuralSchema = {
  type: 'object',
  properties: {
    replicas: { type: 'integer' },
    maxReplicas: { type: 'integer' },
    name: { type: 'string', maxLength: 63 },
    items: { type: 'array', maxItems: 32, items: { type: 'string', maxLength: 128 } },
    ports: { type: 'array', maxItems: 16, items: { type: 'object', properties: { name: { type: 'string', maxLength: 15 }, port: { type: 'integer' } } } },
  },
}
const self = {
  replicas: 3,
  maxReplicas: 5,
  name: 'xweb-frontend',
  items: Array.from({ length: 10 }, (_, i) => `item-${i}`),
  ports: Array.from({ length: 5 }, (_, i) => ({ name: `p${i}`, port: 8000 + i })),
}
const oldSelf = { ...self, replicas: 2 }

const rules: Record<string, string> = {
  compare: 'self.replicas <= self.maxReplicas',
  startsWith: "self.name.startsWith('x')",
  allSize: 'self.items.all(i, i.size() < 64)',
  regex: "self.name.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",
  transition: 'self.replicas >= oldSelf.replicas',
  listRule: "self.ports.map(p, p.port).exists(p, p > 8003) && 'item-3' in self.items",
}

function stats(samples: number[]): { perSecond: number; p50Us: number; p99Us: number } {
  const sorted = [...samples].sort((a, b) => a - b)
  const total = samples.reduce((a, b) => a + b, 0)
  const q = (p: number) => Math.round(sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] * 1000 * 10) / 10
  return { perSecond: Math.round((samples.length / total) * 1000), p50Us: q(0.5), p99Us: q(0.99) }
}

function time(n: number, fn: () => void): number[] {
  for (let i = 0; i < Math.min(200, n); i++) fn()
  const out: number[] = []
  for (let i = 0; i < n; i++) {
    const t0 = performance.now()
    fn()
    out.push(performance.now() - t0)
  }
  return out
}

const sb = await createSandbox({ deadlineMs: 5000 })

// Sandboxed: one crossing per rule evaluation, compiled to JavaScript (the default). "same object": the
// variables equal the previous call's, so the guest reuses their converted values (several rules or
// policies over one request); "fresh object": every call differs from the previous one (two objects
// alternate), so `self` crosses and is converted each time. "interpreted": the metered interpreter.
const sandboxed: Record<string, ReturnType<typeof stats>> = {}
const sandboxedFresh: Record<string, ReturnType<typeof stats>> = {}
const interpreted: Record<string, ReturnType<typeof stats>> = {}
// the second object differs in every field a rule reads (a projection of it is never the first one's)
const self2 = { replicas: 2, maxReplicas: 6, name: 'xweb-backend', items: [...self.items].reverse(), ports: self.ports.map((p) => ({ ...p, port: p.port + 1 })) }
const oldSelf2 = { ...self2, replicas: 1 }
for (const [name, rule] of Object.entries(rules)) {
  const env = { variables: { self: { schema }, ...(rule.includes('oldSelf') ? { oldSelf: { schema } } : {}) } }
  const p = sb.compile(rule, env)
  if (!p.compiled) throw new Error(`rule ${name} did not compile to JavaScript`)
  const pi = sb.compile(rule, env, { interpret: true })
  const vars = rule.includes('oldSelf') ? { self, oldSelf } : { self }
  const vars2 = rule.includes('oldSelf') ? { self: self2, oldSelf: oldSelf2 } : { self: self2 }
  if (p.evaluate(vars).value !== true || p.evaluate(vars2).value !== true) throw new Error(`rule ${name} is not true on the sample`)
  sandboxed[name] = stats(time(iterations, () => p.evaluate(vars)))
  let flip = false
  sandboxedFresh[name] = stats(time(iterations, () => p.evaluate((flip = !flip) ? vars : vars2)))
  interpreted[name] = stats(time(iterations, () => pi.evaluate(vars)))
}

// Sandboxed batch: all rules of one object in one crossing (what CRD validation does).
const batchSchema: StructuralSchema = { ...schema, 'x-orch-validations': Object.values(rules).map((rule) => ({ rule })) }
const compiled = compileValidationRules(batchSchema, { sandbox: sb })
if (!compiled.ok) throw new Error(JSON.stringify(compiled.errors))
if (evaluateValidationRules(compiled.compiled, self, oldSelf).errors.length) throw new Error('batch rules fail on the sample')
const batch = stats(time(iterations, () => evaluateValidationRules(compiled.compiled, self, oldSelf)))

// Before/after in one run: this checkout and BASELINE's, per rule, same object and fresh object, alternating
// rounds so both see the same machine load; each round's p50, reported as min and median over the rounds.
const baseline = process.env.BASELINE ? await compareWithBaseline(process.env.BASELINE) : undefined

// The same library in plain V8 (no sandbox, no cost metering), values converted as the guest does.
const v8: Record<string, ReturnType<typeof stats>> = {}
const toCel = (v: unknown): unknown =>
  typeof v === 'number' && Number.isInteger(v) ? BigInt(v) : Array.isArray(v) ? v.map(toCel) : v && typeof v === 'object' ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, toCel(x)])) : v
const celSelf = toCel(self)
const celOld = toCel(oldSelf)
for (const [name, rule] of Object.entries(rules)) {
  const env = new Environment({ unlistedVariablesAreDyn: true })
  const program = env.parse(rule)
  const ctx = { self: celSelf, oldSelf: celOld }
  if (program(ctx) !== true) throw new Error(`rule ${name} is not true in V8`)
  v8[name] = stats(time(iterations * 5, () => program(ctx)))
}

// Metered throughput: cost units per second on a nested quantifier (about 320,000 units per call), and
// the time a runaway expression takes to exhaust the 1,000,000 per-call budget.
const lst = Array.from({ length: 200 }, (_, i) => i)
const heavy = 'lst.all(x, lst.all(y, x * y >= 0))'
const throughput: Record<string, { costPerCall: number; ms: number; unitsPerSecond: number }> = {}
for (const interpret of [false, true]) {
  const p = sb.compile(heavy, { variables: { lst: { type: 'list<int>' } } }, { interpret })
  const cost = p.evaluate({ lst }).cost
  const samples = time(5, () => p.evaluate({ lst }))
  const ms = [...samples].sort((a, b) => a - b)[2]
  throughput[interpret ? 'interpreted' : 'compiled'] = { costPerCall: cost, ms: Math.round(ms * 10) / 10, unitsPerSecond: Math.round(cost / (ms / 1000)) }
}
const runaway = sb.compile('lst.all(x, lst.all(y, lst.all(z, x + y + z >= 0)))', { variables: { lst: { type: 'list<int>' } } })
const r0 = performance.now()
let runawayEnd = ''
try {
  runaway.evaluate({ lst })
} catch (err) {
  runawayEnd = (err as { code?: string }).code ?? String(err)
}
const budgetExhaustion = { code: runawayEnd, ms: Math.round(performance.now() - r0) }

// One crossing: a no-op guest call carrying a ~750-byte argument.
const payload = { ids: [], pad: 'x'.repeat(730) }
const crossing = stats(time(iterations * 2, () => sb.guest.call('release', payload)))

// The regex engine alone inside QuickJS: re2js (what `matches`/`find`/`findAll` use) against QuickJS's own
// backtracking RegExp, on patterns compiled once; per call, p50. `compileUs`: one re2js compile, uncached.
const regexEngines = await benchRegexEngines()

const t0 = performance.now()
const cold = await createSandbox()
const createMs = Math.round(performance.now() - t0)
cold.dispose()
sb.dispose()

const ratio: Record<string, number> = {}
// p50 over p50: the means are dominated by pauses on a shared machine.
for (const name of Object.keys(rules)) ratio[name] = Math.round(sandboxed[name].p50Us / Math.max(v8[name].p50Us, 0.1))
const freshRatio: Record<string, number> = {}
for (const name of Object.keys(rules)) freshRatio[name] = Math.round(sandboxedFresh[name].p50Us / Math.max(v8[name].p50Us, 0.1))

const result = {
  benchmark: 'sandbox-eval',
  node: process.version,
  iterations,
  sandboxedPerRule: sandboxed,
  sandboxedPerRuleFreshObject: sandboxedFresh,
  sandboxedPerRuleInterpreted: interpreted,
  sandboxedBatchAllRules: { ...batch, rulesPerObject: Object.keys(rules).length },
  plainV8: v8,
  sandboxOverV8P50Ratio: ratio,
  sandboxFreshObjectOverV8P50Ratio: freshRatio,
  meteredThroughput: throughput,
  perCallBudgetExhaustion: budgetExhaustion,
  crossing,
  regexEnginesInQuickJS: regexEngines,
  sandboxCreateMs: createMs,
  ...(baseline ? { baseline } : {}),
}
mkdirSync(new URL('./results/', import.meta.url), { recursive: true })
writeFileSync(new URL('./results/sandbox-eval.json', import.meta.url), JSON.stringify(result, null, 2) + '\n')
console.log(JSON.stringify(result))

async function benchRegexEngines(): Promise<Record<string, { re2jsUs: number; regExpUs: number; ratio: number; compileUs: number }>> {
  const label = 'x' + 'a-b9'.repeat(15) + 'z'
  const cases: Record<string, [string, string]> = {
    'name 13 chars': ['^[a-z0-9]([-a-z0-9]*[a-z0-9])?$', 'xweb-frontend'],
    'name 63 chars': ['^[a-z0-9]([-a-z0-9]*[a-z0-9])?$', label.slice(0, 63)],
    'prefix': ['^x', 'xweb-frontend'],
    'email': ['^[^@]+@[^@]+\\.[a-z]{2,}$', 'someone@example.com'],
    'digits in 1 KB': ['[0-9]+', 'x'.repeat(1000) + '42'],
    'dns subdomain 253 chars': ['^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$', Array.from({ length: 4 }, () => label).join('.').slice(0, 253)],
  }
  const re2jsPath = resolve(dirname(createRequire(import.meta.url).resolve('re2js')), 'index.js')
  const rt = (await getQuickJS()).newRuntime()
  rt.setModuleLoader((name) => readFileSync(name, 'utf8'), (_base, request) => (request === 're2js' ? re2jsPath : request))
  const ctx = rt.newContext()
  const code = `import { RE2JS } from 're2js'
const cases = ${JSON.stringify(Object.values(cases))}
const re2 = cases.map(([p]) => RE2JS.compile(p))
const rx = cases.map(([p]) => new RegExp(p, 'u'))
globalThis.run = (engine, i, n) => {
  const [, s] = cases[i]
  let hits = 0
  if (engine === 're2js') for (let k = 0; k < n; k++) hits += re2[i].test(s) ? 1 : 0
  else if (engine === 'regexp') for (let k = 0; k < n; k++) hits += rx[i].test(s) ? 1 : 0
  else for (let k = 0; k < n; k++) hits += RE2JS.compile(cases[i][0]).flags() >= 0 ? 1 : 0
  return hits
}`
  const loaded = ctx.evalCode(code, 'bench-regex.js', { type: 'module' })
  ctx.unwrapResult(loaded).dispose()
  const fn = ctx.getProp(ctx.global, 'run')
  const call = (engine: string, i: number, n: number) => {
    const args = [ctx.newString(engine), ctx.newNumber(i), ctx.newNumber(n)]
    ctx.unwrapResult(ctx.callFunction(fn, ctx.undefined, ...args)).dispose()
    for (const a of args) a.dispose()
  }
  const perCallUs = (engine: string, i: number, n: number) => {
    const samples = time(30, () => call(engine, i, n))
    return Math.round(([...samples].sort((a, b) => a - b)[15] / n) * 1000 * 10) / 10
  }
  const out: Record<string, { re2jsUs: number; regExpUs: number; ratio: number; compileUs: number }> = {}
  Object.keys(cases).forEach((name, i) => {
    const re2jsUs = perCallUs('re2js', i, 50)
    const regExpUs = perCallUs('regexp', i, 50)
    out[name] = { re2jsUs, regExpUs, ratio: Math.round((re2jsUs / Math.max(regExpUs, 0.1)) * 10) / 10, compileUs: perCallUs('compile', i, 5) }
  })
  fn.dispose()
  ctx.dispose()
  rt.dispose()
  return out
}

type Side = { same: number[]; fresh: number[]; batch: number[] }
async function compareWithBaseline(dir: string): Promise<Record<string, unknown>> {
  const rounds = Number(process.env.ROUNDS ?? 5)
  const sides: Record<'before' | 'after', { sb: Awaited<ReturnType<typeof createSandbox>>; validation: typeof import('../sandbox/validation.js') }> = {
    before: { sb: await (await import(resolve(dir, 'sandbox/sandbox.ts'))).createSandbox({ deadlineMs: 5000 }), validation: await import(resolve(dir, 'sandbox/validation.ts')) },
    after: { sb: await createSandbox({ deadlineMs: 5000 }), validation: await import('../sandbox/validation.js') },
  }
  const per: Record<string, Record<'before' | 'after', Side>> = {}
  const prepared = Object.fromEntries(
    (['before', 'after'] as const).map((side) => {
      const { sb: s, validation } = sides[side]
      const progs = Object.entries(rules).map(([name, rule]) => {
        const t = rule.includes('oldSelf')
        const p = s.compile(rule, { variables: { self: { schema }, ...(t ? { oldSelf: { schema } } : {}) } })
        return { name, p, v1: t ? { self, oldSelf } : { self }, v2: t ? { self: self2, oldSelf: oldSelf2 } : { self: self2 } }
      })
      const c = validation.compileValidationRules(batchSchema, { sandbox: s })
      if (!c.ok) throw new Error('baseline batch rules do not compile')
      return [side, { progs, batch: () => validation.evaluateValidationRules(c.compiled, self, oldSelf) }]
    }),
  )
  const n = Math.max(200, Math.floor(iterations / 2))
  for (let r = 0; r < rounds; r++) {
    for (const side of ['before', 'after'] as const) {
      const { progs, batch: b } = prepared[side]
      for (const { name, p, v1, v2 } of progs) {
        const e = ((per[name] ??= { before: { same: [], fresh: [], batch: [] }, after: { same: [], fresh: [], batch: [] } })[side])
        e.same.push(stats(time(n, () => p.evaluate(v1))).p50Us)
        let flip = false
        e.fresh.push(stats(time(n, () => p.evaluate((flip = !flip) ? v1 : v2))).p50Us)
      }
      ;((per.batch ??= { before: { same: [], fresh: [], batch: [] }, after: { same: [], fresh: [], batch: [] } })[side]).batch.push(stats(time(n, b)).p50Us)
    }
  }
  sides.before.sb.dispose()
  sides.after.sb.dispose()
  const summary = (xs: number[]) => {
    const sorted = [...xs].sort((a, b) => a - b)
    return xs.length ? { min: sorted[0], median: sorted[Math.floor(sorted.length / 2)] } : undefined
  }
  const out: Record<string, unknown> = { dir, rounds, iterationsPerRound: n }
  for (const [name, sidesOf] of Object.entries(per)) {
    out[name] = Object.fromEntries(
      (['before', 'after'] as const).map((side) => [side, Object.fromEntries(Object.entries(sidesOf[side]).filter(([, v]) => v.length).map(([k, v]) => [k, summary(v)]))]),
    )
  }
  return out
}
