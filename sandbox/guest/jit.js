// Guest side: compiles a checked CEL AST to one JavaScript function with the cost counters inlined.
//
// Semantics are the library's: every operator and function call goes through the handler the type checker
// resolved for that node (node.handle), so only control flow, variable access and cost accounting are
// generated. Cost follows the runtime meter (cost.js) node by node, so a compiled program and the metered
// interpreter produce the same value, error and cost (asserted by jit.test.ts over the conformance corpora).
// Nodes the compiler does not cover (optMap, two-variable macros, ...) are delegated to the metered
// interpreter; inside a compiled comprehension every node must be covered, else the comprehension is
// delegated as a whole. Generated code names only its own locals and indexes: no expression text, field
// name or constant is ever spliced into the source.

import { callCost, checkRange, CostLimitError, actualSize, FIXED_ONE } from './cost.js'
import { learnValue, ranged, typeTest, RELATIONAL, RELATIONAL_JS } from './jit-fast.js'
import { cachedDispatch, dispatchHelpers, dispatchesAtRunTime, plainField } from './jit-dyn.js'

class Unsupported extends Error {}

const isBind = (node) =>
  node.op === 'rcall' && node.args[0] === 'bind' && !node.handle && node.args[1].op === 'id' && node.args[1].args === 'cel' && node.args[2].length === 3 && node.args[2][0].op === 'id'

const BINARY = new Set(['==', '!=', '<', '<=', '>', '>=', '+', '-', '*', '/', '%', 'in'])
const FIXED_BINARY = new Set(['-', '*', '/', '%'])

/**
 * The test a field read from a plain object must pass to be what the library's lookup answers: a dyn value (the
 * left side dyn, or a map of dyn) or the map's declared value type; undefined when there is no such test.
 */
function plainFieldTest(node, out) {
  const left = node.args[0].checkedType
  if (left?.kind === 'dyn') return typeTest(left, out, undefined, false)
  if (left?.kind === 'map' && left.keyType?.name === 'string') return typeTest(left.valueType, out, undefined, false)
  return undefined
}

const isFatal = (e) => e instanceof CostLimitError || e instanceof InternalError

/** Types whose values have size 1 in cel-go's cost model (never strings, bytes, lists or maps). */
const SCALAR = new Set(['int', 'uint', 'double', 'bool', 'null', 'google.protobuf.Timestamp', 'google.protobuf.Duration'])
const scalarType = (t) => Boolean(t) && t.kind !== 'dyn' && SCALAR.has(t.name)

/** Comparisons and `+` of two statically scalar operands cost exactly 1 (callCost's size rules). */
function scalarOperands(node) {
  if (node.op === 'in') return false
  return scalarType(node.args[0].checkedType) && scalarType(node.args[1].checkedType)
}

/** Helpers the generated code calls (H.*); all take plain values. */
function createHelpers(meter) {
  return {
    ...dispatchHelpers(isFatal),
    meter,
    limit() {
      throw new CostLimitError()
    },
    isFatal,
    checkRange,
    /** A root variable through the library's typed lookup (the fast path's fallback); learns its constructor. */
    idSlow(node, ev, ctx) {
      const v = checkRange(node.evaluate(ev, node, ctx))
      learnValue(node, v, ev)
      return v
    },
    /** A field selection through the library's handler (the fast path's fallback); learns the constructors. */
    fieldSlow(node, o, ev) {
      const v = node.handle(o, node.right, node, ev)
      learnValue(node, v, ev)
      if (node.__oc === undefined && o !== null && typeof o === 'object') {
        const m = ev.objectTypesByConstructor.get(o.constructor)
        if (m && m.fields && m.fields[node.right] === node.checkedType && !(o instanceof Map)) node.__oc = o.constructor
      }
      return v
    },
    callCost,
    actualSize,
    items(ev, args, coll) {
      if (Array.isArray(coll)) return coll
      if (coll instanceof Set) return [...coll]
      if (coll instanceof Map) return [...coll.keys()]
      if (coll && typeof coll === 'object') return Object.keys(coll)
      throw ev.createError('invalid_comprehension_range', `Expression of type '${ev.debugType(coll)}' cannot be range of a comprehension (must be list, map, or dynamic).`, args.iterable)
    },
    mapLiteral(entries) {
      const obj = {}
      for (const [k, v] of entries) if (k !== '__proto__' && k !== 'constructor' && k !== 'prototype') obj[k] = v
      return obj
    },
    /** The library's has() walk: props from the tested selection (first) down to the base's field. */
    has(ev, props, obj) {
      let inOptional
      for (let i = props.length - 1; i >= 0; i--) {
        const node = props[i]
        if (node.op === '.?') inOptional ??= true
        obj = ev.debugType(obj).fieldLazy(obj, node.args[1], node, ev)
        if (obj !== undefined) continue
        if (!(!inOptional && i && node.op === '.')) break
        throw ev.createError('no_such_key', `No such key: ${node.args[1]}`, node)
      }
      return obj !== undefined
    },
    logical(exp, ev, node, left, right) {
      if (right === exp) return exp
      if (right === !exp) {
        if (left === right) return right
        if (left instanceof Error) throw left
        throw ev.createError('invalid_logical_operand', `Logical operator requires bool operands, got '${ev.debugRuntimeType(left)}'`, node.left)
      }
      throw ev.createError('invalid_logical_operand', `Logical operator requires bool operands, got '${ev.debugRuntimeType(right)}'`, node.left)
    },
  }
}

