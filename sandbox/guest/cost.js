// Guest side (runs inside QuickJS): runtime cost metering with cel-go's and Kubernetes' unit costs.
//
// cel-go counts cost through an observer called after every evaluation step: constants 0, identifiers
// and field selections 1, list literals 10, map literals 30, function calls by overload (see callCost),
// ternary/&&/|| 0. Macros are comprehensions whose hidden accumulator steps also cost (see ITER_COST).
// We reproduce that by wrapping the library evaluator's `run` (called once per AST node) and keeping a
// stack of the values the nodes produced, as cel-go's cost tracker does.

import { Duration } from 'cel-lib/functions.js'

export const STRING_FACTOR = 0.1
export const REGEX_FACTOR = 0.25

const MAX_INT = 9223372036854775807n
const MIN_INT = -9223372036854775808n
const MIN_TIME_MS = -62135596800000 // 0001-01-01T00:00:00Z
const MAX_TIME_MS = 253402300799999 // 9999-12-31T23:59:59.999Z

const rangeError = (msg) => Object.assign(new Error(msg), { celEval: true })

/**
 * CEL's value ranges, checked on every node's result (the base library lets some operations leave
 * them: negating the minimum int, int(double) at the edge, duration and timestamp arithmetic).
 */
export function checkRange(v) {
  if (typeof v === 'bigint') {
    if (v > MAX_INT || v < MIN_INT) throw rangeError('integer overflow')
  } else if (typeof v === 'object' && v !== null) {
    if (v instanceof Date) {
      const t = v.getTime()
      if (!(t >= MIN_TIME_MS && t <= MAX_TIME_MS)) throw rangeError('timestamp out of range')
    } else if (v instanceof Duration) {
      // cel-go durations are Go's time.Duration: int64 nanoseconds (about ±292 years)
      const ns = v.seconds * 1000000000n + BigInt(v.nanos)
      if (ns > MAX_INT || ns < MIN_INT) throw rangeError('duration out of range')
    }
  }
  return v
}

export class CostLimitError extends Error {
  constructor() {
    super('operation cancelled: actual cost limit exceeded')
    this.costLimit = true
  }
}

const HIGH_SURROGATE = /[\uD800-\uDBFF]/
const HIGH_SURROGATES = /[\uD800-\uDBFF]/g

/** cel-go's actualSize: runes of a string, bytes, list or map entries; 1 for everything else. */
export function actualSize(v) {
  if (typeof v === 'string') {
    // Runes, as cel-go counts; past 4096 UTF-16 units the unit count (an upper bound, at most twice the
    // runes) is used, because scanning megabytes in the guest interpreter would cost more than the work.
    if (v.length > 4096 || !HIGH_SURROGATE.test(v)) return v.length
    return v.length - v.match(HIGH_SURROGATES).length
  }
  if (v instanceof Uint8Array) return v.length
  if (Array.isArray(v)) return v.length
  if (v instanceof Map || v instanceof Set) return v.size
  if (v && typeof v === 'object' && (v.constructor === Object || v.constructor === undefined)) return Object.keys(v).length
  return 1
}

const ceil = Math.ceil
const isStr = (v) => typeof v === 'string' || v instanceof Uint8Array

/**
 * A comparison costs ceil(0.1 × the smaller size). Two strings of which one has at most 10 UTF-16 units have at most
 * 10 runes in the smaller, so the cost is 0 when one is empty and 1 otherwise, without counting runes (a regex scan
 * per string, the larger share of a short comparison's time in the guest).
 */
function comparisonCost(x, y) {
  if (typeof x === 'string' && typeof y === 'string') {
    const m = x.length < y.length ? x.length : y.length
    if (m <= 10) return m === 0 ? 0 : 1
  }
  return ceil(Math.min(actualSize(x), actualSize(y)) * STRING_FACTOR)
}

