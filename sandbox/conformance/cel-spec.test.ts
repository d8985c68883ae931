// cel-spec conformance: per-file pass counts must not fall below the recorded baseline (baseline.json).

import t from 'tap'
import { readFileSync } from 'node:fs'
import { createSandbox } from '../sandbox.js'
import { runConformanceFile, CONFORMANCE_FILES, type FileResult } from './cel-spec.js'

const baseline = JSON.parse(readFileSync(new URL('./baseline.json', import.meta.url), 'utf8')) as {
  celSpec: Record<string, number>
}

t.test('cel-spec conformance does not regress below the baseline', async (t) => {
  const sb = await createSandbox({ deadlineMs: 5000 })
  t.teardown(() => sb.dispose())
  const rows: FileResult[] = CONFORMANCE_FILES.map((f) => runConformanceFile(sb, f))
  const table = ['| file | tests | pass | fail | not applicable |', '|---|---|---|---|---|']
  for (const r of rows) table.push(`| ${r.file} | ${r.total} | ${r.pass} | ${r.fail} | ${r.notApplicable} |`)
  const sum = (k: 'total' | 'pass' | 'fail' | 'notApplicable') => rows.reduce((a, r) => a + r[k], 0)
  table.push(`| **total** | ${sum('total')} | ${sum('pass')} | ${sum('fail')} | ${sum('notApplicable')} |`)
  t.comment('\n' + table.join('\n'))
  for (const r of rows) {
    t.ok(r.pass >= (baseline.celSpec[r.file] ?? 0), `${r.file}: ${r.pass} pass (baseline ${baseline.celSpec[r.file]})`)
  }
})
