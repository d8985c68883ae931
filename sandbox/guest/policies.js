// A request's admission policies run inside the guest in one crossing: plans defined once and kept by key, each
// policy driven by policy.js over the guest's own programs, variables kept as CEL values between its steps.

import { Interruption, PER_POLICY_COST, evaluatePolicy, referencedVariables } from './policy.js'

/** More plans than this and the table starts over (the host re-sends what it needs: see sandbox/policy-batch.ts). */
const MAX_PLANS = 4096

/**
 * `deps`: the program table, the variables of the request's generation bound for a program (`boundContext`), the
 * metered evaluation (`runProgram`), a JSON value converted for a declared variable (`convertVariable`), the
 * library's root context of a program over a variables object (`rootContext`, undefined until the program ran once).
 */
export function createPolicyRunner({ programs, boundContext, runProgram, convertVariable, rootContext }) {
  const plans = new Map()

  /** `spec`: { m: [[name, id]], v: [[name, id]], val: [[id, message, messageId, reason]], a: [[key, id]] }. */
  function definePlan(key, spec) {
    const ids = []
    const envs = new Set()
    const program = (id) => {
      const p = programs.get(id)
      if (!p) throw new Error(`no program ${id}`)
      ids.push(id)
      envs.add(p.e)
      p.variableNames ??= referencedVariables(p.expression)
      p.requestOnly ??= readsRequestOnly(p)
      return p
    }
    const plan = {
      ids,
      envs: undefined,
      matchConditions: spec.m.map(([name, id]) => ({ name, program: program(id) })),
      variables: new Map(spec.v.map(([name, id]) => [name, program(id)])),
      validations: spec.val.map(([id, message, messageId, reason]) => ({
        program: program(id),
        message: message ?? undefined,
        messageProgram: messageId === null ? undefined : program(messageId),
        reason: reason ?? undefined,
      })),
      auditAnnotations: spec.a.map(([key, id]) => ({ key, program: program(id) })),
    }
    // an array (indexed loops per request), made once the programs above have named their environments
    plan.envs = [...envs]
    if (plans.size >= MAX_PLANS) plans.clear()
    plans.set(key, plan)
  }

  /** A released program takes the plans that use it along: they can no longer run. */
  function released(ids) {
    const gone = new Set(ids)
    for (const [key, plan] of plans) if (plan.ids.some((id) => gone.has(id))) plans.delete(key)
  }

  /**
   * `req`: { gen, vars?, define?: { key: spec }, items: [[planKey, params, failOnError]] }. Answers each policy's
   * outcome, `1` for matched without failures or annotations; SANDBOX_RETRY_WITH_PLANS when a plan is not known,
   * SANDBOX_RETRY_WITH_VARS when the variables are not cached.
   */
  function evaluatePolicies(req) {
    try {
      for (const key of Object.keys(req.define ?? {})) definePlan(Number(key), req.define[key])
    } catch (err) {
      return { ok: false, code: 'SANDBOX_ERR_INTERNAL', message: err.message }
    }
    // indexed loops: QuickJS runs a destructuring for-of several times slower, and this runs per policy
    const items = []
    for (let i = 0; i < req.items.length; i++) {
      const [key, params, failOnError] = req.items[i]
      const plan = plans.get(key)
      if (!plan) return { ok: false, code: 'SANDBOX_RETRY_WITH_PLANS', message: `plan ${key} is not known` }
      items.push({ plan, params, failOnError })
    }
    // the request's variables bound once per environment (an input error fails each expression that needs them),
    // in a context of the request's own: each policy sets its params there, each evaluation its `variables`
    const bases = new Map()
    for (let i = 0; i < items.length; i++) {
      const envs = items[i].plan.envs
      for (let j = 0; j < envs.length; j++) {
        const e = envs[j]
        if (bases.has(e)) continue
        const bound = boundContext({ e }, req)
        if (!bound.ok && bound.code === 'SANDBOX_RETRY_WITH_VARS') return bound
        bases.set(e, bound.ok ? { ctx: { ...bound.ctx }, item: -1, params: undefined, roots: new Map() } : { error: bound.message })
      }
    }
    let current = 0
    // results of programs that read only the request's own variables, by program: the same in every policy
    let shared
    const evaluate = (p, variables, costLimit) => {
      const known = p.requestOnly ? shared?.get(p) : undefined
      // a result is reused when its cost fits this call's limit (else the run would stop on cost: it runs again)
      if (known !== undefined && known.cost <= costLimit) return known
      const base = bases.get(p.e)
      if (base.error !== undefined) throw new Error(base.error)
      const ctx = base.ctx
      if (base.item !== current) {
        base.item = current
        // params converted once per distinct value: policies without params all have null
        const params = items[current].params
        if (p.e.vars.params && (params !== base.params || !('params' in ctx))) {
          ctx.params = convertVariable(p.e, 'params', params)
          base.params = params
        }
      }
      ctx.variables = variables
      // one root context per registry for the request: it reads the variables object as it is at each call, and
      // caches conversions only of message-typed variables, which stay the same for the whole request
      let root = p.ev === undefined ? undefined : base.roots.get(p.ev.registry)
      if (root === undefined && p.ev !== undefined) base.roots.set(p.ev.registry, (root = rootContext(p, ctx)))
      let r
      try {
        r = runProgram(p, ctx, costLimit, root)
      } catch (err) {
        // a resource limit (memory, stack) fails the whole crossing: the host then runs each expression in a
        // crossing of its own, for its own verdict; the policy's rules must not take it as a CEL error
        throw new Interruption(err)
      }
      if (!r.ok) throw new Error(r.message)
      if (p.requestOnly) (shared ??= new Map()).set(p, r)
      return r
    }
    const outcomes = []
    for (; current < items.length; current++) {
      let out
      try {
        out = evaluatePolicy(items[current].plan, items[current].failOnError, evaluate, PER_POLICY_COST)
      } catch (err) {
        throw err instanceof Interruption ? err.cause : err
      }
      const plain = out.matched && out.failures.length === 0 && (items[current].plan.auditAnnotations.length === 0 || isEmpty(out.auditAnnotations))
      outcomes.push(plain ? 1 : out)
    }
    return { ok: true, outcomes }
  }

  return { evaluatePolicies, released }
}

/**
 * True when a program reads neither `params` nor `variables` (what differs between the policies of one request), so
 * CEL, having no side effects, gives it the same value and cost in every policy of the request.
 */
function readsRequestOnly(p) {
  const reads = p.reads
  if (reads === undefined) return false
  const read = (name) => reads.whole.includes(name) || (reads.projection !== undefined && reads.projection[name] !== undefined)
  return !read('params') && !read('variables')
}

function isEmpty(o) {
  for (const _ in o) return false
  return true
}
