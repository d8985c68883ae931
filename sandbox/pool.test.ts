// The sandbox pool: same results as the in-thread sandbox, deadlines that leave the event loop free,
// threads replaced after a hang or a crash, and no thread left after close.

import { readdirSync } from 'node:fs'
import t from 'tap'
import { createSandbox, type Sandbox } from './sandbox.js'
import { createSandboxPool } from './pool.js'
import { inThreadRuleEvaluator, type RuleCompileOptions, type RuleEvaluator, type RuleSet } from './rule-evaluator.js'
import { SandboxError } from './errors.js'
import type { SchemaDefinitions, StructuralSchema, ValidationRule } from '../apiserver/schema/types.js'

/** OS threads of this process (each worker thread is one). */
const osThreads = (): number => readdirSync('/proc/self/task').length

const withRules = (rules: ValidationRule[], props: Record<string, StructuralSchema> = {}): StructuralSchema => ({
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      'x-orch-validations': rules,
      properties: { replicas: { type: 'integer' }, maxReplicas: { type: 'integer' }, name: { type: 'string', maxLength: 63 }, ...props },
    },
  },
})

interface Case { schema: StructuralSchema; options?: RuleCompileOptions; objects: Array<[unknown, unknown?]> }

// Schemas and objects covering messages, reasons, field paths, transition rules, list-type maps,
// runtime errors, budgets and recursive definitions (the shapes of validation.test.ts).
const corpus: Case[] = [
  {
    schema: withRules([
      { rule: 'self.replicas <= self.maxReplicas', message: 'replicas must not exceed maxReplicas' },
      { rule: 'self.replicas > 0', reason: 'FieldValueForbidden', fieldPath: '.replicas', messageExpression: "'replicas is ' + string(self.replicas)" },
      { rule: 'has(self.name)', reason: 'FieldValueRequired', message: 'name is required' },
      { rule: "self.name.startsWith('x')" },
    ]),
    objects: [[{ spec: { replicas: 5, maxReplicas: 3, name: 'abc' } }], [{ spec: { replicas: 0 } }], [{ spec: { replicas: 2, maxReplicas: 3, name: 'xy' } }]],
  },
  {
    schema: withRules([
      { rule: 'self.replicas >= oldSelf.replicas', message: 'may not scale down' },
      { rule: '!oldSelf.hasValue() || self.name == oldSelf.value().name', optionalOldSelf: true, message: 'name is immutable' },
    ]),
    objects: [[{ spec: { replicas: 1, name: 'a' } }], [{ spec: { replicas: 1, name: 'b' } }, { spec: { replicas: 3, name: 'a' } }], [{ spec: { replicas: 4, name: 'a' } }, { spec: { replicas: 3, name: 'a' } }]],
  },
  {
    schema: {
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          properties: {
            ports: {
              type: 'array', maxItems: 8, 'x-orch-list-type': 'map', 'x-orch-list-map-keys': ['name'],
              items: {
                type: 'object',
                properties: { name: { type: 'string', maxLength: 15 }, port: { type: 'integer' } },
                'x-orch-validations': [{ rule: 'self.port < 65536', message: 'port out of range' }, { rule: 'self.port == oldSelf.port', message: 'port is immutable' }],
              },
            },
            labels: { type: 'object', maxProperties: 4, additionalProperties: { type: 'string', maxLength: 10, 'x-orch-validations': [{ rule: "self != ''" }] } },
          },
        },
      },
    },
    objects: [[{ spec: { ports: [{ name: 'a', port: 80 }, { name: 'b', port: 70000 }, { name: 'new', port: 1 }], labels: { app: '' } } }, { spec: { ports: [{ name: 'b', port: 443 }, { name: 'a', port: 81 }] } }]],
  },
  {
    schema: withRules(
      [
        { rule: 'self.replicas / (self.maxReplicas - self.maxReplicas) > 0' },
        { rule: "self.labels['size'] == 'a'", message: ' labels need size ', fieldPath: '.labels' },
        { rule: '[1][self.replicas] == 1' },
        { rule: 'self.port + 1 == 2' },
      ],
      { labels: { type: 'object', additionalProperties: { type: 'string' } }, port: { 'x-orch-int-or-string': true } },
    ),
    objects: [[{ spec: { replicas: 1, maxReplicas: 1, labels: {}, port: 'a' } }]],
  },
  {
    schema: withRules([{ rule: 'self.replicas > 0' }, { rule: 'self.replicas > 1' }, { rule: 'self.replicas > 2' }]),
    options: { limits: { perObjectRuntime: 6 } },
    objects: [[{ spec: { replicas: 5 } }]],
  },
  {
    schema: { $ref: 'Node' },
    options: { definitions: { Node: { type: 'object', properties: { value: { type: 'integer' }, children: { type: 'array', maxItems: 4, items: { $ref: 'Node' } } }, 'x-orch-validations': [{ rule: 'self.value >= 0', message: 'negative' }] } } as SchemaDefinitions },
    objects: [[{ value: 1, children: [{ value: 2, children: [{ value: -1 }] }] }]],
  },
]

