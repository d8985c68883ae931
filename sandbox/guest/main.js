// Guest entry (runs inside QuickJS): environments, compiled programs and metered evaluation behind a JSON API.
//
// The host calls `__orch.<fn>(jsonString)` and gets a JSON string back: one crossing per call, whatever
// the size of the input. Programs stay compiled in this context; the host refers to them by id.
// Module-level state here is per sandbox: every sandbox instantiates these modules in its own QuickJS
// context (the patched library prototypes, caches and program table are never shared).

import { Optional } from 'cel-lib/optional.js'
import { Environment } from 'cel-lib/evaluator.js'
import { installMeter, installCheckerHook, beginRoot, finishRoot, CostLimitError } from './cost.js'
import { TypeChecker } from 'cel-lib/type-checker.js'
import { RootContext } from 'cel-lib/registry.js'
import { registerKubernetesLibraries, deepEqual } from './k8s-lib.js'
import { createSchemaTypes } from './schema.js'
import { encode, fromJson } from './values.js'
import { estimateCost } from './estimate.js'
import { compileRegex } from './regex.js'
import { wrapListOperators } from './listtypes.js'
import { createValidator } from './validate.js'
import { compileToJs } from './jit.js'
import { overrideHandlers } from './overrides.js'
import { celGoIssue, formatIssue } from './celgo-errors.js'
import { projectionOf } from './projection.js'
import { createPolicyRunner } from './policies.js'

const meter = { cost: 0, limit: Infinity, stack: [], vars: undefined }
/** Compiled programs read root variables from meter.vars (the plain object runProgram was given). */
const NO_VARS = Object.create(null)
const environments = new Map()
const programs = new Map()
/** The converted variables of the host's current generation, per environment (see sandbox.ts). */
let boundVars = { gen: -1, byEnv: new Map() }
let nextId = 1

/** Hooks metering into the library's Evaluator, which is reachable only as `this` of a function call. */
function hookEvaluator() {
  let captured
  const env = new Environment().registerFunction('orchProbe(): bool', function () {
    captured = this
    return true
  })
  env.evaluate('orchProbe()')
  installMeter(Object.getPrototypeOf(captured), meter)
}
hookEvaluator()
installCheckerHook(TypeChecker.prototype)

const hostAuthorize = (req) => globalThis.__hostAuthorize(req)

/** Builds (or reuses) the Environment for a declaration spec: {variables: {name: {type?, schema?}}, definitions?}. */
function environmentFor(spec) {
  const key = JSON.stringify(spec)
  let e = environments.get(key)
  if (e) return e
  const env = new Environment({ enableOptionalTypes: spec.optionals !== false, homogeneousAggregateLiterals: spec.homogeneousLiterals !== false })
  const libs = registerKubernetesLibraries(env, { authorize: spec.authorizer ? hostAuthorize : undefined })
  const types = createSchemaTypes(env, spec.definitions ?? {}, `orch.T${environments.size}.Object`)
  const vars = {}
  for (const [name, decl] of Object.entries(spec.variables ?? {})) {
    if (!decl) continue
    const inner = decl.schema ? types.typeOf(decl.schema) : decl.type ?? 'dyn'
    const type = decl.optional ? `optional<${inner}>` : inner
    env.registerVariable(name, type)
    // a schema variable's converter is built once here (the per-call work is then the conversion itself)
    vars[name] = { decl, type, convert: decl.schema ? types.converterFor(decl.schema) : undefined }
  }
  const optionalNames = Object.keys(vars).filter((n) => vars[n].decl.optional)
  e = { env, types, vars, libs, optionalNames }
  environments.set(key, e)
  return e
}

function errorOut(code, err, extra = {}) {
  const offset = err?.range?.start ?? err?.node?.pos
  const message = err?.summary ?? String(err?.message ?? err)
  return { ok: false, code, message, offset, ...extra }
}

/** A compile failure, with `issues`: the same error as cel-go's Issues.String() prints it. */
function compileError(code, err, expr, phase) {
  const out = errorOut(code, err)
  const issue = celGoIssue(expr, err, phase)
  return { ...out, issues: formatIssue(expr, issue.offset, issue.message) }
}

