// Libraries added in this round: quantity, strings.quote, jsonpatch.escapeKey, optMap/optFlatMap,
// two-variable comprehensions, CEL value ranges, and the cost of a macro at the root of an expression.

import t from 'tap'
import { createSandbox, type Sandbox } from './sandbox.js'
import { SandboxError } from './errors.js'

let sb: Sandbox
t.before(async () => {
  sb = await createSandbox({ deadlineMs: 2000 })
})
t.teardown(() => sb.dispose())

const run = (expr: string) => sb.compile(expr).evaluate().value
function codeOf(fn: () => unknown): string {
  try {
    fn()
  } catch (err) {
    if (err instanceof SandboxError) return err.code
    throw err
  }
  return 'no error'
}

t.test('quantity parses Kubernetes suffixes and compares exactly', async (t) => {
  t.equal(run('quantity("50M").isLessThan(quantity("100M"))'), true)
  t.equal(run('quantity("1") == quantity("1000m")'), true)
  t.equal(run('quantity("1Ki").compareTo(quantity("1024"))'), 0n)
  t.equal(run('quantity("50k").add(quantity("20k")) == quantity("70k")'), true)
  t.equal(run('quantity("50k").sub(20000) == quantity("30k")'), true)
  t.equal(run('quantity("50M").add(20).isGreaterThan(quantity("50M"))'), true)
  t.equal(run('quantity("1.5G").asApproximateFloat()'), 1.5e9)
  t.equal(run('quantity("50k").asInteger()'), 50000n)
  t.equal(run('quantity("-50k").sign()'), -1n)
  t.equal(run('quantity("1.5").isInteger()'), false)
  t.equal(run('isQuantity("1.3Gi") && !isQuantity("1,3G") && !isQuantity("")'), true)
  t.same(run('quantity("1500m")'), { value: '1.5' })
})

t.test('quantity errors are evaluation errors', async (t) => {
  t.equal(codeOf(() => run('quantity("1.5").asInteger()')), 'CEL_ERR_EVAL')
  t.equal(codeOf(() => run('quantity("abc")')), 'CEL_ERR_EVAL')
  t.equal(codeOf(() => run('quantity("1e100000")')), 'CEL_ERR_EVAL')
})

t.test('strings.quote and jsonpatch.escapeKey', async (t) => {
  t.equal(run('strings.quote("a\\"b\\n")'), '"a\\"b\\n"')
  t.equal(run('jsonpatch.escapeKey("a/b~c")'), 'a~1b~0c')
})

t.test('optMap and optFlatMap map present values and keep none', async (t) => {
  t.same(run('optional.of(2).optMap(x, x * 2)'), { hasValue: true, value: 4n })
  t.same(run('optional.none().optMap(x, x * 2)'), { hasValue: false })
  t.equal(run('{"a": 1}[?"a"].optMap(v, v + 1).orValue(0)'), 2n)
  t.equal(run('optional.of(1).optFlatMap(x, x > 1 ? optional.of(x) : optional.none()).hasValue()'), false)
  t.equal(codeOf(() => sb.compile('optional.of(2).optFlatMap(x, x)')), 'CEL_ERR_TYPE_CHECK')
})

t.test('two-variable comprehensions over lists and maps', async (t) => {
  t.equal(run('[1, 2, 3].all(i, v, i > -1 && v > 0)'), true)
  t.equal(run('{"a": 1, "b": 2}.exists(k, v, k == "b" && v == 2)'), true)
  t.equal(run('[5, 7, 8].existsOne(i, v, v % 5 == i)'), true)
  t.same(run('[1, 2, 3].transformList(i, v, i > 0, v * 10)'), [20n, 30n])
  t.same(run('{"a": 1}.transformMap(k, v, v * 2)'), new Map([['a', 2n]]))
  const p = sb.compile('[1, 2, 3].all(i, v, v > 0)')
  t.ok(p.estimatedCost.max >= p.evaluate().cost, 'the estimate bounds the runtime cost')
})