/** Cost of one call: `a` holds the receiver (if any) then the arguments, as cel-go passes them. */
export function callCost(name, a, result) {
  switch (name) {
    case 'has':
    case 'bind':
      return 0
    case '==':
    case '!=':
    case '<':
    case '<=':
    case '>':
    case '>=':
      return comparisonCost(a[0], a[1])
    case '+':
      return isStr(a[0]) ? ceil((actualSize(a[0]) + actualSize(a[1])) * STRING_FACTOR) : 1
    case 'in':
      return Array.isArray(a[1]) ? actualSize(a[1]) : 1
    case 'contains':
      if (Array.isArray(a[1])) return 1 + actualSize(a[1]) * actualSize(a[2])
      if (typeof a[0] !== 'string') return 1
      return ceil(actualSize(a[0]) * STRING_FACTOR) * ceil(actualSize(a[1]) * STRING_FACTOR)
    case 'startsWith':
    case 'endsWith':
      return ceil(actualSize(a[1]) * STRING_FACTOR)
    case 'matches':
    case 'find':
    case 'findAll':
      return ceil((1 + actualSize(a[0])) * STRING_FACTOR) * ceil(actualSize(a[1]) * REGEX_FACTOR)
    case 'string':
    case 'bytes':
      return isStr(a[0]) ? ceil(actualSize(a[0]) * STRING_FACTOR) : 1
    case 'includes':
    case 'isSorted':
    case 'sum':
    case 'max':
    case 'min':
    case 'indexOf':
    case 'lastIndexOf':
      return traversalCost(a[0])
    case 'url':
    case 'isURL':
    case 'lowerAscii':
    case 'upperAscii':
    case 'substring':
    case 'trim':
    case 'quantity':
    case 'isQuantity':
      return ceil(actualSize(a[0]) * STRING_FACTOR)
    case 'quote':
    case 'escapeKey':
      // namespaced: a[0] is the namespace constant
      return ceil(actualSize(a[1]) * STRING_FACTOR)
    case 'replace':
    case 'split':
      return ceil(actualSize(a[0]) * 2 * STRING_FACTOR)
    case 'join':
      return ceil(actualSize(result) * 2 * STRING_FACTOR)
    // sets.*: cel-go's call cost 1 plus the pairwise comparisons
    case 'intersects':
      return 1 + actualSize(a[1]) * actualSize(a[2])
    case 'equivalent':
      return 1 + 2 * actualSize(a[1]) * actualSize(a[2])
    case 'check':
      return 350000
    default:
      return 1
  }
}

export function traversalCost(v) {
  if (typeof v === 'string') return ceil(actualSize(v) * STRING_FACTOR)
  return actualSize(v)
}

/** Calls whose cost never depends on their arguments (cel-go's default of 1). */
export const FIXED_ONE = new Set(['size', 'int', 'uint', 'double', 'duration', 'timestamp', 'dyn', 'type', 'charAt', 'getHours', 'getMinutes', 'getSeconds', 'getFullYear', 'getMonth', 'getDate', 'getDayOfMonth', 'getDayOfWeek', 'getDayOfYear', 'getMilliseconds', 'hasValue', 'value', 'orValue', 'or', 'of', 'none'])

const BINARY = new Set(['==', '!=', '<', '<=', '>', '>=', '+', '-', '*', '/', '%', 'in'])

/**
 * Per-iteration cost of a macro's hidden steps (cel-go's expansion), and the cost of its final result
 * step. all: loop condition `@not_strictly_false(@result)` (2) + `@result &&` (1); exists: condition
 * `@not_strictly_false(!@result)` (3) + `@result ||` (1). The accumulator pushes of map/filter cost
 * 12 (`@result + [x]`: ident 1 + list 10 + add 1), a kept accumulator 1; exists_one's increment 2.
 */
function macroKind(args) {
  if (args.kind === 'quantifier') {
    const v = args.init.args
    if (v === true) return 'all'
    if (v === false) return 'exists'
    return 'exists_one'
  }
  return 'map'
}

/** The value a direct child produced, from the [node, value, ...] pairs it pushed on the stack. */
function valueOf(stack, h, node) {
  for (let i = h; i < stack.length; i += 2) if (stack[i] === node) return stack[i + 1]
  return undefined
}

/**
 * Wraps the evaluator's per-node `run` with metering; `meter` = {cost, limit, stack}. Every node pushes
 * [node, value] after it ran and truncates what its own children pushed, so a call sees exactly its
 * argument values (cel-go keeps the same stack) and nothing is retained after an evaluation.
 */
export function installMeter(proto, meter) {
  const run = proto.run
  proto.run = function meteredRun(ast, ctx) {
    const stack = meter.stack
    const op = ast.op
    if (op === 'value') {
      const v = run.call(this, ast, ctx)
      stack.push(ast, v)
      return v
    }
    const h = stack.length
    const comp = ast.__alt
    const res = checkRange(comp ? runComprehension(this, run, ast, comp, ctx, meter, h) : run.call(this, ast, ctx))
    const c = comp ? 0 : nodeCost(ast, op, stack, h, res)
    stack.length = h
    stack.push(ast, res)
    if (c !== 0) {
      meter.cost += c
      if (meter.cost > meter.limit) throw new CostLimitError()
    }
    return res
  }
}

