// Guest side: static worst-case cost estimate of a checked expression, after cel-go's checker/cost.go.
//
// Each node gives a cost range {min, max} and, for sized values, a size range (string characters, list
// items, map entries) plus the shapes of its elements and fields. Sizes come from literals and from the
// schema (maxLength/maxItems/maxProperties, or Kubernetes' request-size bounds when those are absent).
// Unknown string sizes use `estimator.unknownString` ({min,max}), as cel-go's size estimator hook does.

import { STRING_FACTOR, REGEX_FACTOR } from './cost.js'

const ceil = Math.ceil
// cel-go saturates at MaxUint64; doubles keep the magnitude, which is all the limits compare against.
const CAP = 18446744073709551615
const UNKNOWN = { min: 0, max: CAP }
const ONE = { min: 1, max: 1 }
const add = (a, b) => ({ min: a.min + b.min, max: Math.min(a.max + b.max, CAP) })
const mul = (n, c) => ({ min: n.min * c.min, max: Math.min(n.max * c.max, CAP) })
const scale = (s, f) => ({ min: ceil(s.min * f), max: ceil(s.max * f) })
const fixed = (n) => ({ min: n, max: n })

const kindOf = (t) => (!t ? 'dyn' : t.kind === 'primitive' ? t.type : t.kind)
const typeKind = (node) => kindOf(node.checkedType)

