// The Kubernetes CEL library cases (lists, regex, URLs, string extensions): every case must pass.

import t from 'tap'
import { createSandbox, type CelEnvironment } from '../sandbox.js'
import type { StructuralSchema } from '../../apiserver/schema/types.js'
import type { TaggedValue } from '../values.js'
import { readConformanceJson, toOrchSchema } from './data.js'

interface Case {
  expr: string
  expect?: unknown
  error?: string
  errorKind?: 'compile' | 'runtime'
  expectType?: 'int' | 'double'
  area: string
  self?: unknown
  selfSchema?: unknown
}

/** Whether a tagged CEL value equals the JSON expectation (numbers are int unless said double). */
export function matchesJson(v: TaggedValue, expect: unknown, expectType?: string): boolean {
  if (typeof expect === 'number') {
    if ((expectType ?? (Number.isInteger(expect) ? 'int' : 'double')) === 'int') return v.t === 'int' && v.v === String(expect)
    return v.t === 'double' && Number(v.v) === expect
  }
  if (typeof expect === 'boolean') return v.t === 'bool' && v.v === expect
  if (typeof expect === 'string') return v.t === 'string' && v.v === expect
  if (expect === null) return v.t === 'null'
  if (Array.isArray(expect)) return v.t === 'list' && v.v.length === expect.length && v.v.every((x, i) => matchesJson(x, expect[i]))
  return false
}

/** The core of an upstream error text, without Kubernetes' wrapping. */
function coreError(e: string): string {
  return e.replace(/^compile error: /, '').replace(/^program instantiation failed: /, '').split(':')[0]
}

const cases = readConformanceJson<Case[]>('cel-k8s-library/cel_k8s_library_cases.json')

t.test('every Kubernetes library case passes', async (t) => {
  const sb = await createSandbox({ deadlineMs: 2000 })
  t.teardown(() => sb.dispose())
  const failures: string[] = []
  for (const c of cases) {
    const env: CelEnvironment = { variables: {} }
    if (c.self !== undefined) env.variables.self = { schema: toOrchSchema(c.selfSchema ?? { type: 'object' }) as StructuralSchema }
    const vars = c.self !== undefined ? { self: c.self } : {}
    let outcome: string
    try {
      const p = sb.compile(c.expr, env)
      try {
        const r = p.evaluate(vars)
        if (c.error) outcome = `expected error "${c.error}", got ${JSON.stringify(r.tagged)}`
        else if (!matchesJson(r.tagged, c.expect ?? true, c.expectType)) outcome = `expected ${JSON.stringify(c.expect)}, got ${JSON.stringify(r.tagged)}`
        else continue
      } catch (err) {
        const msg = (err as Error).message
        if (c.error && c.errorKind !== 'compile' && msg.includes(coreError(c.error))) continue
        outcome = `runtime error: ${msg.split('\n')[0]}`
      }
    } catch (err) {
      const msg = (err as Error).message
      if (c.error && c.errorKind !== 'runtime' && /no matching overload|no such overload|found no/.test(msg) && /no matching overload/.test(c.error)) continue
      if (c.error && c.errorKind !== 'runtime' && msg.includes(coreError(c.error))) continue
      outcome = `compile error: ${msg.split('\n')[0]}`
    }
    failures.push(`${c.expr}: ${outcome}`)
  }
  t.same(failures, [], `${cases.length - failures.length}/${cases.length} cases pass`)
})
