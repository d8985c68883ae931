// Kubernetes cost cases: estimated and runtime costs equal to the listed figures, not below the baseline.

import t from 'tap'
import { readFileSync } from 'node:fs'
import { createSandbox } from '../sandbox.js'
import { runCostCases } from './cost-cases.js'

const baseline = JSON.parse(readFileSync(new URL('./baseline.json', import.meta.url), 'utf8')) as {
  k8sCost: { estimate: number; runtime: number }
}

t.test('cost figures match Kubernetes for at least the baseline number of cases', async (t) => {
  const sb = await createSandbox({ deadlineMs: 5000 })
  t.teardown(() => sb.dispose())
  const out = runCostCases(sb)
  const estimate = out.filter((o) => o.estimateOk).length
  const runtime = out.filter((o) => o.runtimeOk).length
  const byTest = new Map<string, [number, number, number]>()
  for (const o of out) {
    const row = byTest.get(o.test) ?? [0, 0, 0]
    row[0]++
    if (o.estimateOk) row[1]++
    if (o.runtimeOk) row[2]++
    byTest.set(o.test, row)
  }
  t.comment('\n| upstream test | cases | estimate equal | runtime equal |\n|---|---|---|---|\n' + [...byTest].map(([k, [n, e, r]]) => `| ${k} | ${n} | ${e} | ${r} |`).join('\n'))
  t.ok(estimate >= baseline.k8sCost.estimate, `estimated cost equal in ${estimate}/${out.length} (baseline ${baseline.k8sCost.estimate})`)
  t.ok(runtime >= baseline.k8sCost.runtime, `runtime cost equal in ${runtime}/${out.length} (baseline ${baseline.k8sCost.runtime})`)
})

t.test('runtime cost of list, regex, URL and string functions equals Kubernetes figures', async (t) => {
  const sb = await createSandbox({ deadlineMs: 5000 })
  t.teardown(() => sb.dispose())
  const core = runCostCases(sb).filter((o) => /TestListsCost|TestIndexOfCost|TestIncludesCost|TestURLsCost/.test(o.test))
  t.same(core.filter((o) => !o.runtimeOk).map((o) => `${o.expr}: ${o.detail}`), [])
})
