// CRD write-time checks of x-orch-validations, worded as kube-apiserver words them (cel-go issues, field errors).

import t from 'tap'
import { createSandbox, type Sandbox } from './sandbox.js'
import { SandboxError } from './errors.js'
import { compileValidationRules, evaluateValidationRules, type ValidationLimits } from './validation.js'
import type { FieldError, StructuralSchema, ValidationRule } from '../apiserver/schema/types.js'

let sb: Sandbox
t.before(async () => {
  sb = await createSandbox({ deadlineMs: 2000 })
})
t.teardown(() => sb.dispose())

const AT = 'openAPIV3Schema.properties[spec].x-orch-validations'
const HINT = '(try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)'

const spec = (rules: unknown[]): StructuralSchema => ({
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      'x-orch-validations': rules as ValidationRule[],
      properties: {
        a: { type: 'integer' },
        s: { type: 'string', maxLength: 10 },
        labels: { type: 'object', additionalProperties: { type: 'string' } },
        list: { type: 'array', items: { type: 'string' } },
        inner: { type: 'object', properties: { b: { type: 'string' } } },
      },
    },
  },
})

/** `Invalid value: <the rule as Go prints it>: ` for rule and messageExpression errors. */
const goRule = (r: { rule: string; message?: string; messageExpression?: string; reason?: string }) =>
  `Invalid value: apiextensions.ValidationRule{Rule:${JSON.stringify(r.rule)}, Message:${JSON.stringify(r.message ?? '')}, ` +
  `MessageExpression:${JSON.stringify(r.messageExpression ?? '')}, Reason:${r.reason ? `(*apiextensions.FieldValueErrorReason)(${JSON.stringify(r.reason)})` : '(*apiextensions.FieldValueErrorReason)(nil)'}, ` +
  'FieldPath:"", OptionalOldSelf:(*bool)(nil)}: '

function errorsOf(rules: unknown[], limits: Partial<ValidationLimits> = {}): FieldError[] {
  const r = compileValidationRules(spec(rules), { sandbox: sb, limits })
  if (r.ok) {
    r.compiled.release()
    return []
  }
  return r.errors
}