/** QuickJS's own stack check (setMaxStackSize) raises a catchable InternalError; the guest stays sound. */
const isStackOverflow = (err) => err instanceof InternalError && /stack overflow/.test(err.message)

/** Errors QuickJS raises for resource limits must reach the host untouched (they are not CEL errors). */
function rethrowIfFatal(err) {
  if (err instanceof InternalError) throw err
  if (err instanceof RangeError && /stack/i.test(err.message)) throw err
}

function compile(req) {
  let e
  try {
    e = environmentFor(req.env)
  } catch (err) {
    rethrowIfFatal(err)
    return errorOut('CEL_ERR_TYPE_CHECK', err)
  }
  let parsed
  let checked
  try {
    parsed = e.env.parse(req.expr)
    checked = parsed.check()
  } catch (err) {
    if (isStackOverflow(err)) return compileError('CEL_ERR_COMPILE', { message: 'expression is nested too deeply' }, req.expr, 'limit')
    rethrowIfFatal(err)
    return compileError('CEL_ERR_COMPILE', err, req.expr, parsed ? 'check' : 'parse')
  }
  if (!checked.valid) {
    if (isStackOverflow(checked.error)) return compileError('CEL_ERR_COMPILE', { message: 'expression is nested too deeply' }, req.expr, 'limit')
    rethrowIfFatal(checked.error)
    return compileError('CEL_ERR_TYPE_CHECK', checked.error, req.expr, 'check')
  }
  wrapListOperators(parsed.ast)
  overrideHandlers(parsed.ast)
  const badRegex = checkConstantRegexes(parsed.ast)
  if (badRegex) return compileError('CEL_ERR_COMPILE', badRegex, req.expr, 'regex')
  let estimate
  try {
    estimate = estimateCost(parsed.ast, e, req.estimator ?? {})
  } catch (err) {
    rethrowIfFatal(err)
    estimate = { min: 0, max: 18446744073709551615 }
  }
  // Compiled to one JavaScript function with inlined cost counters when the compiler covers the root;
  // installed as the root node's evaluation, so the library still supplies its evaluator and context.
  let jit
  if (!req.interpret) {
    try {
      jit = compileToJs(parsed.ast, meter)
    } catch (err) {
      rethrowIfFatal(err)
      jit = undefined
    }
  }
  const id = nextId++
  const program = { expression: req.expr, parsed, e, compiled: Boolean(jit), jit, ev: undefined }
  // the library's evaluator is reachable only through its call of the root node; kept for direct calls (runProgram)
  if (jit) parsed.ast.evaluate = (ev, _ast, ctx) => ((program.ev ??= ev), jit(ev, ctx, meter.vars ?? NO_VARS))
  programs.set(id, program)
  let reads
  try {
    reads = projectionOf(parsed.ast, e)
  } catch (err) {
    rethrowIfFatal(err)
    reads = undefined
  }
  program.reads = reads
  return { ok: true, id, type: checked.type, estimate, compiled: Boolean(jit), projection: reads?.projection, reads }
}

const REGEX_FUNCTIONS = new Set(['matches', 'find', 'findAll'])

/** Constant patterns are compiled when the program is built, as cel-go does, so bad ones fail compile. */
function checkConstantRegexes(node) {
  if (!node || typeof node !== 'object') return undefined
  if (Array.isArray(node)) {
    for (const n of node) {
      const r = checkConstantRegexes(n)
      if (r) return r
    }
    return undefined
  }
  if (!node.op) return undefined
  if ((node.op === 'rcall' || node.op === 'call') && REGEX_FUNCTIONS.has(node.args[0])) {
    const args = node.op === 'rcall' ? node.args[2] : node.args[1].slice(1)
    const pattern = args[0]
    if (pattern?.op === 'value' && typeof pattern.args === 'string') {
      try {
        compileRegex(pattern.args)
      } catch (err) {
        return Object.assign(err, { summary: err.message, range: { start: pattern.start ?? pattern.pos } })
      }
    }
  }
  const a = node.args
  if (Array.isArray(a)) return checkConstantRegexes(a.filter((x) => x && typeof x === 'object'))
  if (a && typeof a === 'object') return a.op ? checkConstantRegexes(a) : checkConstantRegexes([a.iterable, a.init, a.step].filter(Boolean))
  return node.__alt ? checkConstantRegexes(node.__alt) : undefined
}