export function estimateCost(ast, e, options) {
  const unknownString = options.unknownString ?? { min: 0, max: 3 * 1024 * 1024 }
  const scopes = []

  function sizeOf(r, node) {
    if (r.size) return r.size
    const k = typeKind(node)
    if (k === 'string' || k === 'bytes') return unknownString
    if (k === 'list' || k === 'map') return UNKNOWN
    return ONE
  }

  function visit(node) {
    if (node.__alt) return comprehension(node.__alt)
    switch (node.op) {
      case 'accuPush':
        return { cost: add(visit(node.args).cost, fixed(12)) }
      case 'accuValue':
        return { cost: ONE }
      case 'accuInc':
        return { cost: fixed(2) }
      case 'value': {
        const v = node.args
        if (typeof v === 'string') return { cost: fixed(0), size: fixed(Array.from(v).length) }
        if (v instanceof Uint8Array) return { cost: fixed(0), size: fixed(v.length) }
        return { cost: fixed(0) }
      }
      case 'id': {
        for (let i = scopes.length - 1; i >= 0; i--) if (scopes[i].name === node.args) return { cost: ONE, ...scopes[i].shape }
        const v = e.vars[node.args]
        if (v?.decl.schema) return { cost: ONE, ...shapeResult(e.types.shape(v.decl.schema)) }
        return { cost: ONE }
      }
      case '.':
      case '.?': {
        const o = visit(node.args[0])
        const f = o.fields?.[node.args[1]]
        return { cost: add(o.cost, ONE), ...(f ? shapeResult(f) : o.elem ? shapeResult(o.elem) : {}) }
      }
      case '[]':
      case '[?]': {
        const o = visit(node.args[0])
        const i = visit(node.args[1])
        return { cost: add(add(o.cost, i.cost), ONE), ...(o.elem ? shapeResult(o.elem) : {}) }
      }
      case 'list': {
        let cost = fixed(10)
        let elem
        for (const n of node.args) {
          const r = visit(n)
          cost = add(cost, r.cost)
          elem = elem ? { min: Math.min(elem.min, sizeOf(r, n).min), max: Math.max(elem.max, sizeOf(r, n).max) } : undefined
        }
        return { cost, size: fixed(node.args.length), elem: undefined }
      }
      case 'map': {
        let cost = fixed(30)
        for (const [k, v] of node.args) cost = add(add(cost, visit(k).cost), visit(v).cost)
        return { cost, size: fixed(node.args.length) }
      }
      case '?:': {
        const [c, a, b] = node.args.map(visit)
        return { cost: add(c.cost, { min: Math.min(a.cost.min, b.cost.min), max: Math.max(a.cost.max, b.cost.max) }) }
      }
      case '&&':
      case '||': {
        const l = visit(node.args[0])
        const r = visit(node.args[1])
        return { cost: { min: l.cost.min, max: l.cost.max + r.cost.max } }
      }
      case '!_':
      case '-_':
        return { cost: add(visit(node.args).cost, ONE) }
      case 'comprehension':
        return comprehension(node)
      case 'call':
      case 'rcall':
        return call(node)
      default:
        if (Array.isArray(node.args) && node.args.length === 2 && node.args[0]?.op) {
          const l = visit(node.args[0])
          const r = visit(node.args[1])
          const c = callCost(node.op, [l, r], [node.args[0], node.args[1]])
          return { cost: add(add(l.cost, r.cost), c), ...(node.op === '+' ? { size: add(sizeOf(l, node.args[0]), sizeOf(r, node.args[1])) } : {}) }
        }
        return { cost: fixed(0) }
    }
  }

  function shapeResult(s) {
    if (!s) return {}
    return { size: { min: s.min, max: s.max }, elem: s.elem, fields: s.fields }
  }

  function comprehension(node) {
    const a = node.args
    const range = visit(a.iterable)
    const n = sizeOf(range, a.iterable)
    scopes.push({ name: a.iterVarName, shape: shapeResult(range.elem) })
    const step = visit(a.step)
    scopes.pop()
    const init = visit(a.init)
    const kind = a.kind === 'quantifier' ? (a.init.args === true ? 'all' : a.init.args === false ? 'exists' : 'one') : 'map'
    const overhead = kind === 'all' ? 3 : kind === 'exists' ? 4 : 0
    const perIter = add(step.cost, fixed(overhead))
    const result = fixed(kind === 'one' ? 2 : 1)
    const cost = add(add(add(range.cost, init.cost), mul(n, perIter)), result)
    return { cost, size: kind === 'map' ? { min: 0, max: n.max } : undefined }
  }

  function call(node) {
    const isR = node.op === 'rcall'
    const name = node.args[0]
    if (name === 'has') return { cost: visit(node.args[1][0].args[0]).cost }
    const argNodes = isR ? [node.args[1], ...node.args[2]] : node.args[1]
    const rs = argNodes.map(visit)
    let cost = fixed(0)
    for (const r of rs) cost = add(cost, r.cost)
    return { cost: add(cost, callCost(name, rs, argNodes, node)) }
  }

  function elemCompareCost(r, n) {
    const k = kindOf(n.checkedType?.valueType)
    if (k === 'string' || k === 'bytes') {
      const el = r.elem ? { min: r.elem.min, max: r.elem.max } : unknownString
      return { min: 1, max: 1 + ceil(el.max * STRING_FACTOR) }
    }
    return ONE
  }

  function callCost(name, rs, ns) {
    const size = (i) => sizeOf(rs[i], ns[i])
    switch (name) {
      case '==':
      case '!=':
      case '<':
      case '<=':
      case '>':
      case '>=': {
        const a = size(0)
        const b = size(1)
        return scale({ min: Math.min(a.min, b.min), max: Math.min(a.max, b.max) }, STRING_FACTOR)
      }
      case '+': {
        const k = typeKind(ns[0])
        return k === 'string' || k === 'bytes' ? scale(add(size(0), size(1)), STRING_FACTOR) : ONE
      }
      case 'in':
        return typeKind(ns[1]) === 'list' ? size(1) : ONE
      case 'contains':
        if (ns.length === 3) return mul(size(1), size(2))
        if (typeKind(ns[0]) !== 'string') return ONE
        return mul(scale(size(0), STRING_FACTOR), scale(size(1), STRING_FACTOR))
      case 'startsWith':
      case 'endsWith':
        return scale(size(1), STRING_FACTOR)
      case 'matches':
      case 'find':
      case 'findAll':
        return mul(scale(add(size(0), ONE), STRING_FACTOR), scale(size(1), REGEX_FACTOR))
      case 'string':
      case 'bytes': {
        const k = typeKind(ns[0])
        return k === 'string' || k === 'bytes' ? scale(size(0), STRING_FACTOR) : ONE
      }
      case 'includes':
        if (typeKind(ns[0]) === 'string') return size(0)
        return mul(size(0), elemCompareCost(rs[0], ns[0]))
      case 'isSorted':
      case 'sum':
      case 'max':
      case 'min':
      case 'indexOf':
      case 'lastIndexOf':
        if (typeKind(ns[0]) === 'string') return scale(size(0), STRING_FACTOR)
        return mul(size(0), elemCompareCost(rs[0], ns[0]))
      case 'url':
      case 'isURL':
      case 'lowerAscii':
      case 'upperAscii':
      case 'substring':
      case 'trim':
      case 'quantity':
      case 'isQuantity':
        return scale(size(0), STRING_FACTOR)
      case 'replace':
      case 'split':
        return scale(size(0), 2 * STRING_FACTOR)
      case 'join': {
        const el = rs[0].elem ?? unknownString
        return scale(mul(size(0), el), 2 * STRING_FACTOR)
      }
      case 'intersects':
        return mul(size(1), size(2))
      case 'equivalent':
        return mul(fixed(2), mul(size(1), size(2)))
      case 'check':
        return fixed(350000)
      case 'bind':
        return fixed(0)
      default:
        return ONE
    }
  }

  return visit(ast).cost
}
