// CRD-write checks of x-orch-validations entries that need no CEL: rule/message/reason/fieldPath shape, the
// fieldPath against the schema, and the wording of Kubernetes' field errors (after apiextensions-apiserver's
// validation.go: ValidateCustomResourceDefinitionOpenAPISchema, cel.ValidFieldPath, getCostErrorMessage).

const REASONS = ['FieldValueDuplicate', 'FieldValueForbidden', 'FieldValueInvalid', 'FieldValueRequired']
const MAX_MESSAGE = 2048
const hasNewlines = (s) => /[\r\n]/.test(s)
/** Go's strings.TrimSpace (Unicode white space). */
const trim = (s) => s.replace(/^[\s\u0085]+|[\s\u0085]+$/g, '')
/** Go's %q for a string, close enough for messages (JSON escaping). */
const quote = (s) => JSON.stringify(String(s))

/** The rule as Kubernetes prints the bad value of a rule error (Go's %#v of apiextensions.ValidationRule). */
export function goRule(r) {
  const ptr = (type, v) => (v === undefined || v === null ? `(*${type})(nil)` : `(*${type})(${typeof v === 'string' ? quote(v) : String(v)})`)
  return (
    `apiextensions.ValidationRule{Rule:${quote(r.rule ?? '')}, Message:${quote(r.message ?? '')}, ` +
    `MessageExpression:${quote(r.messageExpression ?? '')}, Reason:${ptr('apiextensions.FieldValueErrorReason', r.reason)}, ` +
    `FieldPath:${quote(r.fieldPath ?? '')}, OptionalOldSelf:${ptr('bool', r.optionalOldSelf)}}`
  )
}

/** Kubernetes' getCostErrorMessage. */
export function costErrorMessage(costName, cost, limit) {
  const factor = cost / limit
  const f = factor > 100 ? 'more than 100x' : factor < 1.5 ? `${factor.toFixed(6)}x` : `${factor.toFixed(1)}x`
  return `${costName} exceeds budget by factor of ${f} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`
}

/**
 * Field errors of one rule's shape (no CEL involved), in Kubernetes' order. `at` is the rule's path,
 * e.g. `openAPIV3Schema.properties[spec].x-orch-validations[0]`; `resolve` follows `$ref`s.
 * Returns { errors, fieldPath } where fieldPath is the normalized path used in runtime errors.
 */
export function checkRuleShape(r, schema, resolve, at) {
  const errors = []
  const rule = typeof r?.rule === 'string' ? r.rule : ''
  const message = typeof r?.message === 'string' ? r.message : ''
  const messageExpression = typeof r?.messageExpression === 'string' ? r.messageExpression : ''
  const fieldPath = typeof r?.fieldPath === 'string' ? r.fieldPath : ''
  const invalid = (f, value, detail) => errors.push({ type: 'FieldValueInvalid', field: `${at}.${f}`, message: `Invalid value: ${quote(value)}: ${detail}` })
  const required = (f, detail) => errors.push({ type: 'FieldValueRequired', field: `${at}.${f}`, message: `Required value: ${detail}` })
  const tMsg = trim(message)
  if (trim(rule) === '') required('rule', 'rule is not specified')
  else if (message.length > 0 && tMsg === '') invalid('message', message, 'message must be non-empty if specified')
  else if (message.length > MAX_MESSAGE) invalid('message', `${message.slice(0, 10)}...`, `message must have a maximum length of ${MAX_MESSAGE} characters`)
  else if (hasNewlines(tMsg)) invalid('message', message, 'message must not contain line breaks')
  else if (hasNewlines(trim(rule)) && tMsg === '') required('message', 'message must be specified if rule contains line breaks')
  if (messageExpression.length > 0 && trim(messageExpression) === '') required('messageExpression', 'messageExpression must be non-empty if specified')
  if (r?.reason !== undefined && r?.reason !== null && !REASONS.includes(r.reason)) {
    errors.push({
      type: 'FieldValueNotSupported',
      field: `${at}.reason`,
      message: `Unsupported value: ${quote(r.reason)}: supported values: ${REASONS.map(quote).join(', ')}`,
    })
  }
  let normalized
  if (fieldPath.length > 0 && trim(fieldPath) === '') invalid('fieldPath', fieldPath, 'fieldPath must be non-empty if specified')
  if (hasNewlines(fieldPath)) invalid('fieldPath', fieldPath, 'fieldPath must not contain line breaks')
  if (fieldPath.length > 0) {
    const p = validFieldPath(fieldPath, schema, resolve)
    if (p.error) invalid('fieldPath', fieldPath, `fieldPath must be a valid path: ${p.error}`)
    else normalized = p.path
  }
  return { errors, fieldPath: normalized }
}