function bindVariables(e, vars) {
  const ctx = {}
  if (vars) {
    const names = Object.keys(vars)
    for (let i = 0; i < names.length; i++) {
      const name = names[i]
      const value = vars[name]
      const v = hasOwn(e.vars, name) ? e.vars[name] : undefined
      if (!v) throw Object.assign(new Error(`undeclared variable ${name}`), { inputError: true })
      if (v.decl.optional) ctx[name] = value === undefined || value === null ? Optional.none() : Optional.of(convertOne(e, v, value))
      else ctx[name] = convertOne(e, v, value)
    }
  }
  for (const name of e.optionalNames) if (!(name in ctx)) ctx[name] = Optional.none()
  return ctx
}

const hasOwn = (o, k) => Object.prototype.hasOwnProperty.call(o, k)

function convertOne(e, v, value) {
  if (e.libs.Authorizer && v.type === 'kubernetes.authorization.Authorizer') return new e.libs.Authorizer(value?.user ?? '')
  if (v.convert) return v.convert(value)
  return fromJson(value, v.type)
}

/**
 * Runs one program with a budget; the shared meter is reset here (one evaluation at a time). `root`: a RootContext
 * of the program's registry over `ctx` to reuse (see policies.js), else one is made for the call.
 */
export function runProgram(p, ctx, limit, root) {
  meter.cost = 0
  meter.limit = limit ?? Infinity
  meter.stack.length = 0
  meter.vars = ctx
  try {
    if (p.compiled) {
      // what the library's program call does for a checked AST (a RootContext over ctx, the root's evaluation),
      // without its two wrapper calls once the evaluator is known
      const value = p.ev !== undefined ? p.jit(p.ev, root ?? new RootContext(p.ev.registry, ctx), ctx) : p.parsed(ctx)
      return { ok: true, value, cost: meter.cost }
    }
    beginRoot(p.parsed.ast)
    const value = p.parsed(ctx)
    finishRoot(p.parsed.ast, value, meter)
    return { ok: true, value, cost: meter.cost }
  } catch (err) {
    meter.stack.length = 0
    rethrowIfFatal(err)
    if (err instanceof CostLimitError) return { ok: false, code: 'CEL_ERR_COST_BUDGET', message: err.message, cost: meter.cost }
    return { ...errorOut('CEL_ERR_EVAL', err), cost: meter.cost }
  } finally {
    meter.stack.length = 0
    meter.vars = undefined
  }
}

function evaluate(req) {
  const p = programs.get(req.id)
  if (!p) return { ok: false, code: 'SANDBOX_ERR_INTERNAL', message: `no program ${req.id}` }
  const bound = boundContext(p, req)
  if (!bound.ok) return bound
  return runWithExtra(p, bound.ctx, req.extra, req.limit)
}

/** The variables of generation `req.gen` (or `req.vars`) converted for the program's environment. */
function boundContext(p, req) {
  if (req.gen !== undefined) {
    // the variables of generation `gen` (the same whether sent again or not), converted for this environment?
    const cached = boundVars.gen === req.gen ? boundVars.byEnv.get(p.e) : undefined
    if (cached) return { ok: true, ctx: cached }
    if (req.vars === undefined) return { ok: false, code: 'SANDBOX_RETRY_WITH_VARS', message: 'variables not cached' }
  }
  let ctx
  try {
    ctx = bindVariables(p.e, req.vars)
  } catch (err) {
    rethrowIfFatal(err)
    return { ok: false, code: 'SANDBOX_ERR_INPUT', message: err.message }
  }
  if (req.gen !== undefined) {
    // only one generation is kept, so at most one object's converted values stay alive per environment
    if (boundVars.gen !== req.gen) boundVars = { gen: req.gen, byEnv: new Map() }
    boundVars.byEnv.set(p.e, ctx)
  }
  return { ok: true, ctx }
}