const failing: Array<{ schema: StructuralSchema; options?: RuleCompileOptions }> = [
  { schema: withRules([{ rule: 'self.nope == 1' }, { rule: 'self.replicas +' }]) },
  { schema: withRules([{ rule: 'self.tags.all(a, self.tags.all(b, a.matches(b)))' }], { tags: { type: 'array', items: { type: 'string' } } }) },
  { schema: withRules([{ rule: 'self.replicas', messageExpression: 'self.replicas' }]) },
]

/** What an evaluator answers for the whole corpus: compile errors, then each object's errors and cost. */
async function answers(ev: RuleEvaluator): Promise<unknown[]> {
  const out: unknown[] = []
  for (const f of failing) out.push(await ev.compile(f.schema, f.options))
  for (const c of corpus) {
    const r = await ev.compile(c.schema, c.options)
    if (!r.ok) throw new Error(`corpus schema did not compile: ${JSON.stringify(r.errors)}`)
    out.push([r.rules.rules, r.rules.totalEstimate])
    for (const [obj, old] of c.objects) out.push(await r.rules.evaluate(obj, old))
    r.rules.release()
  }
  return out
}

const slowLimits = { perCallRuntime: 1e12, perObjectRuntime: 1e12, perExpressionEstimate: 1e15, perCrdEstimate: 1e15 }
const slowSchema: StructuralSchema = {
  type: 'object',
  properties: { l: { type: 'array', maxItems: 1000, items: { type: 'integer' } } },
  'x-orch-validations': [{ rule: 'self.l.all(x, self.l.all(y, self.l.all(z, x + y + z >= 0)))' }],
}
const slowObject = { l: Array.from({ length: 400 }, (_, i) => i) }
const quickSchema = withRules([{ rule: 'self.replicas <= self.maxReplicas', message: 'too many' }])

async function compiled(ev: RuleEvaluator, schema: StructuralSchema, options?: RuleCompileOptions): Promise<RuleSet> {
  const r = await ev.compile(schema, options)
  if (!r.ok) throw new Error(JSON.stringify(r.errors))
  return r.rules
}

async function failure(p: Promise<unknown>): Promise<SandboxError> {
  const err = await p.then(() => undefined, (e: unknown) => e)
  if (!(err instanceof SandboxError)) throw new Error(`expected a SandboxError, got ${String(err)}`)
  return err
}

let sandbox: Sandbox
t.before(async () => { sandbox = await createSandbox({ deadlineMs: 2000 }) })
t.teardown(() => sandbox.dispose())

t.test('the pool answers the corpus exactly as the in-thread sandbox does', async (t) => {
  const pool = createSandboxPool({ size: 2, limits: { deadlineMs: 2000 } })
  t.teardown(() => pool.close())
  const expected = await answers(inThreadRuleEvaluator(sandbox))
  t.same(await answers(pool), expected)
  t.equal(pool.stats().ruleSets, 0, 'released rule sets are dropped')
})

t.test('one compiled rule set per schema, shared by its holders until the last release', async (t) => {
  const pool = createSandboxPool({ size: 1 })
  t.teardown(() => pool.close())
  const a = await compiled(pool, quickSchema)
  const b = await compiled(pool, structuredClone(quickSchema))
  t.equal(pool.stats().ruleSets, 1)
  a.release()
  t.match((await b.evaluate({ spec: { replicas: 3, maxReplicas: 1 } })).errors, [{ message: /too many/ }])
  await t.rejects(a.evaluate({ spec: {} }), { code: 'SANDBOX_ERR_INTERNAL' }, 'a released holder no longer evaluates')
  b.release()
  t.equal(pool.stats().ruleSets, 0)
})

t.test('a rule running to its deadline fails with SANDBOX_ERR_DEADLINE while the event loop keeps running', async (t) => {
  const pool = createSandboxPool({ size: 1, limits: { deadlineMs: 300 } })
  t.teardown(() => pool.close())
  const slow = await compiled(pool, slowSchema, { limits: slowLimits })
  let ticks = 0
  const timer = setInterval(() => ticks++, 5)
  const err = await failure(slow.evaluate(slowObject))
  clearInterval(timer)
  t.equal(err.code, 'SANDBOX_ERR_DEADLINE')
  t.ok(ticks >= 10, `timers ran ${ticks} times while the rule ran`)
  const quick = await compiled(pool, quickSchema)
  t.same((await quick.evaluate({ spec: { replicas: 1, maxReplicas: 2 } })).errors, [], 'the same thread serves the next request')
  t.equal(pool.stats().started, 1)
})