/**
 * After Kubernetes' cel.ValidFieldPath: `.name` and `['name']` steps through properties (or the keys of an
 * additionalProperties map); list indexes are not allowed. Returns the path as field errors print it
 * (`.a.b`, `.labels[app]`) or an error.
 */
export function validFieldPath(jsonPath, schema, resolve) {
  let s = resolve(schema)
  let out = ''
  let i = 0
  const step = (name) => {
    if (s.additionalProperties && typeof s.additionalProperties === 'object') {
      out += `[${name}]`
      s = resolve(s.additionalProperties)
      return undefined
    }
    if (!s.properties || !Object.prototype.hasOwnProperty.call(s.properties, name)) return 'does not refer to a valid field'
    out += `.${name}`
    s = resolve(s.properties[name])
    return undefined
  }
  if (jsonPath[0] !== '.' && jsonPath[0] !== '[') jsonPath = '.' + jsonPath
  while (i < jsonPath.length) {
    if (jsonPath[i] === '.') {
      const m = /^[^.[\]]*/.exec(jsonPath.slice(i + 1))[0]
      if (m === '') return { error: 'does not refer to a valid field' }
      const e = step(m)
      if (e) return { error: e }
      i += 1 + m.length
    } else if (jsonPath[i] === '[') {
      const rest = jsonPath.slice(i + 1)
      if (rest[0] !== "'") return { error: `expected single quoted string but got ${/^[^\]]*/.exec(rest)[0] || 'EOF'}` }
      const end = rest.indexOf("'", 1)
      if (end < 0) return { error: 'unexpected end of JSON path' }
      const name = rest.slice(1, end).replace(/\\'/g, "'")
      if (rest[end + 1] !== ']') return { error: `expected ] but got ${rest[end + 1] ?? 'EOF'}` }
      const e = step(name)
      if (e) return { error: e }
      i += end + 3
    } else {
      return { error: 'does not refer to a valid field' }
    }
  }
  return { path: out }
}

/** Keeps the most expensive rules (at least 1% of the CRD limit each, at most 4), as Kubernetes' TotalCost. */
export function createTotalCost(limit) {
  const t = { total: 0, mostExpensive: [] }
  return {
    observe(field, cost) {
      t.total += cost
      if (cost < limit / 100) return
      t.mostExpensive.push({ field, cost })
      t.mostExpensive.sort((a, b) => b.cost - a.cost)
      if (t.mostExpensive.length > 4) t.mostExpensive.length = 4
    },
    get total() {
      return t.total
    },
    errors(schemaPath) {
      if (t.total <= limit) return []
      return [
        ...t.mostExpensive.map((e) => ({
          type: 'FieldValueForbidden',
          field: e.field,
          message: 'Forbidden: contributed to estimated rule & messageExpression cost total exceeding cost limit for entire OpenAPIv3 schema',
        })),
        {
          type: 'FieldValueForbidden',
          field: schemaPath,
          message: `Forbidden: ${costErrorMessage('x-orch-validations estimated rule & messageExpression cost total for entire OpenAPIv3 schema', t.total, limit)}`,
        },
      ]
    },
  }
}
