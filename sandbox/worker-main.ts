// Worker-thread side of the off-event-loop sandbox: one QuickJS sandbox per worker, driven by messages.

import { parentPort, workerData } from 'node:worker_threads'
import { createSandbox, type Program, type SandboxLimits } from './sandbox.js'
import { compileValidationRules, evaluateValidationRules, type CompiledValidation } from './validation.js'
import { SandboxError } from './errors.js'
import type { WorkerRequest } from './worker.js'

const port = parentPort!
const sandbox = await createSandbox(workerData.limits as SandboxLimits).catch((err: Error) => {
  port.postMessage({ ready: false, error: { code: 'SANDBOX_ERR_INTERNAL', message: err.message } })
  return undefined
})

if (sandbox) {
  const programs = new Map<number, Program>()
  const ruleSets = new Map<number, CompiledValidation>()
  let next = 1

  const handle = (m: WorkerRequest): unknown => {
    switch (m.op) {
      case 'compile': {
        const p = sandbox.compile(m.expression, m.environment, m.options)
        const id = next++
        programs.set(id, p)
        return { id, type: p.type, estimatedCost: p.estimatedCost, compiled: p.compiled }
      }
      case 'evaluate': {
        const p = programs.get(m.id)
        if (!p) throw new SandboxError('SANDBOX_ERR_INTERNAL', 'program was released')
        return p.evaluate(m.variables, m.options)
      }
      case 'release':
        programs.get(m.id)?.release()
        programs.delete(m.id)
        return undefined
      case 'compileRules': {
        const r = compileValidationRules(m.schema, { ...m.options, sandbox })
        if (!r.ok) return r
        const id = next++
        ruleSets.set(id, r.compiled)
        return { ok: true, id, rules: r.compiled.rules, totalEstimate: r.compiled.totalEstimate }
      }
      case 'validate': {
        const c = ruleSets.get(m.id)
        if (!c) throw new SandboxError('SANDBOX_ERR_INTERNAL', 'rule set was released')
        return evaluateValidationRules(c, m.newObj, m.oldObj)
      }
      case 'releaseRules':
        ruleSets.get(m.id)?.release()
        ruleSets.delete(m.id)
        return undefined
    }
  }

  port.on('message', (m: WorkerRequest & { seq: number }) => {
    try {
      port.postMessage({ seq: m.seq, ok: true, result: handle(m) })
    } catch (err) {
      const e = err as SandboxError
      port.postMessage({ seq: m.seq, ok: false, error: { code: e.code ?? 'SANDBOX_ERR_INTERNAL', message: e.message, position: e.position, cost: e.cost, issues: e.issues } })
    }
  })
  port.postMessage({ ready: true })
}
