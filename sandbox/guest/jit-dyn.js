// Guest side: the compiled code's fast paths for `dyn` values (admission policies see every object as dyn), each an
// inline test with the library's call as fallback.
//
// - A dyn value the library accepts as it is (primitives, null, plain objects and arrays) is read straight from the
//   variables object or from a plain object's own property, as the library's lookups read it.
// - An operator or function whose overload the library picks at run time from its operands' types (a dyn operand)
//   keeps the overload it picked for operands whose CEL type their JavaScript type alone decides (string, double,
//   int, bool, null): a monomorphic cache per node, taken again only while the operands have those types.

/** The library's run-time dispatchers (operators.js): a node whose handle is one of these picks its overload per call. */
const DISPATCHERS = new Set(['handleBinary', 'callFn', 'callRecFn'])

/** True when `node` resolves its overload at run time with the library's own dispatcher (not an override's handler). */
export function dispatchesAtRunTime(node) {
  return node.candidates !== undefined && typeof node.handle === 'function' && DISPATCHERS.has(node.handle.name)
}

/** The inline form of "the library accepts `x` as a dyn value without converting it" (root variables: no bigint, which checkRange inspects). */
export function dynTest(x, isRootId) {
  const plain = `(typeof ${x} === 'object' && (${x} === null || ${x}.constructor === Object || ${x}.constructor === Array))`
  return `(typeof ${x} === 'string' || typeof ${x} === 'boolean' || typeof ${x} === 'number' || ${isRootId ? '' : `typeof ${x} === 'bigint' || `}${plain})`
}

/** The inline own-property read of field `n.right` from a plain object `o`, undefined otherwise. */
export function plainField(n, o) {
  return `(${o} !== null && typeof ${o} === 'object' && ${o}.constructor === Object && H.hasOwn.call(${o}, ${n}.right) ? ${o}[${n}.right] : undefined)`
}

/** The key of an operand: its JavaScript type in the generated test. */
const keyOf = (x) => `(${x} === null ? 'null' : typeof ${x})`

/**
 * `fast` (the cached overload called) when the node has one and every operand with a dyn checked type has the key it
 * was cached for, else `slow`. `operands`: [local, checkedType] pairs in the dispatcher's order.
 */
export function cachedDispatch(n, operands, fast, slow) {
  const tests = [`${n}.__dh !== undefined`]
  operands.forEach(([x, type], i) => {
    if (type?.hasDynType !== false) tests.push(`${keyOf(x)} === ${n}.__dk[${i}]`)
  })
  return `(${tests.join(' && ')} ? ${fast} : ${slow})`
}

const PRIMITIVE = new Set(['string', 'number', 'boolean', 'bigint'])

/** The run-time key of a value whose CEL type its JavaScript type decides, else undefined ('*': a statically typed operand). */
function keyOfValue(v, type) {
  if (type?.hasDynType === false) return '*'
  if (v === null) return 'null'
  const t = typeof v
  return PRIMITIVE.has(t) ? t : undefined
}

/** Remembers `handler` for these operands' keys on `node`, when each operand has one. */
function remember(node, values, types, handler) {
  const keys = values.map((v, i) => keyOfValue(v, types[i]))
  if (keys.includes(undefined)) return
  node.__dk = keys
  node.__dh = handler
}

const hasKeys = (values, types) => values.every((v, i) => keyOfValue(v, types[i]) !== undefined)

/**
 * Helpers the generated code calls: each slow path is the library's own call, after looking up what to cache.
 * `isFatal(e)`: an error no evaluation may absorb (cost limit, resources).
 */
export function dispatchHelpers(isFatal) {
  return {
    hasOwn: Object.prototype.hasOwnProperty,
    /** handleBinary's lookup: a static side's checked type (a side is static when its checked type has no dyn), else the value's deep type, wrapped. */
    binary(node, l, r, ev) {
      const types = [node.args[0].checkedType, node.args[1].checkedType]
      if (node.__dh === undefined && hasKeys([l, r], types)) {
        const o = node.candidates.findBinaryOverload(node.leftStaticType || ev.debugTypeDeep(l).wrappedType, node.rightStaticType || ev.debugTypeDeep(r).wrappedType)
        if (o) remember(node, [l, r], types, o.handler)
      }
      return node.handle(l, r, node, ev)
    },
    /** callFn's lookup (args in call order). */
    call(node, args, ev) {
      const argAst = node.args[1]
      const types = argAst.map((a) => a.checkedType)
      if (node.__dh === undefined && hasKeys(args, types)) {
        const decl = node.candidates.findFunction(args.map((a, i) => ev.debugRuntimeType(a, types[i])))
        if (decl) remember(node, args, types, decl.handler)
      }
      return node.handle(args, node, ev)
    },
    /** callRecFn's lookup (receiver first). */
    receiverCall(node, args, ev) {
      const types = [node.args[1].checkedType, ...node.args[2].map((a) => a.checkedType)]
      if (node.__dh === undefined && hasKeys(args, types)) {
        const argTypes = args.slice(1).map((a, i) => ev.debugRuntimeType(a, types[i + 1]))
        const decl = node.candidates.findFunction(argTypes, ev.debugRuntimeType(args[0], types[0]))
        if (decl) remember(node, args, types, decl.handler)
      }
      return node.handle(args, ev, node)
    },
    /** A cached function overload; an error is raised again by the library's own call, so it carries the node as there. */
    cached(node, args, ev, receiver) {
      try {
        return node.__dh.apply(ev, args)
      } catch (err) {
        if (isFatal(err)) throw err
        return receiver ? node.handle(args, ev, node) : node.handle(args, node, ev)
      }
    },
  }
}
