// Hostile expressions end with the right typed error, within their bound, and the sandbox stays usable.

import t from 'tap'
import { createSandbox, type Sandbox } from './sandbox.js'
import { SandboxError } from './errors.js'

let sb: Sandbox
t.before(async () => {
  sb = await createSandbox({ memoryBytes: 32 * 1024 * 1024, deadlineMs: 400 })
})
t.teardown(() => sb.dispose())

function codeOf(fn: () => unknown): string {
  try {
    fn()
  } catch (err) {
    if (err instanceof SandboxError) return err.code
    throw err
  }
  return 'no error'
}

/** After every hostile case the same sandbox still answers correctly. */
t.afterEach(() => {
  const r = sb.compile("[1, 2, 3].map(x, x * 2) == [2, 4, 6] && 'ok'.size() == 2").evaluate()
  if (r.value !== true) throw new Error('sandbox not usable after a hostile expression')
})

const ten = '[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]'
const nestedMaps = `${ten}.map(a, ${ten}.map(b, ${ten}.map(c, ${ten}.map(d, ${ten}.map(e, a + b + c + d + e))))).size()`

/** s0 = 16 chars, s(i+1) = s(i) + s(i): 2^(n+4) characters at the end. */
function stringDoubling(n: number): string {
  let body = `s${n}.size()`
  for (let i = n; i >= 1; i--) body = `cel.bind(s${i}, s${i - 1} + s${i - 1}, ${body})`
  return `cel.bind(s0, 'xxxxxxxxxxxxxxxx', ${body})`
}

function listDoubling(n: number): string {
  let body = `l${n}.size()`
  for (let i = n; i >= 1; i--) body = `cel.bind(l${i}, l${i - 1} + l${i - 1}, ${body})`
  return `cel.bind(l0, [1, 2, 3, 4, 5, 6, 7, 8], ${body})`
}

t.test('nested comprehensions stop with CEL_ERR_COST_BUDGET at the per-call budget', async (t) => {
  const p = sb.compile(nestedMaps)
  t.ok(p.estimatedCost.max > 100_000, 'the static estimate sees the cost coming')
  let err: SandboxError | undefined
  try {
    p.evaluate({}, { costLimit: 50_000, deadlineMs: 20_000 })
  } catch (e) {
    err = e as SandboxError
  }
  t.equal(err?.code, 'CEL_ERR_COST_BUDGET')
  t.ok(err!.cost! > 50_000 && err!.cost! <= 50_000 + 100, `stopped at ${err?.cost}, right past the budget`)
})

t.test('nested comprehensions with the full budget end by deadline if they are slower than it', async (t) => {
  t.match(codeOf(() => sb.compile(nestedMaps).evaluate()), /^(CEL_ERR_COST_BUDGET|SANDBOX_ERR_DEADLINE)$/)
})

t.test('string doubling stops with CEL_ERR_COST_BUDGET (concatenation costs its length)', async (t) => {
  t.equal(codeOf(() => sb.compile(stringDoubling(26)).evaluate({}, { deadlineMs: 20_000 })), 'CEL_ERR_COST_BUDGET')
})

t.test('string doubling without a cost budget hits the memory cap: SANDBOX_ERR_MEMORY', async (t) => {
  t.equal(codeOf(() => sb.compile(stringDoubling(26)).evaluate({}, { costLimit: Number.MAX_SAFE_INTEGER, deadlineMs: 20_000 })), 'SANDBOX_ERR_MEMORY')
})

t.test('list doubling (list concatenation costs 1) hits the memory cap: SANDBOX_ERR_MEMORY', async (t) => {
  t.equal(codeOf(() => sb.compile(listDoubling(24)).evaluate({}, { deadlineMs: 20_000 })), 'SANDBOX_ERR_MEMORY')
})

t.test('a catastrophic-backtracking regex runs in linear time (RE2) and returns false', async (t) => {
  const p = sb.compile(`self.matches('^(a+)+$')`, { variables: { self: { schema: { type: 'string' } } } })
  for (const n of [29, 40, 5000]) {
    const start = performance.now()
    const r = p.evaluate({ self: 'a'.repeat(n) + '!' })
    const ms = performance.now() - start
    t.equal(r.value, false, `${n} characters: no match`)
    t.ok(ms < 400, `${n} characters: done in ${ms.toFixed(1)} ms, inside the 400 ms deadline`)
  }
  t.equal(p.evaluate({ self: 'a'.repeat(40) }).value, true)
})

t.test('patterns whose DFA explodes do not fill the sandbox: compiled patterns keep a bounded DFA', async (t) => {
  let x = 12345
  const ab = Array.from({ length: 8000 }, () => ((x = (x * 1103515245 + 12345) & 0x7fffffff) >> 16) & 1 ? 'a' : 'b').join('')
  for (let k = 0; k < 7; k++) {
    const p = sb.compile(`self.matches('(a|b)*a(a|b){${20 + k}}$')`, { variables: { self: { schema: { type: 'string' } } } })
    t.type(p.evaluate({ self: ab }, { deadlineMs: 5000 }).value, 'boolean', `pattern ${k} ends with a boolean`)
  }
  t.equal(sb.compile("'xab'.find('a.') == 'ab'").evaluate().value, true, 'a new pattern still compiles and runs')
})

t.test('deep bracket nesting is a compile error before the parser recurses', async (t) => {
  t.equal(codeOf(() => sb.compile('['.repeat(500) + ']'.repeat(500))), 'CEL_ERR_COMPILE')
  t.equal(codeOf(() => sb.compile('('.repeat(40) + '1' + ')'.repeat(40))), 'CEL_ERR_COMPILE')
})

t.test('a long operator chain overflowing the guest stack is a compile error', async (t) => {
  t.equal(codeOf(() => sb.compile('1' + ' + 1'.repeat(3000))), 'CEL_ERR_COMPILE')
})

t.test('huge literals are compile errors (expression length, list size)', async (t) => {
  t.equal(codeOf(() => sb.compile(`'${'x'.repeat(100_000)}'.size()`)), 'CEL_ERR_COMPILE')
  t.equal(codeOf(() => sb.compile(`[${Array.from({ length: 2000 }, (_, i) => i).join(', ')}].size()`)), 'CEL_ERR_COMPILE')
})

t.test('huge variables are bounded by the memory cap', async (t) => {
  const big = 'y'.repeat(40 * 1024 * 1024)
  t.equal(codeOf(() => sb.compile('s.size()', { variables: { s: { type: 'string' } } }).evaluate({ s: big })), 'SANDBOX_ERR_MEMORY')
})
