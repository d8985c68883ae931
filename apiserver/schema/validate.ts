// Schema validation of an object against its kind's structural schema, with Kubernetes' messages and cause types.
//
// Built-in kinds decode as Go structs do: a JSON null anywhere means "absent". Custom kinds follow the
// CRD validator (kube-openapi): null is a type error unless the node is nullable. CEL rules
// (x-orch-validations) are not evaluated here; the sandbox does that.
import { createResolver, resolverFor, type SchemaResolver } from './resolve.js'
import * as fe from './field-errors.js'
import type { FieldError, ResourceDefinition, StructuralSchema } from './types.js'
import { sameJsonApart } from './json-equal.js'

interface Ctx { r: SchemaResolver; nullIsAbsent: boolean; errors: FieldError[] }

/**
 * `valid`: a value this validation of `def` accepted, unchanged since. A member or item of `obj` the same JSON as
 * `valid`'s at the same place, held apart from it, is valid too (a node's errors depend on its value and schema alone)
 * and is not walked again; the rest is.
 */
export function validateObject (def: ResourceDefinition, obj: unknown, valid?: unknown): FieldError[] {
  const ctx: Ctx = { r: resolverFor(def), nullIsAbsent: def.custom === undefined, errors: [] }
  validateNode(ctx, obj, def.schema, '', valid)
  return ctx.errors
}

/** Validates `value` against `schema` alone (for value-validation of CRD sub-schemas and tests). */
export function validateValue (schema: StructuralSchema, value: unknown, opts: { definitions?: ResourceDefinition['definitions']; nullIsAbsent?: boolean; path?: string } = {}): FieldError[] {
  const ctx: Ctx = { r: createResolver(opts.definitions ?? {}), nullIsAbsent: opts.nullIsAbsent ?? false, errors: [] }
  validateNode(ctx, value, schema, opts.path ?? '')
  return ctx.errors
}

/** The JSON type name kube-openapi reports for a value. */
export function jsonType (v: unknown): string {
  if (v === null || v === undefined) return 'null'
  if (Array.isArray(v)) return 'array'
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number'
  return typeof v
}

const inBody = (path: string): string => `${path === '' ? '<root>' : path} in body`

function typeError (path: string, want: string, actual: string): FieldError {
  return fe.typeInvalid(path, actual, `${inBody(path)} must be of type ${want}: ${JSON.stringify(actual)}`)
}

/** `valid`: the value at this place in a value known valid (validateObject), undefined when none. */
function validateNode (ctx: Ctx, value: unknown, node: StructuralSchema, path: string, valid?: unknown): void {
  const s = ctx.r.resolve(node)
  if (value === null || value === undefined) {
    if (ctx.nullIsAbsent || s.nullable === true) return
    if (s.type === undefined && s['x-orch-int-or-string'] !== true) {
      runCombinators(ctx, value, s, path)
      return
    }
    ctx.errors.push(typeError(path, s['x-orch-int-or-string'] === true ? 'integer,string' : String(s.type), 'null'))
    return
  }
  if (!checkType(ctx, value, s, path)) return
  if (s.enum !== undefined && !s.enum.some((e) => deepEqual(e, value))) {
    ctx.errors.push(fe.notSupported(path, value, s.enum))
  }
  if (typeof value === 'string') checkString(ctx, value, s, path)
  else if (typeof value === 'number') checkNumber(ctx, value, s, path)
  else if (Array.isArray(value)) checkArray(ctx, value, s, path, valid)
  else if (typeof value === 'object') checkObject(ctx, value as Record<string, unknown>, s, path, valid)
  runCombinators(ctx, value, s, path)
}

/** Type and format; false when the value's type is wrong (no further checks then). */
function checkType (ctx: Ctx, value: unknown, s: StructuralSchema, path: string): boolean {
  const actual = jsonType(value)
  if (s['x-orch-int-or-string'] === true) {
    const ok = actual === 'string' || actual === 'integer' || (actual === 'number' && s.format === 'quantity')
    if (!ok) ctx.errors.push(typeError(path, 'integer,string', actual))
    return ok
  }
  if (s.type === undefined) return true
  const ok = s.type === actual || (s.type === 'number' && actual === 'integer')
  if (!ok) {
    ctx.errors.push(typeError(path, s.type, actual))
    return false
  }
  const bad = formatProblem(s.format, value)
  if (bad) ctx.errors.push(fe.typeInvalid(path, value, `${inBody(path)} must be of type ${s.format}: ${fe.goValue(value)}`))
  return !bad
}

const int32 = 2 ** 31
const rfc3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/
const base64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/

