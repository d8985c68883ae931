// Kubernetes cost cases: every estimated and runtime cost equals the figure Kubernetes lists.

import t from 'tap'
import { createSandbox } from '../sandbox.js'
import { runCostCases } from './cost-cases.js'

t.test('estimated and runtime costs equal the Kubernetes figures in every case', async (t) => {
  const sb = await createSandbox({ deadlineMs: 5000 })
  t.teardown(() => sb.dispose())
  const out = runCostCases(sb)
  const byTest = new Map<string, [number, number, number]>()
  for (const o of out) {
    const row = byTest.get(o.test) ?? [0, 0, 0]
    row[0]++
    if (o.estimateOk) row[1]++
    if (o.runtimeOk) row[2]++
    byTest.set(o.test, row)
  }
  const estimate = out.filter((o) => o.estimateOk).length
  const runtime = out.filter((o) => o.runtimeOk).length
  t.comment(
    '\n| upstream test | cases | estimate equal | runtime equal |\n|---|---|---|---|\n' +
      [...byTest].map(([k, [n, e, r]]) => `| ${k} | ${n} | ${e} | ${r} |`).join('\n') +
      `\n| **total** | ${out.length} | ${estimate} | ${runtime} |`,
  )
  t.ok(out.length >= 126, `${out.length} cost cases read`)
  for (const o of out) {
    t.ok(o.estimateOk && o.runtimeOk, `${o.test}: ${o.expr}`, { detail: o.detail })
  }
})
