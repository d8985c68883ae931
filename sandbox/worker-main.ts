// Worker-thread side of the off-event-loop sandbox: one QuickJS sandbox per worker, driven by messages.

import { parentPort, workerData } from 'node:worker_threads'
import { createSandbox, type Program, type SandboxLimits } from './sandbox.js'
import { compileValidationRules, evaluateValidationRules, type CompiledValidation, type CompileValidationOptions } from './validation.js'
import type { StructuralSchema } from '../apiserver/schema/types.js'
import { SandboxError } from './errors.js'
import type { ExpressionPayload, WireProgram, WorkerRequest } from './worker.js'
import { planPrograms, type PolicyPlan } from './policy-evaluation.js'

/** A policy plan over this thread's programs, with the keys and programs it was made from. */
interface ThreadPlan { plan: PolicyPlan<Program>; keys: string[]; programs: Program[] }

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
    return { type: p.type, estimatedCost: p.estimatedCost, compiled: p.compiled, reads: p.reads }
  }
  let next = 1
  const plans = new Map<string, { wire: PolicyPlan<WireProgram>; built?: ThreadPlan }>()

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
        for (const [key, wire] of Object.entries(m.plans ?? {})) plans.set(key, { wire })
        // The request's variables are one object for every step, so the sandbox converts them once per request, and
        // all the policies run in one guest crossing (Sandbox.evaluatePolicies). They arrive already cut down to what
        // the batch's programs read (the pool projects them before copying them here).
        const items = m.items.map(({ plan, params, failOnError }) => ({ ...threadPlan(plan), params, failOnError }))
        return sandbox.evaluatePolicies(m.base, items)
      }
      case 'dropPlans':
        plans.clear()
        return undefined
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
   * The plan under `key` over this thread's programs, made again when one of them was compiled again since (a
   * program dropped and sent anew): the sandbox keeps what it sent into the guest per plan object.
   */
  function threadPlan(key: string): ThreadPlan {
    const entry = plans.get(key)
    if (entry === undefined) throw new SandboxError('SANDBOX_ERR_INTERNAL', `policy plan ${key} is not known to this worker`)
    const b = entry.built
    if (b !== undefined && b.keys.every((k, i) => keyedPrograms.get(k) === b.programs[i])) return b
    const keys = planPrograms(entry.wire).map((w) => w.key)
    const p = (w: WireProgram): Program => {
      const program = keyedPrograms.get(w.key)
      if (program === undefined) throw new SandboxError('SANDBOX_ERR_INTERNAL', 'expression is not known to this worker')
      return program
    }
    const plan: PolicyPlan<Program> = {
      matchConditions: entry.wire.matchConditions.map((c) => ({ name: c.name, program: p(c.program) })),
      variables: new Map([...entry.wire.variables].map(([name, v]) => [name, p(v)])),
      validations: entry.wire.validations.map((v) => ({ ...v, program: p(v.program), messageProgram: v.messageProgram && p(v.messageProgram) })),
      auditAnnotations: entry.wire.auditAnnotations.map((a) => ({ key: a.key, program: p(a.program) })),
    }
    entry.built = { plan, keys, programs: keys.map((k) => keyedPrograms.get(k)!) }
    return entry.built
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