t.test('results outside CEL ranges are evaluation errors', async (t) => {
  t.equal(codeOf(() => run('-(-9223372036854775807 - 1)')), 'CEL_ERR_EVAL')
  t.equal(codeOf(() => run('int(9223372036854775807.0)')), 'CEL_ERR_EVAL')
  t.equal(codeOf(() => run('duration("320000000000s")')), 'CEL_ERR_EVAL')
  t.equal(codeOf(() => run('timestamp("9999-12-31T23:59:59Z") + duration("1s")')), 'CEL_ERR_EVAL')
})

t.test('bytes are ordered lexicographically', async (t) => {
  t.equal(run("b'a' < b'b' && b'ab' > b'a' && b'' <= b'' && b'b' >= b'a'"), true)
})

t.test('a macro at the root of an expression is charged its hidden steps', async (t) => {
  const p = sb.compile('[1, 2, 3].all(x, x > 0)')
  t.equal(p.evaluate().cost, 26)
  t.equal(p.estimatedCost.max, 26)
})

t.test('matches uses RE2 syntax and rejects what RE2 lacks', async (t) => {
  t.equal(run("'abc'.matches('(?i)ABC') && matches('abc', '^a') && 'aA'.matches('[[:upper:]]')"), true)
  t.equal(codeOf(() => sb.compile("'ab'.matches('a(?=b)')")), 'CEL_ERR_COMPILE')
  const dynamicPattern = sb.compile('s.matches(p)', { variables: { s: { type: 'string' }, p: { type: 'string' } } })
  t.equal(dynamicPattern.evaluate({ s: 'aa', p: '(?P<x>a)a' }).value, true)
  t.throws(() => dynamicPattern.evaluate({ s: 'aa', p: '(a)\\1' }), { code: 'CEL_ERR_EVAL' })
})

t.test('regexes run on RE2 (re2js) with Go semantics and Go error wording', async (t) => {
  t.same(run("'baaab'.findAll('a*')"), ['', 'aaa', ''], 'an empty match abutting a previous match is skipped, as Go does')
  t.same(run("'a1b22c333'.findAll('[0-9]+', 2)"), ['1', '22'])
  t.same(run("'abc'.findAll('x')"), [])
  t.equal(run("'xyz'.find('q')"), '')
  t.equal(run("'a-b_c'.find('[[:punct:]]+')"), '-')
  t.equal(run("'a\\n'.matches('a$') || 'a\\nb'.matches('^b') || '\\n'.matches('.')"), false, 'no multi-line or dot-all unless asked')
  t.equal(run("'a\\nb'.matches('(?m)^b') && '\\n'.matches('(?s).') && 'é'.matches('^\\\\pL$')"), true)
  t.throws(() => sb.compile("'a'.matches('a**')"), { code: 'CEL_ERR_COMPILE', message: /^error parsing regexp: invalid nested repetition operator: `\*\*`/ })
  t.throws(() => sb.compile("'a'.find('(')"), { code: 'CEL_ERR_COMPILE', message: /^error parsing regexp: missing closing \): `\(`/ })
  const dynamic = sb.compile('s.findAll(p)', { variables: { s: { type: 'string' }, p: { type: 'string' } } })
  t.throws(() => dynamic.evaluate({ s: 'a', p: '[a' }), { code: 'CEL_ERR_EVAL', message: /error parsing regexp: missing closing \]: `\[a`/ })
})

t.test('string and time functions follow cel-go where the base library differs', async (t) => {
  t.equal(run("'ÀbC'.lowerAscii() == 'Àbc' && 'àBc'.upperAscii() == 'àBC'"), true)
  t.equal(run("'\\u00a0 a \\u2003'.trim() == 'a' && '\\ufeffa'.trim() == '\\ufeffa'"), true)
  t.equal(run("timestamp('2009-02-13T23:31:30Z').getHours('+02:00')"), 1n)
  t.equal(run("timestamp('2009-02-13T02:00:00Z').getDayOfMonth('-02:30')"), 11n)
  t.equal(run("timestamp('2009-02-13T23:31:30Z').getHours('UTC')"), 23n)
  t.equal(codeOf(() => run("timestamp('2009-02-13T23:31:30Z').getHours('Europe/Paris')")), 'CEL_ERR_EVAL', 'no zone database: an error, not a wrong hour')
  t.equal(run('dyn(1u) in [1, 2] && dyn(2) in [1u, 2u] && dyn(2.0) in [2u]'), true)
})
