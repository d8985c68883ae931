// Guest side: static worst-case cost estimate of a checked expression, after cel-go's checker/cost.go.
//
// Each node gives a cost range {min, max} and, for sized values, a size range (string characters, list
// items, map entries) plus the shapes of its elements and fields. Sizes come from literals and from the
// schema (maxLength/maxItems/maxProperties, or Kubernetes' request-size bounds when those are absent).
// Unknown string sizes use `estimator.unknownString` ({min,max}), as cel-go's size estimator hook does.

import { STRING_FACTOR, REGEX_FACTOR } from './cost.js'
import { TWO_VAR_MACROS } from './twovar.js'

const ceil = Math.ceil
// cel-go saturates at MaxUint64; doubles keep the magnitude, which is all the limits compare against.
const CAP = 18446744073709551615
const UNKNOWN = { min: 0, max: CAP }
const ONE = { min: 1, max: 1 }
const add = (a, b) => ({ min: a.min + b.min, max: Math.min(a.max + b.max, CAP) })
const mul = (n, c) => ({ min: n.min * c.min, max: Math.min(n.max * c.max, CAP) })
const scale = (s, f) => ({ min: ceil(s.min * f), max: ceil(s.max * f) })
const fixed = (n) => ({ min: n, max: n })

/** Namespace constants of extension libraries: free to reference, as cel-go resolves them at check time. */
export const NAMESPACES = new Set(['sets', 'strings', 'jsonpatch'])

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
        if (!v && NAMESPACES.has(node.args)) return { cost: fixed(0) }
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

  /** Two-variable comprehensions: per element, the filter and expression plus cel-go's loop overhead. */
  function twoVar(node) {
    const [, recvNode, args] = node.args
    const range = visit(recvNode)
    const n = sizeOf(range, recvNode)
    scopes.push({ name: args[0].args, shape: {} }, { name: args[1].args, shape: shapeResult(range.elem) })
    let step = fixed(4)
    for (const a of args.slice(2)) step = add(step, visit(a).cost)
    scopes.length -= 2
    const name = node.args[0]
    return { cost: add(add(range.cost, mul(n, step)), ONE), size: name === 'transformList' || name === 'transformMap' ? { min: 0, max: n.max } : undefined }
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
    if (isR && TWO_VAR_MACROS.has(name) && node.args[2].length >= 3 && node.args[2][0].op === 'id') return twoVar(node)
    const argNodes = isR ? [node.args[1], ...node.args[2]] : node.args[1]
    const rs = argNodes.map(visit)
    let cost = fixed(0)
    for (const r of rs) cost = add(cost, r.cost)
    const size = resultSize(name, rs, argNodes)
    return { cost: add(cost, callCost(name, rs, argNodes, node)), ...(size ? { size } : {}) }
  }

  /** Result sizes Kubernetes' and cel-go's estimators report for string-producing calls. */
  function resultSize(name, rs, ns) {
    const size = (i) => sizeOf(rs[i], ns[i])
    switch (name) {
      case 'lowerAscii':
      case 'upperAscii':
      case 'substring':
      case 'trim':
      case 'url':
        return size(0)
      case 'quote':
        return { min: size(1).min + 2, max: Math.min(size(1).max * 2 + 2, CAP) }
      case 'escapeKey':
        return { min: size(1).min, max: Math.min(size(1).max * 2, CAP) }
      case 'replace':
        return ns.length >= 3 ? replaceSize(size(0), size(1), size(2)) : undefined
      case 'split':
        return { min: 0, max: ns.length > 2 && ns[2].op === 'value' ? Number(ns[2].args) : size(0).max }
      case 'join':
        return joinSize(rs, ns)
      case 'find':
      case 'findAll':
        return { min: 0, max: size(0).max }
      default:
        return undefined
    }
  }

  function joinSize(rs, ns) {
    const list = sizeOf(rs[0], ns[0])
    const el = rs[0].elem ?? unknownString
    let sz = mul(list, el)
    if (ns.length > 1) {
      const sep = sizeOf(rs[1], ns[1])
      sz = add(sz, mul(sep, { min: Math.max(list.min - 1, 0), max: Math.max(list.max - 1, 0) }))
    }
    return sz
  }
  /** Kubernetes' replace estimate: longest result from the most, shortest from the fewest replacements. */
  function replaceSize(sz, from, to) {
    let maxCount
    let maxKept = 0
    if (from.min === 0) {
      maxCount = sz.max < CAP ? sz.max + 1 : sz.max
      maxKept = sz.max
    } else if (to.max <= from.min) {
      maxCount = 0
      maxKept = sz.max
    } else maxCount = ceil(sz.max / from.min)
    let minCount
    let minKept = 0
    if (from.max === 0) {
      minCount = sz.min + 1
      minKept = sz.min
    } else if (from.max <= to.min) {
      minCount = 0
      minKept = sz.min
    } else minCount = ceil(sz.min / from.max)
    return add(mul({ min: minCount, max: maxCount }, to), { min: minKept, max: maxKept })
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
        // cel-go: the smaller maximum of both sizes, and at least 1 unless that maximum is 0
        const smallestMax = Math.min(size(0).max, size(1).max)
        return scale({ min: smallestMax > 0 ? 1 : 0, max: smallestMax }, STRING_FACTOR)
      }
      case '+': {
        const k = typeKind(ns[0])
        return k === 'string' || k === 'bytes' ? scale(add(size(0), size(1)), STRING_FACTOR) : ONE
      }
      case 'in':
        return typeKind(ns[1]) === 'list' ? size(1) : ONE
      case 'contains':
        if (ns.length === 3) return add(ONE, mul(size(1), size(2)))
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
      case 'join':
        return scale(joinSize(rs, ns), STRING_FACTOR)
      case 'quote':
      case 'escapeKey':
        return scale(size(1), STRING_FACTOR)
      // sets.*: cel-go's call cost 1 plus the pairwise comparisons
      case 'intersects':
        return add(ONE, mul(size(1), size(2)))
      case 'equivalent':
        return add(ONE, mul(fixed(2), mul(size(1), size(2))))
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