const cases: Array<{ name: string; rules: unknown[]; limits?: Partial<ValidationLimits>; errors: FieldError[] }> = [
  {
    name: 'a rule that is not a bool',
    rules: [{ rule: 'self.a' }],
    errors: [{ type: 'FieldValueInvalid', field: `${AT}[0].rule`, message: goRule({ rule: 'self.a' }) + 'cel expression must evaluate to a bool' }],
  },
  {
    name: 'a messageExpression that is not a string',
    rules: [{ rule: 'self.a > 0', messageExpression: 'self.a' }],
    errors: [
      { type: 'FieldValueInvalid', field: `${AT}[0].messageExpression`, message: goRule({ rule: 'self.a > 0', messageExpression: 'self.a' }) + 'messageExpression must evaluate to a string' },
    ],
  },
  {
    name: 'a messageExpression that does not compile',
    rules: [{ rule: 'self.a > 0', messageExpression: "'a is ' + self.nope" }],
    errors: [
      {
        type: 'FieldValueInvalid',
        field: `${AT}[0].messageExpression`,
        message:
          goRule({ rule: 'self.a > 0', messageExpression: "'a is ' + self.nope" }) +
          "messageExpression compilation failed: ERROR: <input>:1:15: undefined field 'nope'\n | 'a is ' + self.nope\n | ..............^",
      },
    ],
  },
  {
    name: 'an undefined field, at the selection as cel-go places it',
    rules: [{ rule: 'self.nope' }],
    errors: [{ type: 'FieldValueInvalid', field: `${AT}[0].rule`, message: goRule({ rule: 'self.nope' }) + "compilation failed: ERROR: <input>:1:5: undefined field 'nope'\n | self.nope\n | ....^" }],
  },
  {
    name: 'a syntax error at the end of the input',
    rules: [{ rule: 'self.a >' }],
    errors: [
      {
        type: 'FieldValueInvalid',
        field: `${AT}[0].rule`,
        message:
          goRule({ rule: 'self.a >' }) +
          "compilation failed: ERROR: <input>:1:9: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n | self.a >\n | ........^",
      },
    ],
  },
  {
    name: 'operators, calls and identifiers without an overload or declaration',
    rules: [{ rule: "self.a == 'x'" }, { rule: 'self.s.startsWith(1)' }, { rule: 'x > 1' }, { rule: 'self.s.b == 1' }, { rule: 'self.a && true' }, { rule: 'foo(1)' }],
    errors: [
      { type: 'FieldValueInvalid', field: `${AT}[0].rule`, message: goRule({ rule: "self.a == 'x'" }) + "compilation failed: ERROR: <input>:1:8: found no matching overload for '_==_' applied to '(int, string)'\n | self.a == 'x'\n | .......^" },
      { type: 'FieldValueInvalid', field: `${AT}[1].rule`, message: goRule({ rule: 'self.s.startsWith(1)' }) + "compilation failed: ERROR: <input>:1:18: found no matching overload for 'startsWith' applied to 'string.(int)'\n | self.s.startsWith(1)\n | .................^" },
      { type: 'FieldValueInvalid', field: `${AT}[2].rule`, message: goRule({ rule: 'x > 1' }) + "compilation failed: ERROR: <input>:1:1: undeclared reference to 'x' (in container '')\n | x > 1\n | ^" },
      { type: 'FieldValueInvalid', field: `${AT}[3].rule`, message: goRule({ rule: 'self.s.b == 1' }) + "compilation failed: ERROR: <input>:1:7: type 'string' does not support field selection\n | self.s.b == 1\n | ......^" },
      { type: 'FieldValueInvalid', field: `${AT}[4].rule`, message: goRule({ rule: 'self.a && true' }) + "compilation failed: ERROR: <input>:1:8: found no matching overload for '_&&_' applied to '(int, bool)'\n | self.a && true\n | .......^" },
      { type: 'FieldValueInvalid', field: `${AT}[5].rule`, message: goRule({ rule: 'foo(1)' }) + "compilation failed: ERROR: <input>:1:4: undeclared reference to 'foo' (in container '')\n | foo(1)\n | ...^" },
    ],
  },
  {
    name: 'an error on the second line of a rule shows that line',
    rules: [{ rule: 'self.a > 0 &&\n  self.nope', message: 'm' }],
    errors: [
      { type: 'FieldValueInvalid', field: `${AT}[0].rule`, message: goRule({ rule: 'self.a > 0 &&\n  self.nope', message: 'm' }) + "compilation failed: ERROR: <input>:2:7: undefined field 'nope'\n |   self.nope\n | ......^" },
    ],
  },
  {
    name: 'fieldPath values that are not paths into the schema',
    rules: [
      { rule: 'true', fieldPath: '.nope' },
      { rule: 'true', fieldPath: '.list[0]' },
      { rule: 'true', fieldPath: '.a\n' },
      { rule: 'true', fieldPath: ' ' },
      { rule: 'true', fieldPath: '.inner.c' },
    ],
    errors: [
      { type: 'FieldValueInvalid', field: `${AT}[0].fieldPath`, message: 'Invalid value: ".nope": fieldPath must be a valid path: does not refer to a valid field' },
      { type: 'FieldValueInvalid', field: `${AT}[1].fieldPath`, message: 'Invalid value: ".list[0]": fieldPath must be a valid path: expected single quoted string but got 0' },
      { type: 'FieldValueInvalid', field: `${AT}[2].fieldPath`, message: 'Invalid value: ".a\\n": fieldPath must not contain line breaks' },
      { type: 'FieldValueInvalid', field: `${AT}[2].fieldPath`, message: 'Invalid value: ".a\\n": fieldPath must be a valid path: does not refer to a valid field' },
      { type: 'FieldValueInvalid', field: `${AT}[3].fieldPath`, message: 'Invalid value: " ": fieldPath must be non-empty if specified' },
      { type: 'FieldValueInvalid', field: `${AT}[3].fieldPath`, message: 'Invalid value: " ": fieldPath must be a valid path: does not refer to a valid field' },
      { type: 'FieldValueInvalid', field: `${AT}[4].fieldPath`, message: 'Invalid value: ".inner.c": fieldPath must be a valid path: does not refer to a valid field' },
    ],
  },
  {
    name: 'fieldPath values into properties and map keys are accepted',
    rules: [{ rule: 'true', fieldPath: '.inner.b' }, { rule: 'true', fieldPath: ".labels['app.kubernetes.io/name']" }, { rule: 'true', fieldPath: "['s']" }],
    errors: [],
  },
  {
    name: 'a reason that is not a field error type',
    rules: [{ rule: 'true', reason: 'FieldValueBogus' }],
    errors: [
      { type: 'FieldValueNotSupported', field: `${AT}[0].reason`, message: 'Unsupported value: "FieldValueBogus": supported values: "FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"' },
    ],
  },
  {
    name: 'empty rules and badly shaped messages',
    rules: [
      { rule: '  ' },
      { rule: 'true', message: ' ' },
      { rule: 'true', message: 'two\nlines' },
      { rule: 'true', message: 'm'.repeat(2049) },
      { rule: 'true &&\ntrue' },
      { rule: 'true', messageExpression: ' ' },
    ],
    errors: [
      { type: 'FieldValueRequired', field: `${AT}[0].rule`, message: 'Required value: rule is not specified' },
      { type: 'FieldValueInvalid', field: `${AT}[1].message`, message: 'Invalid value: " ": message must be non-empty if specified' },
      { type: 'FieldValueInvalid', field: `${AT}[2].message`, message: 'Invalid value: "two\\nlines": message must not contain line breaks' },
      { type: 'FieldValueInvalid', field: `${AT}[3].message`, message: 'Invalid value: "mmmmmmmmmm...": message must have a maximum length of 2048 characters' },
      { type: 'FieldValueRequired', field: `${AT}[4].message`, message: 'Required value: message must be specified if rule contains line breaks' },
      { type: 'FieldValueRequired', field: `${AT}[5].messageExpression`, message: 'Required value: messageExpression must be non-empty if specified' },
    ],
  },
  {
    name: 'a message of exactly 2048 characters is accepted',
    rules: [{ rule: 'true', message: 'm'.repeat(2048) }],
    errors: [],
  },
  {
    name: 'a rule far over the per-expression budget (and so over the CRD total)',
    rules: [{ rule: "self.list.all(x, self.list.all(y, x + y != ''))" }],
    errors: [
      { type: 'FieldValueForbidden', field: `${AT}[0].rule`, message: `Forbidden: estimated rule cost exceeds budget by factor of more than 100x ${HINT}` },
      { type: 'FieldValueForbidden', field: `${AT}[0].rule`, message: 'Forbidden: contributed to estimated rule & messageExpression cost total exceeding cost limit for entire OpenAPIv3 schema' },
      { type: 'FieldValueForbidden', field: 'openAPIV3Schema', message: `Forbidden: x-orch-validations estimated rule & messageExpression cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x ${HINT}` },
    ],
  },
  {
    // self.s == 'abcdefghij' on a maxLength-10 string estimates 2 (a comparison of at most 10 characters, 0.1 each, plus the selection)
    name: 'a rule a little over the per-expression budget names the factor',
    rules: [{ rule: "self.s == 'abcdefghij'", messageExpression: "'s is ' + self.s" }],
    limits: { perExpressionEstimate: 1 },
    errors: [
      { type: 'FieldValueForbidden', field: `${AT}[0].rule`, message: `Forbidden: estimated rule cost exceeds budget by factor of 3.0x ${HINT}` },
      { type: 'FieldValueForbidden', field: `${AT}[0].messageExpression`, message: `Forbidden: estimated messageExpression cost exceeds budget by factor of 4.0x ${HINT}` },
    ],
  },
  {
    name: 'a total just over the CRD budget reports the factor with six decimals',
    rules: [{ rule: "self.s == 'abcdefghij'" }, { rule: "self.s != 'abcdefghij'" }],
    limits: { perCrdEstimate: 5 },
    errors: [
      { type: 'FieldValueForbidden', field: `${AT}[0].rule`, message: 'Forbidden: contributed to estimated rule & messageExpression cost total exceeding cost limit for entire OpenAPIv3 schema' },
      { type: 'FieldValueForbidden', field: `${AT}[1].rule`, message: 'Forbidden: contributed to estimated rule & messageExpression cost total exceeding cost limit for entire OpenAPIv3 schema' },
      { type: 'FieldValueForbidden', field: 'openAPIV3Schema', message: `Forbidden: x-orch-validations estimated rule & messageExpression cost total for entire OpenAPIv3 schema exceeds budget by factor of 1.200000x ${HINT}` },
    ],
  },
]

