// Runs cel-spec's SimpleTestFile textprotos against a sandbox and counts pass / fail / not applicable.
//
// Not applicable (stated per test, counted apart): tests that need protobuf messages (a container, a
// message type in the environment or the expected value, TestAllTypes and wrapper types), unknowns,
// proto enums (Kubernetes' CEL has no message types beyond its own object types), tests with
// disable_check (Kubernetes always type-checks before it evaluates), and tests whose expression is a
// heterogeneous list/map literal (Kubernetes enables homogeneous aggregate literals, §2.3.2).

import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import type { Sandbox, CelEnvironment } from '../sandbox.js'
import type { TaggedValue } from '../values.js'
import { conformanceDir } from './data.js'
import { parseTextproto, utf8, first, type TextMessage, type TextValue } from './textproto.js'

export interface FileResult {
  file: string
  total: number
  pass: number
  fail: number
  notApplicable: number
  failures: string[]
}

class NotApplicable extends Error {}

const WKT = 'type.googleapis.com/google.protobuf.'

function celType(t: TextMessage | undefined): string {
  if (!t) return 'dyn'
  const prim = first<{ enum: string }>(t, 'primitive')
  if (prim) {
    const map: Record<string, string> = { BOOL: 'bool', INT64: 'int', UINT64: 'uint', DOUBLE: 'double', STRING: 'string', BYTES: 'bytes' }
    return map[prim.enum] ?? 'dyn'
  }
  const wk = first<{ enum: string }>(t, 'well_known')
  if (wk) {
    if (wk.enum === 'DURATION') return 'google.protobuf.Duration'
    if (wk.enum === 'TIMESTAMP') return 'google.protobuf.Timestamp'
    return 'dyn'
  }
  const l = first<TextMessage>(t, 'list_type')
  if (l) return `list<${celType(first<TextMessage>(l, 'elem_type'))}>`
  const m = first<TextMessage>(t, 'map_type')
  if (m) return `map<${celType(first<TextMessage>(m, 'key_type'))}, ${celType(first<TextMessage>(m, 'value_type'))}>`
  if (t.message_type || t.abstract_type || t.wrapper) throw new NotApplicable('message or wrapper type in environment')
  if (t.null) return 'null_type'
  return 'dyn'
}

/** cel.expr.Value -> the sandbox's tagged form. */
export function toTagged(v: TextMessage): TaggedValue {
  const key = Object.keys(v)[0]
  const x = v[key][0]
  switch (key) {
    case 'null_value':
      return { t: 'null' }
    case 'bool_value':
      return { t: 'bool', v: x as boolean }
    case 'int64_value':
      return { t: 'int', v: String(BigInt(String(x))) }
    case 'uint64_value':
      return { t: 'uint', v: String(BigInt(String(x))) }
    case 'double_value': {
      const d = typeof x === 'number' ? x : Number(x)
      return { t: 'double', v: Number.isFinite(d) ? d : String(d) }
    }
    case 'string_value':
      return { t: 'string', v: utf8(x as string) }
    case 'bytes_value':
      return { t: 'bytes', v: Buffer.from(x as string, 'latin1').toString('base64') }
    case 'list_value':
      return { t: 'list', v: ((x as TextMessage).values ?? []).map((e) => toTagged(e as TextMessage)) }
    case 'map_value':
      return { t: 'map', v: ((x as TextMessage).entries ?? []).map((e) => [toTagged(first<TextMessage>(e as TextMessage, 'key')!), toTagged(first<TextMessage>(e as TextMessage, 'value')!)]) }
    case 'type_value':
      return { t: 'type', v: String(x) }
    case 'object_value':
      return wellKnown(x as TextMessage)
    default:
      throw new NotApplicable(`value kind ${key}`)
  }
}

function wellKnown(any: TextMessage): TaggedValue {
  const url = Object.keys(any)[0]
  const body = any[url][0] as TextMessage
  const num = (f: string) => BigInt(String(first(body, f) ?? 0))
  if (url === `[${WKT}Duration]`) {
    const total = num('seconds') * 1_000_000_000n + num('nanos')
    const neg = total < 0n
    const abs = neg ? -total : total
    const frac = abs % 1_000_000_000n
    return { t: 'duration', v: `${neg ? '-' : ''}${abs / 1_000_000_000n}${frac ? '.' + String(frac).padStart(9, '0').replace(/0+$/, '') : ''}s` }
  }
  if (url === `[${WKT}Timestamp]`) {
    const ms = Number(num('seconds')) * 1000 + Math.floor(Number(num('nanos')) / 1e6)
    return { t: 'timestamp', v: new Date(ms).toISOString() }
  }
  throw new NotApplicable(`message value ${url}`)
}

/** Equality of tagged values as CEL compares them (maps unordered, NaN never equal). */
export function taggedEqual(a: TaggedValue, b: TaggedValue): boolean {
  if (a.t !== b.t) return false
  switch (a.t) {
    case 'list': {
      const bl = (b as typeof a).v
      return a.v.length === bl.length && a.v.every((x, i) => taggedEqual(x, bl[i]))
    }
    case 'map': {
      const bm = (b as typeof a).v
      return a.v.length === bm.length && a.v.every(([k, v]) => bm.some(([k2, v2]) => taggedEqual(k, k2) && taggedEqual(v, v2)))
    }
    case 'double': {
      const x = Number(a.v)
      const y = Number((b as typeof a).v)
      return x === y || (Number.isNaN(x) && Number.isNaN(y))
    }
    case 'type':
      return a.v.replace(/^google\.protobuf\./, '') === (b as typeof a).v.replace(/^google\.protobuf\./, '')
    case 'null':
      return true
    case 'optional':
    case 'object':
      return JSON.stringify(a) === JSON.stringify(b)
    default:
      return a.v === (b as { v: unknown }).v
  }
}