/** Runs `p` over `ctx` with `extra` variables bound on top for this call only (the cached context is not changed). */
function runWithExtra(p, ctx, extra, limit) {
  if (extra !== undefined) {
    try {
      ctx = { ...ctx }
      for (const [name, value] of Object.entries(extra)) {
        const v = p.e.vars[name]
        if (!v) throw Object.assign(new Error(`undeclared variable ${name}`), { inputError: true })
        ctx[name] = v.decl.optional ? (value === undefined || value === null ? Optional.none() : Optional.of(convertOne(p.e, v, value))) : convertOne(p.e, v, value)
      }
    } catch (err) {
      rethrowIfFatal(err)
      return { ok: false, code: 'SANDBOX_ERR_INPUT', message: err.message }
    }
  }
  const r = runProgram(p, ctx, limit)
  return r.ok ? { ok: true, value: encode(r.value), cost: r.cost } : r
}

/**
 * Several programs over the same variables (generation `gen`, or `vars`) in one crossing, each with its own extra
 * variables and cost limit: `steps: [{ id, extra, limit }]`. Answers each step's result as evaluate would.
 */
function evaluateMany(req) {
  const results = []
  for (const step of req.steps) {
    const p = programs.get(step.id)
    if (!p) {
      results.push({ ok: false, code: 'SANDBOX_ERR_INTERNAL', message: `no program ${step.id}` })
      continue
    }
    const bound = boundContext(p, req)
    if (!bound.ok && bound.code === 'SANDBOX_RETRY_WITH_VARS') return bound
    results.push(bound.ok ? runWithExtra(p, bound.ctx, step.extra, step.limit) : bound)
  }
  return { ok: true, results }
}

function release(req) {
  for (const id of req.ids) programs.delete(id)
  policies.released(req.ids)
  return { ok: true }
}

const policies = createPolicyRunner({
  programs,
  boundContext,
  runProgram,
  convertVariable: (e, name, value) => convertOne(e, e.vars[name], value),
  rootContext: (p, ctx) => (p.ev !== undefined ? new RootContext(p.ev.registry, ctx) : undefined),
})

const validator = createValidator({ compile, programs, runProgram, encode, deepEqual })

/** A result as JSON; a bool result (most rules) is written without building and serializing an object. */
function resultJson(r) {
  return r.ok && r.value.t === 'bool' ? `{"ok":true,"value":{"t":"bool","v":${r.value.v}},"cost":${r.cost}}` : JSON.stringify(r)
}

const api = { compile, evaluate, evaluateMany, release, evaluatePolicies: policies.evaluatePolicies, ...validator }
globalThis.__orch = {}
for (const [name, fn] of Object.entries(api)) globalThis.__orch[name] = (json) => JSON.stringify(fn(JSON.parse(json)))
/**
 * The hot path: evaluate(id, gen, limit) over the cached variables of generation `gen`, or with `varsJson` (the
 * variables' JSON text) when they are not cached; arguments are plain numbers and one string, not a request JSON.
 */
globalThis.__orch.evaluateArgs = (id, gen, limit, varsJson) =>
  resultJson(evaluate({ id, gen, limit, vars: varsJson === undefined ? undefined : JSON.parse(varsJson) }))
/**
 * evaluateProjected(id, limit, varsJson?): the program over its projected variables (only what it reads), which it
 * keeps converted while they are small; without `varsJson`, over the ones it kept (the host saw the same JSON).
 */
globalThis.__orch.evaluateProjected = (id, limit, varsJson) => resultJson(evaluateProjected(id, limit, varsJson))

/** Projected variables up to this many characters of JSON stay converted with their program (one set each). */
const PROJECTED_CACHE_CHARS = 4096

function evaluateProjected(id, limit, varsJson) {
  const p = programs.get(id)
  if (!p) return { ok: false, code: 'SANDBOX_ERR_INTERNAL', message: `no program ${id}` }
  if (varsJson === undefined) {
    if (!p.projectedCtx) return { ok: false, code: 'SANDBOX_RETRY_WITH_VARS', message: 'variables not cached' }
    return runWithExtra(p, p.projectedCtx, undefined, limit)
  }
  p.projectedCtx = undefined
  let ctx
  try {
    ctx = bindVariables(p.e, JSON.parse(varsJson))
  } catch (err) {
    rethrowIfFatal(err)
    return { ok: false, code: 'SANDBOX_ERR_INPUT', message: err.message }
  }
  if (varsJson.length <= PROJECTED_CACHE_CHARS) p.projectedCtx = ctx
  return runWithExtra(p, ctx, undefined, limit)
}