for (const c of cases) {
  t.test(`CRD write: ${c.name}`, async (t) => {
    t.same(errorsOf(c.rules, c.limits), c.errors)
  })
}

t.test('a rule over an unbounded list item counts once per possible item against the per-expression budget', async (t) => {
  const schema: StructuralSchema = {
    type: 'object',
    properties: { list: { type: 'array', items: { type: 'string', maxLength: 100, 'x-orch-validations': [{ rule: "self.startsWith('a')" }] } } },
  }
  const bounded = compileValidationRules(schema, { sandbox: sb, limits: { unboundedCardinality: 10 } })
  t.equal(bounded.ok, true)
  if (bounded.ok) bounded.compiled.release()
  const r = compileValidationRules(schema, { sandbox: sb, limits: { unboundedCardinality: 10_000_000 } })
  t.equal(r.ok, false)
  if (!r.ok) t.match(r.errors[0], { type: 'FieldValueForbidden', field: 'openAPIV3Schema.properties[list].items.x-orch-validations[0].rule', message: /^Forbidden: estimated rule cost exceeds budget by factor of/ })
})

t.test('a fieldPath into a map key names the key in the runtime error', async (t) => {
  const r = compileValidationRules(spec([{ rule: "!('bad' in self.labels)", fieldPath: ".labels['bad']", message: 'no bad label' }]), { sandbox: sb })
  t.equal(r.ok, true)
  if (!r.ok) return
  t.same(evaluateValidationRules(r.compiled, { spec: { labels: { bad: 'x' } } }).errors, [{ type: 'FieldValueInvalid', field: 'spec.labels[bad]', message: 'Invalid value: "object": no bad label' }])
  r.compiled.release()
})