/** The expression, declarations and bindings of one test; throws NotApplicable for what Kubernetes lacks. */
function prepare(test: TextMessage): { expr: string; env: CelEnvironment; vars: Record<string, unknown> } {
  const expr = utf8(first<string>(test, 'expr') ?? '')
  if (first(test, 'container') || /TestAllTypes|google\.protobuf\.[A-Z]|\.proto[23]\b|NestedEnum|GlobalEnum/.test(expr)) throw new NotApplicable('protobuf messages')
  if (test.unknown || test.any_unknowns) throw new NotApplicable('unknowns')
  // Kubernetes always type-checks expressions; evaluating unchecked ones is outside what it uses.
  if (first(test, 'disable_check') === true) throw new NotApplicable('disable_check')
  const env: CelEnvironment = { variables: {} }
  for (const d of (test.type_env ?? []) as TextMessage[]) {
    const ident = first<TextMessage>(d, 'ident')
    if (!ident) throw new NotApplicable('function declarations')
    env.variables[utf8(first<string>(d, 'name')!)] = { type: celType(first<TextMessage>(ident, 'type')) }
  }
  const vars: Record<string, unknown> = {}
  for (const b of (test.bindings ?? []) as TextMessage[]) {
    const name = utf8(first<string>(b, 'key')!)
    const v = first<TextMessage>(first<TextMessage>(b, 'value'), 'value')
    if (!v) throw new NotApplicable('binding without value')
    vars[name] = { '@cel': toTagged(v) }
    env.variables[name] ??= { type: 'dyn' }
  }
  return { expr, env, vars }
}

function runTest(sb: Sandbox, test: TextMessage): 'pass' | string {
  const { expr, env, vars } = prepare(test)
  const expected = first<TextMessage>(test, 'value') ?? first<TextMessage>(first<TextMessage>(test, 'typed_result'), 'result')
  const wantError = Boolean(test.eval_error || test.any_eval_errors)
  const want: TaggedValue | undefined = expected ? toTagged(expected) : wantError ? undefined : { t: 'bool', v: true }
  let got: TaggedValue
  try {
    const p = sb.compile(expr, env)
    if (first(test, 'check_only')) return 'pass'
    got = p.evaluate(vars).tagged
  } catch (err) {
    if (wantError) return 'pass'
    // Kubernetes enables homogeneous aggregate literals, so cel-go rejects these expressions there too.
    if (/List elements must have the same type|Map key uses wrong type|Map value uses wrong type/.test((err as Error).message)) {
      throw new NotApplicable('heterogeneous aggregate literal')
    }
    return `error ${(err as { code?: string }).code}: ${(err as Error).message.split('\n')[0]}`
  }
  if (wantError) return `expected an error, got ${JSON.stringify(got)}`
  return taggedEqual(got, want!) ? 'pass' : `got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`
}

/** Every applicable test of a file as {name, expr, env, vars} (for comparing evaluation strategies). */
export function conformanceInputs(file: string): { name: string; expr: string; env: CelEnvironment; vars: Record<string, unknown> }[] {
  const doc = parseTextproto(readFileSync(resolve(conformanceDir(), 'cel-spec/testdata', `${file}.textproto`), 'latin1'))
  const out = []
  for (const section of (doc.section ?? []) as TextMessage[]) {
    for (const test of (section.test ?? []) as TextMessage[]) {
      try {
        out.push({ name: `${file}/${utf8(first<string>(test, 'name') ?? '')}`, ...prepare(test) })
      } catch (err) {
        if (!(err instanceof NotApplicable)) throw err
      }
    }
  }
  return out
}

export function runConformanceFile(sb: Sandbox, file: string): FileResult {
  const src = readFileSync(resolve(conformanceDir(), 'cel-spec/testdata', `${file}.textproto`), 'latin1')
  const doc = parseTextproto(src)
  const r: FileResult = { file, total: 0, pass: 0, fail: 0, notApplicable: 0, failures: [] }
  for (const section of (doc.section ?? []) as TextMessage[]) {
    for (const test of (section.test ?? []) as TextMessage[]) {
      r.total++
      const name = `${utf8(first<string>(section, 'name') ?? '')}/${utf8(first<string>(test, 'name') ?? '')}`
      try {
        const out = runTest(sb, test)
        if (out === 'pass') r.pass++
        else {
          r.fail++
          r.failures.push(`${name}: ${out}`)
        }
      } catch (err) {
        if (err instanceof NotApplicable) r.notApplicable++
        else {
          r.fail++
          r.failures.push(`${name}: ${(err as Error).message.split('\n')[0]}`)
        }
      }
    }
  }
  return r
}

export const CONFORMANCE_FILES = ['basic', 'comparisons', 'conversions', 'fp_math', 'integer_math', 'lists', 'logic', 'macros', 'macros2', 'parse', 'plumbing', 'string', 'string_ext', 'timestamps', 'optionals', 'fields', 'namespace']

export type { TextValue }