t.test('a thread silent past its watchdog is terminated and replaced; the request gets the deadline error', async (t) => {
  const pool = createSandboxPool({ size: 1, limits: { deadlineMs: 60_000 }, evaluationWatchdogMs: 300 })
  t.teardown(() => pool.close())
  const slow = await compiled(pool, slowSchema, { limits: slowLimits })
  const quick = await compiled(pool, quickSchema)
  const err = await failure(slow.evaluate(slowObject))
  t.equal(err.code, 'SANDBOX_ERR_DEADLINE')
  t.equal(err.message, 'evaluation deadline exceeded')
  t.match((await quick.evaluate({ spec: { replicas: 3, maxReplicas: 1 } })).errors, [{ message: /too many/ }], 'the replacement compiles the rules it is asked for')
  t.equal(pool.stats().started, 2)
})

t.test('a thread whose V8 heap blows up is replaced; the request gets SANDBOX_ERR_MEMORY and the next one works', async (t) => {
  const pool = createSandboxPool({ size: 1, threadMemory: { maxOldGenerationSizeMb: 48, maxYoungGenerationSizeMb: 8 } })
  t.teardown(() => pool.close())
  const quick = await compiled(pool, quickSchema)
  const huge = { spec: { replicas: 1, maxReplicas: 2, name: 'n' }, blob: Array.from({ length: 2_000_000 }, (_, i) => ({ i })) }
  const err = await failure(quick.evaluate(huge))
  t.equal(err.code, 'SANDBOX_ERR_MEMORY')
  t.same((await quick.evaluate({ spec: { replicas: 1, maxReplicas: 2 } })).errors, [])
  t.equal(pool.stats().started, 2)
})

t.test('an object beyond the QuickJS memory cap is refused by the sandbox itself, the thread stays', async (t) => {
  const pool = createSandboxPool({ size: 1, limits: { memoryBytes: 16 << 20 } })
  t.teardown(() => pool.close())
  const quick = await compiled(pool, quickSchema)
  const err = await failure(quick.evaluate({ spec: { replicas: 1, maxReplicas: 2, name: 'x'.repeat(8 << 20) } }))
  t.equal(err.code, 'SANDBOX_ERR_MEMORY')
  t.same((await quick.evaluate({ spec: { replicas: 1, maxReplicas: 2 } })).errors, [])
  t.equal(pool.stats().started, 1)
})

t.test('requests beyond the threads wait their turn and run in parallel on the threads there are', async (t) => {
  const pool = createSandboxPool({ size: 2, limits: { deadlineMs: 300 } })
  t.teardown(() => pool.close())
  const slow = await compiled(pool, slowSchema, { limits: slowLimits })
  const runs = [slow.evaluate(slowObject), slow.evaluate(slowObject), slow.evaluate(slowObject)]
  t.equal(pool.stats().queued + pool.stats().busy, 3)
  const codes = (await Promise.all(runs.map(failure))).map((e) => e.code)
  t.same(codes, ['SANDBOX_ERR_DEADLINE', 'SANDBOX_ERR_DEADLINE', 'SANDBOX_ERR_DEADLINE'])
  t.equal(pool.stats().started, 2, 'at most size threads')
})

t.test('a thread idle for idleThreadMs stops; the next request starts another', async (t) => {
  const pool = createSandboxPool({ size: 1, idleThreadMs: 100 })
  t.teardown(() => pool.close())
  const quick = await compiled(pool, quickSchema)
  t.same((await quick.evaluate({ spec: { replicas: 1, maxReplicas: 2 } })).errors, [])
  while (pool.stats().threads > 0) await new Promise((resolve) => setTimeout(resolve, 20))
  t.match((await quick.evaluate({ spec: { replicas: 3, maxReplicas: 2 } })).errors, [{ message: /too many/ }])
  t.equal(pool.stats().started, 2)
})

t.test('close rejects what waits and leaves no thread running', async (t) => {
  const before = osThreads()
  const pool = createSandboxPool({ size: 2, limits: { deadlineMs: 5000 } })
  const slow = await compiled(pool, slowSchema, { limits: slowLimits })
  const runs = [slow.evaluate(slowObject), slow.evaluate(slowObject), slow.evaluate(slowObject)].map(failure)
  while (pool.stats().threads < 2) await new Promise((resolve) => setTimeout(resolve, 20))
  t.ok(osThreads() >= before + 2, 'two threads run')
  await pool.close()
  t.same((await Promise.all(runs)).map((e) => e.code), ['SANDBOX_ERR_INTERNAL', 'SANDBOX_ERR_INTERNAL', 'SANDBOX_ERR_INTERNAL'])
  t.equal(osThreads(), before, 'no thread is left')
  t.same(pool.stats(), { started: 2, threads: 0, starting: 0, busy: 0, queued: 0, ruleSets: 0 })
  await t.rejects(pool.compile(quickSchema), { code: 'SANDBOX_ERR_INTERNAL' })
})