// The last date-time checked and whether it was bad: objects written in the same second carry the same timestamps
// (creationTimestamp, managedFields' time), and the check is a pure function of the string.
let lastDateTime: string | undefined
let lastDateTimeBad = false

function badDateTime (value: string): boolean {
  if (value !== lastDateTime) {
    lastDateTimeBad = !(rfc3339.test(value) && !Number.isNaN(Date.parse(value.replace(' ', 'T'))))
    lastDateTime = value
  }
  return lastDateTimeBad
}

function formatProblem (format: string | undefined, value: unknown): boolean {
  switch (format) {
    case 'int32': return typeof value === 'number' && (value < -int32 || value >= int32)
    case 'int64': return typeof value === 'number' && !Number.isSafeInteger(value) && Math.abs(value) >= 2 ** 63
    case 'date-time': return typeof value === 'string' && badDateTime(value)
    case 'byte': return typeof value === 'string' && !base64.test(value)
    default: return false
  }
}

function checkString (ctx: Ctx, value: string, s: StructuralSchema, path: string): void {
  // Limits count code points; the UTF-16 length bounds them from above, so most strings need no counting.
  if (s.maxLength !== undefined && value.length > s.maxLength && codePointLength(value) > s.maxLength) {
    ctx.errors.push(fe.tooLongMaxLength(path, s.maxLength))
  }
  if (s.minLength !== undefined && (value.length < s.minLength || codePointLength(value) < s.minLength)) {
    ctx.errors.push(fe.invalid(path, value, `${inBody(path)} should be at least ${s.minLength} chars long`))
  }
  if (s.pattern !== undefined && !patternMatches(s.pattern, value)) {
    ctx.errors.push(fe.invalid(path, value, `${inBody(path)} should match '${s.pattern}'`))
  }
}

/** Code points in `value` (a surrogate pair counts once), without building an array of them. */
export function codePointLength (value: string): number {
  let n = value.length
  for (let i = 0; i < value.length - 1; i++) {
    const c = value.charCodeAt(i)
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = value.charCodeAt(i + 1)
      if (d >= 0xdc00 && d <= 0xdfff) { n--; i++ }
    }
  }
  return n
}

function patternMatches (pattern: string, value: string): boolean {
  try {
    return new RegExp(pattern, 'u').test(value)
  } catch {
    return true // a pattern JS cannot compile was rejected (or accepted) when the CRD was validated
  }
}

function checkNumber (ctx: Ctx, value: number, s: StructuralSchema, path: string): void {
  if (s.maximum === undefined && s.minimum === undefined && s.multipleOf === undefined) return
  const p = inBody(path)
  if (s.maximum !== undefined) {
    if (s.exclusiveMaximum === true ? value >= s.maximum : value > s.maximum) {
      ctx.errors.push(fe.invalid(path, value, `${p} should be less than ${s.exclusiveMaximum === true ? '' : 'or equal to '}${s.maximum}`))
    }
  }
  if (s.minimum !== undefined) {
    if (s.exclusiveMinimum === true ? value <= s.minimum : value < s.minimum) {
      ctx.errors.push(fe.invalid(path, value, `${p} should be greater than ${s.exclusiveMinimum === true ? '' : 'or equal to '}${s.minimum}`))
    }
  }
  if (s.multipleOf !== undefined && s.multipleOf > 0) {
    const q = value / s.multipleOf
    if (Math.abs(q - Math.round(q)) > 1e-9) ctx.errors.push(fe.invalid(path, value, `${p} should be a multiple of ${s.multipleOf}`))
  }
}

function checkArray (ctx: Ctx, value: unknown[], s: StructuralSchema, path: string, valid: unknown): void {
  if (s.maxItems !== undefined && value.length > s.maxItems) ctx.errors.push(fe.tooMany(path, value.length, s.maxItems))
  if (s.minItems !== undefined && value.length < s.minItems) {
    ctx.errors.push(fe.invalid(path, value.length, `${inBody(path)} should have at least ${s.minItems} items`))
  }
  if (s.items !== undefined) {
    // The accepted value's own list (not this one, shared): nothing below a shared object is vouched for.
    const was = Array.isArray(valid) && valid !== value ? valid : undefined
    value.forEach((item, i) => {
      const before = was !== undefined && i < was.length ? was[i] as unknown : undefined
      if (before !== undefined && sameJsonApart(item, before)) return
      validateNode(ctx, item, s.items as StructuralSchema, fe.index(path, i), before)
    })
  }
  const listType = s['x-orch-list-type']
  if (listType === 'set' || (s.uniqueItems === true && listType !== 'map')) checkSet(ctx, value, path)
  else if (listType === 'map') checkMapList(ctx, value, s['x-orch-list-map-keys'] ?? [], path)
}