/**
 * Returns `(ev, ctx, vars) => value` for the program, or undefined when the root cannot be compiled.
 * `meter` is the shared runtime meter ({cost, limit, stack}).
 */
export function compileToJs(root, meter) {
  const nodes = []
  const lines = []
  let tmp = 0
  const ref = (node) => {
    let i = node.__jitIndex
    if (i === undefined || nodes[i] !== node) {
      i = node.__jitIndex = nodes.length
      nodes.push(node)
    }
    return `N[${i}]`
  }
  const local = () => `v${tmp++}`
  const charge = (expr) => `M.cost += ${expr}; if (M.cost > M.limit) H.limit();`

  /** Emits statements computing `node` into a fresh local; returns the local's name. scope: var name -> local. */
  function emit(node, scope, inLoop) {
    if (node.__alt) return scoped(node, local(), ref(node), inLoop, () => comprehension(node, node.__alt.args, scope, inLoop))
    const out = local()
    const n = ref(node)
    switch (node.op) {
      case 'value':
        lines.push(`const ${out} = ${n}.args;`)
        return out
      case 'id': {
        const l = scope.get(node.args)
        if (l) {
          lines.push(`const ${out} = ${l};`, charge(1))
          return out
        }
        // root variables and constants: the node's own evaluation (alternates, typed lookup)
        const test = typeTest(node.checkedType, out, n, true)
        if (test) lines.push(`let ${out} = V[${n}.args];`, `if (!(${test})) ${out} = H.idSlow(${n}, ev, ctx);`)
        else lines.push(`const ${out} = H.checkRange(${n}.evaluate(ev, ${n}, ctx));`)
        lines.push(charge(`(${out} !== null && typeof ${out} === 'object' && ${out}.constructor && ${out}.constructor.celNamespace ? 0 : 1)`))
        return out
      }
      case '.':
      case '.?': {
        if (!node.handle) return delegate(node, out, n, inLoop)
        const o = emit(node.args[0], scope, inLoop)
        const test = node.op === '.' && node.args[0].checkedType?.kind === 'message' ? typeTest(node.checkedType, out, n, false) : undefined
        let plainTest
        if (test) {
          lines.push(`let ${out} = ${o} !== null && ${o} !== undefined && ${n}.__oc !== undefined && ${o}.constructor === ${n}.__oc ? ${o}[${n}.right] : undefined;`)
          lines.push(`if (!(${test})) ${out} = H.fieldSlow(${n}, ${o}, ev);`, charge(1))
        } else if (node.op === '.' && (plainTest = plainFieldTest(node, out))) {
          // a dyn or map value: an own property of a plain object, as the library's lookups read it
          lines.push(`let ${out} = ${plainField(n, o)};`, `if (!(${plainTest})) ${out} = ${n}.handle(${o}, ${n}.right, ${n}, ev);`, charge(1))
        } else lines.push(`const ${out} = ${n}.handle(${o}, ${n}.right, ${n}, ev);`, charge(1))
        return out
      }
      case '[]':
      case '[?]': {
        if (!node.handle) return delegate(node, out, n, inLoop)
        const o = emit(node.args[0], scope, inLoop)
        const k = emit(node.args[1], scope, inLoop)
        lines.push(`const ${out} = ${n}.handle(${o}, ${k}, ${n}, ev);`, charge(1))
        return out
      }
      case 'list': {
        const items = emitAll(node.args, scope, inLoop)
        lines.push(`const ${out} = [${items.join(', ')}];`, charge(10))
        return out
      }
      case 'map': {
        // the library builds a plain object from the entries, keys and values evaluated in order
        const entries = node.args.map(([k, v]) => `[${emit(k, scope, inLoop)}, ${emit(v, scope, inLoop)}]`)
        lines.push(`const ${out} = H.mapLiteral([${entries.join(', ')}]);`, charge(30))
        return out
      }
      case '?:':
        if (!node.handle) return delegate(node, out, n, inLoop)
        return ternary(node, out, n, scope, inLoop)
      case '&&':
      case '||':
        return logical(node, out, n, scope, inLoop)
      case '!_':
      case '-_': {
        if (!node.handle) return delegate(node, out, n, inLoop)
        const a = emit(node.args, scope, inLoop)
        lines.push(`const ${out} = H.checkRange(${n}.handle(${a}, ${n}, ev));`, charge(1))
        return out
      }
      case 'call':
      case 'rcall':
        return call(node, out, n, scope, inLoop)
      case 'accuValue':
        lines.push(`const ${out} = ${scope.get('@accu')};`, charge(1))
        return out
      case 'accuInc':
        lines.push(`const ${out} = (${scope.get('@accu')} += 1);`, charge(2))
        return out
      case 'accuPush': {
        const a = emit(node.args, scope, inLoop)
        lines.push(`${scope.get('@accu')}.push(${a}); const ${out} = ${scope.get('@accu')};`, charge(12))
        return out
      }
    }
    if (BINARY.has(node.op) && node.handle) {
      const l = emit(node.args[0], scope, inLoop)
      const r = emit(node.args[1], scope, inLoop)
      const js = RELATIONAL_JS[node.args[0].checkedType?.name]
      if (RELATIONAL.has(node.op) && js && node.args[1].checkedType?.name === node.args[0].checkedType.name) {
        // the library's own overload for these operand types is JavaScript's operator; other values take the handler
        lines.push(`const ${out} = typeof ${l} === '${js}' && typeof ${r} === '${js}' ? ${l} ${node.op} ${r} : ${n}.handle(${l}, ${r}, ${n}, ev);`)
      } else if (dispatchesAtRunTime(node)) {
        const operands = [[l, node.args[0].checkedType], [r, node.args[1].checkedType]]
        lines.push(`const ${out} = ${ranged(node, cachedDispatch(n, operands, `${n}.__dh(${l}, ${r}, ${n}, ev)`, `H.binary(${n}, ${l}, ${r}, ev)`))};`)
      } else lines.push(`const ${out} = ${ranged(node, `${n}.handle(${l}, ${r}, ${n}, ev)`)};`)
      lines.push(charge(FIXED_BINARY.has(node.op) || scalarOperands(node) ? '1' : `H.callCost(${n}.op, [${l}, ${r}], ${out})`))
      return out
    }
    return delegate(node, out, n, inLoop)
  }

  /** Emits a node list last to first, the order the library evaluates call arguments and list items in. */
  function emitAll(list, scope, inLoop) {
    const outs = new Array(list.length)
    for (let i = list.length - 1; i >= 0; i--) outs[i] = emit(list[i], scope, inLoop)
    return outs
  }

  /** Unsupported node outside a compiled loop: the metered interpreter runs it with the root context. */
  function delegate(node, out, n, inLoop) {
    if (inLoop !== false || node === root) throw new Unsupported(node.op)
    lines.push(`const ${out} = ev.run(${n}, ctx);`)
    return out
  }

  function ternary(node, out, n, scope, inLoop) {
    const c = emit(node.args[0], scope, inLoop)
    lines.push(`let ${out};`, `if (${c} === true) {`)
    lines.push(`${out} = ${emit(node.args[1], scope, inLoop)};`, `} else if (${c} === false) {`)
    lines.push(`${out} = ${emit(node.args[2], scope, inLoop)};`, `} else ${out} = ${n}.handle(${c}, ev, ${n}, ctx);`)
    return out
  }

  function logical(node, out, n, scope, inLoop) {
    const exp = node.op === '||'
    const left = local()
    lines.push(`let ${left};`, 'try {')
    lines.push(`${left} = ${emit(node.args[0], scope, inLoop)};`)
    lines.push(`} catch (e) { if (H.isFatal(e)) throw e; ${left} = e; }`)
    lines.push(`let ${out};`, `if (${left} === ${exp}) ${out} = ${exp}; else {`)
    const right = emit(node.args[1], scope, inLoop)
    lines.push(`${out} = ${left} === ${!exp} && typeof ${right} === 'boolean' ? ${right} : H.logical(${exp}, ev, ${n}, ${left}, ${right});`, '}')
    return out
  }

  function call(node, out, n, scope, inLoop) {
    if (node.op === 'call' && node.args[0] === 'has' && node.args[1].length === 1 && !node.handle) return has(node, out, scope, inLoop)
    if (isBind(node)) return scoped(node, out, n, inLoop, () => bind(node, out, scope))
    if (!node.handle) return delegate(node, out, n, inLoop) // other macros (optMap, two-variable, ...)
    const name = node.args[0]
    const dyn = dispatchesAtRunTime(node)
    if (node.op === 'call') {
      const args = emitAll(node.args[1], scope, inLoop)
      const list = `[${args.join(', ')}]`
      const value = dyn
        ? cachedDispatch(n, args.map((a, i) => [a, node.args[1][i].checkedType]), `H.cached(${n}, ${list}, ev, false)`, `H.call(${n}, ${list}, ev)`)
        : `${n}.handle(${list}, ${n}, ev)`
      lines.push(`const ${out} = ${ranged(node, value)};`)
      lines.push(charge(FIXED_ONE.has(name) ? '1' : `H.callCost(${n}.args[0], [${args.join(', ')}], ${out})`))
      return out
    }
    const args = emitAll([node.args[1], ...node.args[2]], scope, inLoop)
    const list = `[${args.join(', ')}]`
    const types = [node.args[1].checkedType, ...node.args[2].map((a) => a.checkedType)]
    const value = dyn
      ? cachedDispatch(n, args.map((a, i) => [a, types[i]]), `H.cached(${n}, ${list}, ev, true)`, `H.receiverCall(${n}, ${list}, ev)`)
      : `${n}.handle(${list}, ev, ${n})`
    lines.push(`const ${out} = ${ranged(node, value)};`)
    lines.push(charge(FIXED_ONE.has(name) ? '1' : `H.callCost(${n}.args[0], [${args.join(', ')}], ${out})`))
    return out
  }

  /**
   * has(a.b.c): the base identifier costs 1 and each selection below the tested one 1 (the meter's
   * hasSelectCost); the presence walk is the library's (H.has), field by field.
   */
  function has(node, out, scope, inLoop) {
    const props = []
    let base = node.args[1][0]
    while (base.op === '.' || base.op === '.?') {
      props.push(base)
      base = base.args[0]
    }
    if (base.op !== 'id' || props.length === 0) throw new Unsupported('has')
    const obj = emit(base, scope, inLoop)
    lines.push(`const ${out} = H.has(ev, [${props.map(ref).join(', ')}], ${obj});`)
    if (props.length > 1) lines.push(charge(props.length - 1))
    return out
  }

  /** cel.bind(v, init, body): `init` once, then `body` with `v` bound (the call itself is free). */
  function bind(node, out, scope) {
    const [name, init, body] = node.args[2]
    const v = emit(init, scope, true)
    const inner = new Map(scope)
    inner.set(name.args, v)
    lines.push(`const ${out} = ${emit(body, inner, true)};`)
    return out
  }

  /**
   * Emits a node that binds variables (comprehension, cel.bind): nothing inside may be delegated, since
   * the interpreter would not see the bindings. At top level an uncovered one is delegated as a whole.
   */
  function scoped(node, out, n, inLoop, build) {
    if (inLoop) return build()
    const mark = lines.length
    try {
      return build()
    } catch (err) {
      if (!(err instanceof Unsupported)) throw err
      lines.length = mark
      return delegate(node, out, n, inLoop)
    }
  }

  /** A macro's comprehension, as the library's loops run it, with the meter's hidden-step costs. */
  function comprehension(node, a, scope, inLoop) {
    const kind = a.kind === 'quantifier' ? (a.init.args === true ? 'all' : a.init.args === false ? 'exists' : 'one') : 'map'
    const A = local()
    lines.push(`const ${A} = ${ref(node)}.__alt.args;`)
    const coll = emit(a.iterable, scope, inLoop)
    const out = local()
    const items = local()
    const accu = local()
    const i = local()
    const iter = local()
    const steps = local()
    const err = local()
    const stepVal = local()
    const inner = new Map(scope)
    inner.set(a.iterVarName, iter)
    inner.set('@accu', accu)
    lines.push(`const ${items} = H.items(ev, ${A}, ${coll});`)
    lines.push(`let ${accu} = ${emit(a.init, scope, inLoop)};`)
    lines.push(`let ${steps} = 0, ${err}, ${out}, ${stepVal};`)
    lines.push(`for (let ${i} = 0; ; ${i}++) {`)
    const fatal = a.errorsAreFatal
    if (fatal) lines.push(`if (${i} >= ${items}.length || (${A}.condition && !${A}.condition(${accu}))) break;`)
    else lines.push(`if (${i} >= ${items}.length) break;`, `if (!${A}.condition(${accu})) break;`)
    // the library's setIterValue: the type test, else its conversion or error (its stored iterValue is only read by
    // the interpreter, which never runs inside a compiled loop)
    const iterTest = typeTest(a.iterCtx?.iterType, iter, undefined, false)
    if (iterTest) lines.push(`let ${iter} = ${items}[${i}];`, `if (!(${iterTest})) ${iter} = ${A}.iterCtx.setIterValue(${iter}, ev).iterValue;`)
    else lines.push(`const ${iter} = ${A}.iterCtx.setIterValue(${items}[${i}], ev).iterValue;`)
    const quantStep = kind === 'all' || kind === 'exists'
    if (!fatal) lines.push('try {')
    let stepOut
    if (quantStep) {
      // the step is `predicate ? true : false`; it costs the hidden loop steps (3 or 4) when it completes
      const step = a.step
      const c = emit(step.args[0], inner, true)
      stepOut = local()
      lines.push(`const ${stepOut} = ${c} === true ? true : ${c} === false ? false : ${ref(step)}.handle(${c}, ev, ${ref(step)}, ctx);`)
      lines.push(`${steps}++;`, charge(kind === 'all' ? 3 : 4))
    } else stepOut = emit(a.step, inner, true)
    lines.push(`${stepVal} = ${stepOut};`)
    if (!fatal) lines.push(`} catch (e) { if (H.isFatal(e)) throw e; if (${err} === undefined) ${err} = e; continue; }`)
    lines.push(`${accu} = ${stepVal};`, '}')
    if (!fatal) lines.push(`if (${err} !== undefined && ${A}.condition(${accu})) throw ${err};`)
    lines.push(`${out} = ${A}.result(${accu});`)
    let c = kind === 'one' ? '2' : '1'
    if (quantStep) c = `(${steps} < H.actualSize(${coll}) ? ${kind === 'all' ? 3 : 4} : 1)`
    lines.push(charge(c))
    return out
  }

  // the root itself must be compiled: delegating it would call this function again
  // (a lone identifier or constant gains nothing, and its generated code would call the root's own evaluate)
  if (root.op === 'value' || root.op === 'id') return undefined
  const isHas = root.op === 'call' && root.args[0] === 'has'
  if (!root.handle && !root.__alt && !isHas && !isBind(root) && !['&&', '||', 'list', 'map'].includes(root.op)) return undefined
  let result
  try {
    result = emit(root, new Map(), false)
  } catch (err) {
    if (err instanceof Unsupported) return undefined
    throw err
  }
  const body = `const M = H.meter;\n${lines.join('\n')}\nreturn ${result};`
  const fn = new Function('H', 'N', 'ev', 'ctx', 'V', body)
  const helpers = createHelpers(meter)
  return (ev, ctx, vars) => fn(helpers, nodes, ev, ctx, vars)
}