t.test('schema-shape errors skip compiling the rules of that node', async (t) => {
  // the second rule would not compile, but Kubernetes reports only the shape error first
  t.same(errorsOf([{ rule: 'true', reason: 'Nope' }, { rule: 'self.nope' }]).map((e) => e.field), [`${AT}[0].reason`])
})

t.test('transition rules are refused where oldSelf cannot be correlated (under lists that are not list-type map)', async (t) => {
  const item = (rules: unknown[]): StructuralSchema => ({ type: 'object', properties: { k: { type: 'string', maxLength: 8 } }, 'x-orch-validations': rules as ValidationRule[] })
  const schema: StructuralSchema = {
    type: 'object',
    properties: {
      atomic: { type: 'array', maxItems: 4, items: item([{ rule: 'self.k == oldSelf.k' }]) },
      set: { type: 'array', maxItems: 4, 'x-orch-list-type': 'set', items: { type: 'string', maxLength: 8, 'x-orch-validations': [{ rule: 'self == oldSelf' }] } },
      keyed: { type: 'array', maxItems: 4, 'x-orch-list-type': 'map', 'x-orch-list-map-keys': ['k'], items: item([{ rule: 'self.k == oldSelf.k' }]) },
      nested: { type: 'array', maxItems: 4, items: { type: 'array', maxItems: 4, 'x-orch-list-type': 'map', 'x-orch-list-map-keys': ['k'], items: item([{ rule: 'self == oldSelf' }]) } },
    },
  }
  const r = compileValidationRules(schema, { sandbox: sb })
  t.equal(r.ok, false)
  if (r.ok) return
  t.same(r.errors, [
    { type: 'FieldValueInvalid', field: 'openAPIV3Schema.properties[atomic].items.x-orch-validations[0].rule', message: 'Invalid value: "self.k == oldSelf.k": oldSelf cannot be used on the uncorrelatable portion of the schema within openAPIV3Schema.properties[atomic]' },
    { type: 'FieldValueInvalid', field: 'openAPIV3Schema.properties[set].items.x-orch-validations[0].rule', message: 'Invalid value: "self == oldSelf": oldSelf cannot be used on the uncorrelatable portion of the schema within openAPIV3Schema.properties[set]' },
    { type: 'FieldValueInvalid', field: 'openAPIV3Schema.properties[nested].items.items.x-orch-validations[0].rule', message: 'Invalid value: "self == oldSelf": oldSelf cannot be used on the uncorrelatable portion of the schema within openAPIV3Schema.properties[nested]' },
  ])
})

