// Runs the Kubernetes cost cases (estimated and runtime cost per expression) and reports each mismatch.

import type { Sandbox } from '../sandbox.js'
import { readConformanceJson } from './data.js'

interface CostCase {
  expr: string
  estimatedCost: { min: number; max: number }
  runtimeCost: number
  source: string
}

export interface CostOutcome {
  expr: string
  test: string
  estimateOk: boolean
  runtimeOk: boolean
  detail: string
}

export function runCostCases(sb: Sandbox): CostOutcome[] {
  const file = readConformanceJson<{ cases: CostCase[] }>('cel-k8s-library/cel_k8s_library_costs.json')
  return file.cases.map((c) => {
    const test = c.source.split(':: ')[1] ?? 'unknown'
    try {
      // The upstream cost tests use a plain environment (no homogeneous literals), and their estimator sizes every string of unknown size at 0..12.
      const p = sb.compile(c.expr, { variables: {}, homogeneousLiterals: false }, { unknownStringSize: { min: 0, max: 12 } })
      const estimateOk = p.estimatedCost.min === c.estimatedCost.min && p.estimatedCost.max === c.estimatedCost.max
      let runtime: number | string
      try {
        runtime = p.evaluate({}).cost
      } catch (err) {
        runtime = `error ${(err as Error).message.split('\n')[0]}`
      }
      const runtimeOk = runtime === c.runtimeCost
      const detail = `estimate ${JSON.stringify(p.estimatedCost)} want ${JSON.stringify(c.estimatedCost)}; runtime ${runtime} want ${c.runtimeCost}`
      return { expr: c.expr, test, estimateOk, runtimeOk, detail }
    } catch (err) {
      return { expr: c.expr, test, estimateOk: false, runtimeOk: false, detail: `compile: ${(err as Error).message.split('\n')[0]}` }
    }
  })
}
