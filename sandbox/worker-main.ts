// Worker-thread side of the off-event-loop sandbox: one QuickJS sandbox per worker, driven by messages.

import { parentPort, workerData } from 'node:worker_threads'
import { createSandbox, projectVariables, type Program, type SandboxLimits } from './sandbox.js'
import { compileValidationRules, evaluateValidationRules, type CompiledValidation, type CompileValidationOptions } from './validation.js'
import type { StructuralSchema } from '../apiserver/schema/types.js'
import { SandboxError } from './errors.js'
import type { ExpressionPayload, WorkerRequest } from './worker.js'
import { PER_POLICY_COST, planPrograms, policySteps, runPoliciesSync } from './policy-evaluation.js'

const port = parentPort!
const sandbox = await createSandbox(workerData.limits as SandboxLimits).catch((err: Error) => {
  port.postMessage({ ready: false, error: { code: 'SANDBOX_ERR_INTERNAL', message: err.message } })
  return undefined
})

if (sandbox) {
  const programs = new Map<number, Program>()
  const ruleSets = new Map<number, CompiledValidation>()
  const keyed = new Map<string, CompiledValidation>()
  const compileKeyed = (key: string, schema: StructuralSchema, options: Omit<CompileValidationOptions, 'sandbox'>) => {
    const r = compileValidationRules(schema, { ...options, sandbox })
    if (!r.ok) return r
    keyed.get(key)?.release()
    keyed.set(key, r.compiled)
    return { ok: true, rules: r.compiled.rules, totalEstimate: r.compiled.totalEstimate }
  }
  const keyedPrograms = new Map<string, Program>()
  const compileExprKeyed = (key: string, e: ExpressionPayload) => {
    const p = sandbox.compile(e.expression, e.environment, e.options)
    keyedPrograms.get(key)?.release()
    keyedPrograms.set(key, p)
    return { type: p.type, estimatedCost: p.estimatedCost, compiled: p.compiled }
  }
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
      case 'compileKeyed':
        return compileKeyed(m.key, m.schema, m.options)
      case 'validateKeyed': {
        if (!keyed.has(m.key) && m.rules) {
          const r = compileKeyed(m.key, m.rules.schema, m.rules.options)
          if (!r.ok) throw new SandboxError('SANDBOX_ERR_INTERNAL', 'rules no longer compile')
        }
        const c = keyed.get(m.key)
        if (!c) throw new SandboxError('SANDBOX_ERR_INTERNAL', 'rule set is not known to this worker')
        return evaluateValidationRules(c, m.newObj, m.oldObj)
      }
      case 'compileExprKeyed':
        return compileExprKeyed(m.key, m.expression)
      case 'evaluateExprKeyed': {
        if (!keyedPrograms.has(m.key) && m.expression) compileExprKeyed(m.key, m.expression)
        const p = keyedPrograms.get(m.key)
        if (!p) throw new SandboxError('SANDBOX_ERR_INTERNAL', 'expression is not known to this worker')
        return p.evaluate(m.variables, m.options)
      }
      case 'evaluatePolicies': {
        for (const [key, e] of Object.entries(m.expressions ?? {})) if (!keyedPrograms.has(key)) compileExprKeyed(key, e)
        for (const { plan } of m.items) {
          for (const p of planPrograms(plan)) {
            if (!keyedPrograms.has(p.key)) throw new SandboxError('SANDBOX_ERR_INTERNAL', 'expression is not known to this worker')
          }
        }
        // The request's variables are one object for every step, so the sandbox converts them once per request;
        // the policies advance together, each round of their next steps in one guest crossing (evaluateMany).
        // Only what the batch's programs read of those variables crosses into the guest (projectVariables).
        const base = projectVariables(m.base, m.items.flatMap(({ plan }) => planPrograms(plan).map((p) => keyedPrograms.get(p.key)!)))
        const gens = m.items.map(({ plan, failOnError }) => policySteps(plan, m.base, failOnError, PER_POLICY_COST))
        return runPoliciesSync(gens, (active) => sandbox.evaluateMany(base, active.map(({ index, step }) => {
          const program = keyedPrograms.get(step.program.key)!
          return { program, extra: readExtras(program, m.items[index].params, step.variables), costLimit: step.costLimit }
        })))
      }
      case 'dropExprKeyed':
        keyedPrograms.get(m.key)?.release()
        keyedPrograms.delete(m.key)
        return undefined
      case 'dropKeyed':
        keyed.get(m.key)?.release()
        keyed.delete(m.key)
        return undefined
    }
  }

  /**
   * A step's `params` and `variables`, each only when the program reads it: an unread one would cross into the guest
   * and be converted for nothing (about 6 µs a step). Programs whose reads are unknown get both.
   */
  function readExtras(program: Program, params: unknown, variables: Record<string, unknown>): Record<string, unknown> {
    const reads = program.reads
    if (reads === undefined) return { params, variables }
    const read = (name: string): boolean => reads.whole.includes(name) || reads.projection?.[name] !== undefined
    const extra: Record<string, unknown> = {}
    if (read('params')) extra.params = params
    if (read('variables')) extra.variables = variables
    return extra
  }

  port.on('message', (m: WorkerRequest & { seq: number }) => {
    try {
      port.postMessage({ seq: m.seq, ok: true, result: handle(m) })
    } catch (err) {
      const e = err as SandboxError
      port.postMessage({ seq: m.seq, ok: false, error: { code: e.code ?? 'SANDBOX_ERR_INTERNAL', message: e.message, position: e.position, cost: e.cost, issues: e.issues } })
      // A sandbox closed after a trap answers nothing any more: end the thread so its owner replaces it.
      if (!sandbox.guest.alive()) setImmediate(() => process.exit(1))
    }
  })
  port.postMessage({ ready: true })
}