t.test('optionalOldSelf is refused on a rule that does not use oldSelf', async (t) => {
  t.same(errorsOf([{ rule: 'self.a > 0', optionalOldSelf: true }]), [
    { type: 'FieldValueInvalid', field: `${AT}[0].optionalOldSelf`, message: 'Invalid value: true: may not be set if oldSelf is not used in rule' },
  ])
})

t.test('self == oldSelf compares whole objects field by field', async (t) => {
  const schema: StructuralSchema = {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        properties: { k: { type: 'string', maxLength: 8 }, n: { type: 'integer' } },
        'x-orch-validations': [{ rule: 'self == oldSelf', message: 'spec is immutable' }],
      },
    },
  }
  const r = compileValidationRules(schema, { sandbox: sb })
  t.equal(r.ok, true)
  if (!r.ok) return
  t.same(evaluateValidationRules(r.compiled, { spec: { k: 'a', n: 1 } }, { spec: { k: 'a', n: 1 } }).errors, [])
  t.same(evaluateValidationRules(r.compiled, { spec: { k: 'a', n: 2 } }, { spec: { k: 'a', n: 1 } }).errors, [
    { type: 'FieldValueInvalid', field: 'spec', message: 'Invalid value: "object": spec is immutable' },
  ])
  t.same(evaluateValidationRules(r.compiled, { spec: { k: 'a' } }, { spec: { k: 'a', n: 1 } }).errors.length, 1, 'a removed field is a change')
  r.compiled.release()
})

t.test('compile errors outside CRDs carry the cel-go wording too', async (t) => {
  t.throws(() => sb.compile('1 +\n  x.y', { variables: { x: { type: 'int' } } }), {
    code: 'CEL_ERR_TYPE_CHECK',
    issues: "ERROR: <input>:2:4: type 'int' does not support field selection\n |   x.y\n | ...^",
  })
  let caught: unknown
  try {
    sb.compile('(1')
  } catch (err) {
    caught = err
  }
  t.ok(caught instanceof SandboxError)
  t.match(caught, { code: 'CEL_ERR_COMPILE', issues: "ERROR: <input>:1:3: Syntax error: missing ')' at '<EOF>'\n | (1\n | ..^" })
  t.throws(() => sb.compile('1 + '), { code: 'CEL_ERR_COMPILE', issues: "ERROR: <input>:1:5: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n | 1 + \n | ....^" })
  t.throws(() => sb.compile('nope > 1'), { code: 'CEL_ERR_TYPE_CHECK', issues: "ERROR: <input>:1:1: undeclared reference to 'nope' (in container '')\n | nope > 1\n | ^" })
})