function nodeCost(ast, op, stack, h, res) {
  switch (op) {
    case 'id':
      // namespace constants (sets, strings, jsonpatch) are resolved at check time in cel-go: free
      return res?.constructor?.celNamespace ? 0 : 1
    case '.':
    case '.?':
    case '[]':
    case '[?]':
      return 1
    case 'list':
      return 10
    case 'map':
      return 30
    case '?:':
      if (ast.__iter) {
        ast.__steps++
        return ast.__iter
      }
      return 0
    case '||':
    case '&&':
      return 0
    case '!_':
    case '-_':
      return 1
    case 'accuPush':
      return 12
    case 'accuValue':
      return 1
    case 'accuInc':
      return 2
  }
  if (op === 'call') {
    const name = ast.args[0]
    if (name === 'has') return hasSelectCost(ast.args[1][0])
    return FIXED_ONE.has(name) ? 1 : callCost(name, ast.args[1].map((n) => valueOf(stack, h, n)), res)
  }
  if (op === 'rcall') {
    const name = ast.args[0]
    if (FIXED_ONE.has(name)) return 1
    return callCost(name, [valueOf(stack, h, ast.args[1]), ...ast.args[2].map((n) => valueOf(stack, h, n))], res)
  }
  if (op === '-' || op === '*' || op === '/' || op === '%') return 1
  if (BINARY.has(op)) return callCost(op, [valueOf(stack, h, ast.args[0]), valueOf(stack, h, ast.args[1])], res)
  return 0
}

/**
 * The library evaluates the root node and a macro's comprehension without going through `run`, so the
 * root's own cost is added here, from the values its children left on the stack.
 */
export function finishRoot(ast, value, meter) {
  checkRange(value)
  const comp = ast.__alt
  const c = comp ? comprehensionCost(comp.args, meter, 0) : nodeCost(ast, ast.op, meter.stack, 0, value)
  meter.cost += c
  if (meter.cost > meter.limit) throw new CostLimitError()
}

/**
 * has(a.b.c): the library evaluates only `a` through `run`; cel-go also charges the selections below the
 * tested one (`.b`), while the presence test itself is free (PresenceTestHasCost(false)).
 */
function hasSelectCost(arg) {
  let n = 0
  for (let node = arg?.args?.[0]; node && (node.op === '.' || node.op === '.?'); node = node.args[0]) n++
  return n
}

/** Marks a quantifier's step node so its hidden per-iteration cost is counted (see nodeCost '?:'). */
function prepareComprehension(args) {
  const kind = (args.__kind ??= macroKind(args))
  const step = args.step
  if (kind === 'all') step.__iter = 3
  else if (kind === 'exists') step.__iter = 4
  step.__steps = 0
}

/** The library runs the root node without `run`: a root macro is prepared here, before evaluation. */
export function beginRoot(ast) {
  if (ast.__alt) prepareComprehension(ast.__alt.args)
}

function runComprehension(ev, run, ast, comp, ctx, meter, h) {
  prepareComprehension(comp.args)
  const res = run.call(ev, ast, ctx)
  meter.cost += comprehensionCost(comp.args, meter, h)
  if (meter.cost > meter.limit) throw new CostLimitError()
  return res
}

function comprehensionCost(args, meter, h) {
  const kind = (args.__kind ??= macroKind(args))
  const step = args.step
  let c = kind === 'exists_one' ? 2 : 1
  // A quantifier that stopped early evaluated one more loop condition than it ran steps.
  if (step.__iter && step.__steps < actualSize(valueOf(meter.stack, h, args.iterable))) c += kind === 'all' ? 2 : 3
  return c
}

/** Records which macro call node stands for which comprehension (the library keeps that link private). */
export function installCheckerHook(proto) {
  const check = proto.check
  const checking = []
  proto.check = function hookedCheck(ast, ctx) {
    const parent = checking[checking.length - 1]
    if (parent && ast.op === 'comprehension' && (parent.op === 'rcall' || parent.op === 'call')) parent.__alt = ast
    checking.push(ast)
    try {
      return check.call(this, ast, ctx)
    } finally {
      checking.pop()
    }
  }
}
