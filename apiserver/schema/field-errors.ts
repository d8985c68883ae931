// Field paths and FieldError constructors that print exactly as Kubernetes' field.Error does.
import type { FieldError } from './types.js'

/** A field path: `spec.containers[0].name`, map keys as `metadata.labels[app]`. */
export function child (path: string, name: string): string {
  return path === '' ? name : `${path}.${name}`
}
export function index (path: string, i: number): string {
  return `${path}[${i}]`
}
export function key (path: string, k: string): string {
  return `${path}[${k}]`
}

/** A value as Go's field.Error prints it: strings quoted, scalars plain, maps and slices in `%#v` form. */
export function goValue (value: unknown): string {
  if (value === null || value === undefined) return '"null"'
  if (typeof value === 'string') return JSON.stringify(value)
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value)
  return goSyntax(value)
}

function goSyntax (value: unknown): string {
  if (value === null || value === undefined) return 'interface {}(nil)'
  if (typeof value === 'string') return JSON.stringify(value)
  if (Array.isArray(value)) return `[]interface {}{${value.map(goSyntax).join(', ')}}`
  if (typeof value === 'object') {
    const entries = Object.keys(value).sort()
      .map((k) => `${JSON.stringify(k)}:${goSyntax((value as Record<string, unknown>)[k])}`)
    return `map[string]interface {}{${entries.join(', ')}}`
  }
  return String(value)
}

function withDetail (head: string, detail?: string): string {
  return detail === undefined || detail === '' ? head : `${head}: ${detail}`
}

export function required (field: string, detail?: string): FieldError {
  return { type: 'FieldValueRequired', field, message: withDetail('Required value', detail) }
}

export function forbidden (field: string, detail?: string): FieldError {
  return { type: 'FieldValueForbidden', field, message: withDetail('Forbidden', detail) }
}

export function invalid (field: string, value: unknown, detail?: string): FieldError {
  return { type: 'FieldValueInvalid', field, message: withDetail(`Invalid value: ${goValue(value)}`, detail) }
}

export function typeInvalid (field: string, value: unknown, detail?: string): FieldError {
  return { type: 'FieldValueTypeInvalid', field, message: withDetail(`Invalid value: ${goValue(value)}`, detail) }
}

export function notSupported (field: string, value: unknown, supported: unknown[]): FieldError {
  const detail = supported.length === 0
    ? undefined
    : 'supported values: ' + supported.map((v) => JSON.stringify(typeof v === 'string' ? v : String(v))).join(', ')
  return { type: 'FieldValueNotSupported', field, message: withDetail(`Unsupported value: ${goValue(value)}`, detail) }
}

export function duplicate (field: string, value: unknown): FieldError {
  return { type: 'FieldValueDuplicate', field, message: `Duplicate value: ${goValue(value)}` }
}

/** As field.TooLongMaxLength (schema maxLength). */
export function tooLongMaxLength (field: string, max: number): FieldError {
  return { type: 'FieldValueTooLong', field, message: `Too long: ${max >= 0 ? `may not be longer than ${max}` : 'value is too long'}` }
}

/** As field.TooLong (byte budgets such as the annotation total). */
export function tooLongBytes (field: string, max: number): FieldError {
  return { type: 'FieldValueTooLong', field, message: `Too long: must have at most ${max} bytes` }
}

export function tooMany (field: string, actual: number, max: number): FieldError {
  const head = actual >= 0 ? `Too many: ${actual}` : 'Too many: <omitted>'
  return { type: 'FieldValueTooMany', field, message: `${head}: ${max >= 0 ? `must have at most ${max} items` : 'has too many items'}` }
}

/** How Kubernetes prints a list of errors after `<Kind> "<name>" is invalid: `. */
export function formatFieldErrors (errors: FieldError[]): string {
  const parts = errors.map((e) => e.field === '' ? e.message : `${e.field}: ${e.message}`)
  return parts.length === 1 ? parts[0] : `[${parts.join(', ')}]`
}
