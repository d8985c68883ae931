// Evidence for the library choice: both installed CEL libraries run in plain V8 on the same cel-spec files.
// Run: npx tsx sandbox/conformance/compare-libraries.ts   (prints one JSON line; numbers go in README.md)
//
// Comparison is loose (ints and doubles compared as numbers, since cel-js 0.8.2 has no int type), so it
// favours cel-js 0.8.2; tests that need protobuf messages or disable type checking are skipped for both.

import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { Environment } from '@marcbachmann/cel-js'
import * as celJs from 'cel-js'
import { conformanceDir } from './data.js'
import { CONFORMANCE_FILES, toTagged } from './cel-spec.js'
import { parseTextproto, utf8, first, type TextMessage } from './textproto.js'
import type { TaggedValue } from '../values.js'

type Evaluate = (expr: string, vars: Record<string, unknown>) => unknown

function loose(v: unknown): unknown {
  if (typeof v === 'bigint') return Number(v)
  if (v && typeof v === 'object' && 'valueOf' in v && typeof (v as { valueOf(): unknown }).valueOf() === 'bigint') return Number((v as { valueOf(): bigint }).valueOf())
  if (Array.isArray(v)) return v.map(loose)
  if (v instanceof Map) return Object.fromEntries([...v].map(([k, x]) => [String(k), loose(x)]))
  if (v instanceof Uint8Array) return Buffer.from(v).toString('base64')
  if (v && typeof v === 'object' && (v.constructor === Object || v.constructor === undefined)) {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, loose(x)]))
  }
  return v
}

function plain(t: TaggedValue): unknown {
  switch (t.t) {
    case 'int':
    case 'uint':
      return Number(t.v)
    case 'double':
      return Number(t.v)
    case 'list':
      return t.v.map(plain)
    case 'map':
      return Object.fromEntries(t.v.map(([k, v]) => [String(plain(k)), plain(v)]))
    case 'null':
      return null
    case 'bytes':
      return t.v
    case 'string':
    case 'bool':
      return t.v
    default:
      throw new Error('skip')
  }
}

function run(evaluate: Evaluate, bigints: boolean): Record<string, number> {
  const out: Record<string, number> = {}
  for (const file of CONFORMANCE_FILES) {
    const doc = parseTextproto(readFileSync(resolve(conformanceDir(), 'cel-spec/testdata', `${file}.textproto`), 'latin1'))
    let pass = 0
    for (const section of (doc.section ?? []) as TextMessage[]) {
      for (const test of (section.test ?? []) as TextMessage[]) {
        const expr = utf8(first<string>(test, 'expr') ?? '')
        if (first(test, 'container') || first(test, 'disable_check') === true || /TestAllTypes|google\.protobuf/.test(expr)) continue
        try {
          const vars: Record<string, unknown> = {}
          for (const b of (test.bindings ?? []) as TextMessage[]) {
            const v = plain(toTagged(first<TextMessage>(first<TextMessage>(b, 'value'), 'value')!))
            vars[utf8(first<string>(b, 'key')!)] = bigints && typeof v === 'number' && Number.isInteger(v) ? BigInt(v) : v
          }
          const expected = first<TextMessage>(test, 'value')
          const wantError = Boolean(test.eval_error || test.any_eval_errors)
          let got: unknown
          try {
            got = loose(evaluate(expr, vars))
          } catch {
            if (wantError) pass++
            continue
          }
          if (!wantError && JSON.stringify(got) === JSON.stringify(expected ? plain(toTagged(expected)) : true)) pass++
        } catch {
          // values the loose comparison cannot express are skipped for both libraries
        }
      }
    }
    out[file] = pass
  }
  return out
}

function speed(evaluate: Evaluate, vars: Record<string, unknown>): number {
  const expr = 'self.replicas <= self.maxReplicas && self.name == "web"'
  const n = 20000
  for (let i = 0; i < 1000; i++) evaluate(expr, vars)
  const t0 = performance.now()
  for (let i = 0; i < n; i++) evaluate(expr, vars)
  return Math.round(n / ((performance.now() - t0) / 1000))
}

const env = new Environment({ unlistedVariablesAreDyn: true, enableOptionalTypes: true })
const marc: Evaluate = (expr, vars) => env.evaluate(expr, vars)
const cache = new Map<string, ReturnType<typeof env.parse>>()
const marcParsed: Evaluate = (expr, vars) => {
  let p = cache.get(expr)
  if (!p) cache.set(expr, (p = env.parse(expr)))
  return p(vars)
}
const celjs: Evaluate = (expr, vars) => celJs.evaluate(expr, vars)
const celjsParsed = new Map<string, unknown>()
const celjsCst: Evaluate = (expr, vars) => {
  let cst = celjsParsed.get(expr)
  if (!cst) {
    const r = celJs.parse(expr) as { isSuccess: boolean; cst: unknown }
    if (!r.isSuccess) throw new Error('parse')
    celjsParsed.set(expr, (cst = r.cst))
  }
  return (celJs.evaluate as (e: unknown, v: unknown) => unknown)(cst, vars)
}

const a = run(marc, true)
const b = run(celjs, false)
const total = (r: Record<string, number>) => Object.values(r).reduce((x, y) => x + y, 0)
console.log(
  JSON.stringify({
    conformancePass: { '@marcbachmann/cel-js@8': { total: total(a), ...a }, 'cel-js@0.8.2': { total: total(b), ...b } },
    evaluationsPerSecondParsedOnce: {
      '@marcbachmann/cel-js@8': speed(marcParsed, { self: { replicas: 3n, maxReplicas: 5n, name: 'web' } }),
      'cel-js@0.8.2': speed(celjsCst, { self: { replicas: 3, maxReplicas: 5, name: 'web' } }),
    },
  }),
)