function checkSet (ctx: Ctx, value: unknown[], path: string): void {
  const seen = new Set<string>()
  value.forEach((item, i) => {
    const k = canonical(item)
    if (seen.has(k)) ctx.errors.push(fe.duplicate(fe.index(path, i), item))
    seen.add(k)
  })
}

function checkMapList (ctx: Ctx, value: unknown[], keys: string[], path: string): void {
  if (keys.length === 0) return
  const seen = new Set<string>()
  value.forEach((item, i) => {
    if (item === null || typeof item !== 'object' || Array.isArray(item)) return
    const rec = item as Record<string, unknown>
    const k = canonical(keys.map((name) => rec[name] ?? null))
    if (seen.has(k)) {
      // Built-in validation names the key field (`spec.containers[1].name: Duplicate value: "a"`); the CRD list-type check names the item.
      if (ctx.nullIsAbsent && keys.length === 1) ctx.errors.push(fe.duplicate(fe.child(fe.index(path, i), keys[0]), rec[keys[0]]))
      else ctx.errors.push(fe.duplicate(fe.index(path, i), Object.fromEntries(keys.filter((n) => n in rec).map((n) => [n, rec[n]]))))
    }
    seen.add(k)
  })
}

function checkObject (ctx: Ctx, value: Record<string, unknown>, s: StructuralSchema, path: string, valid: unknown): void {
  for (const name of s.required ?? []) {
    const v = value[name]
    if (v === undefined || (v === null && ctx.nullIsAbsent)) ctx.errors.push(fe.required(fe.child(path, name)))
  }
  const count = Object.keys(value).length
  if (s.maxProperties !== undefined && count > s.maxProperties) ctx.errors.push(fe.tooMany(path, count, s.maxProperties))
  if (s.minProperties !== undefined && count < s.minProperties) {
    ctx.errors.push(fe.invalid(path, count, `${inBody(path)} should have at least ${s.minProperties} properties`))
  }
  if (s['x-orch-embedded-resource'] === true) {
    for (const name of ['apiVersion', 'kind']) {
      if (typeof value[name] !== 'string' || value[name] === '') ctx.errors.push(fe.required(fe.child(path, name), 'must not be empty'))
    }
  }
  const extra = typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined
  const was = valid !== null && typeof valid === 'object' && !Array.isArray(valid) && valid !== value ? valid as Record<string, unknown> : undefined
  for (const [name, v] of Object.entries(value)) {
    const before = was !== undefined && Object.prototype.hasOwnProperty.call(was, name) ? was[name] : undefined
    if (before !== undefined && sameJsonApart(v, before)) continue
    const prop = s.properties?.[name]
    if (prop !== undefined) validateNode(ctx, v, prop, fe.child(path, name), before)
    else if (extra !== undefined) validateNode(ctx, v, extra, fe.key(path, name), before)
  }
}

function runCombinators (ctx: Ctx, value: unknown, s: StructuralSchema, path: string): void {
  if (s.allOf === undefined && s.anyOf === undefined && s.oneOf === undefined && s.not === undefined) return
  const passes = (sub: StructuralSchema): boolean => {
    const inner: Ctx = { ...ctx, errors: [] }
    validateNode(inner, value, sub, path)
    return inner.errors.length === 0
  }
  for (const sub of s.allOf ?? []) validateNode(ctx, value, sub, path)
  if (s.anyOf !== undefined && !s.anyOf.some(passes)) {
    ctx.errors.push(fe.invalid(path, value, `${inBody(path)} must validate at least one schema (anyOf)`))
  }
  if (s.oneOf !== undefined && s.oneOf.filter(passes).length !== 1) {
    ctx.errors.push(fe.invalid(path, value, `${inBody(path)} must validate one and only one schema (oneOf)`))
  }
  if (s.not !== undefined && passes(s.not)) {
    ctx.errors.push(fe.invalid(path, value, `${inBody(path)} should not validate the schema`))
  }
}

/** A key equal for deep-equal JSON values (object keys sorted). */
export function canonical (v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'undefined'
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`
  const rec = v as Record<string, unknown>
  return `{${Object.keys(rec).sort().map((k) => `${JSON.stringify(k)}:${canonical(rec[k])}`).join(',')}}`
}

export function deepEqual (a: unknown, b: unknown): boolean {
  return canonical(a) === canonical(b)
}
