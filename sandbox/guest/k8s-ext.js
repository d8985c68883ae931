// Guest side: namespaced extension functions Kubernetes enables: strings.quote (string ext v2), jsonpatch.escapeKey.

/** cel-go's strings.quote: double quotes, Go escapes for control characters, backslash and quote. */
const QUOTE_ESCAPES = { '\x07': '\\a', '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\v': '\\v', '\\': '\\\\', '"': '\\"' }

export function quote(s) {
  // Lone surrogates cannot come from valid UTF-8; cel-go replaces invalid sequences with U+FFFD.
  const clean = s.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD')
  return `"${clean.replace(/[\x07\b\f\n\r\t\v\\"]/g, (c) => QUOTE_ESCAPES[c])}"`
}

/** RFC 6901 escaping of one JSON pointer token, as Kubernetes' jsonpatch.escapeKey does. */
export const escapeKey = (s) => s.replace(/~/g, '~0').replace(/\//g, '~1')

/** Registers a namespace constant (`strings`, `jsonpatch`) whose methods are the namespaced functions. */
function namespace(baseEnv, name, typeName) {
  const Ns = { [typeName]: class {
    static celNamespace = true
  } }[typeName]
  baseEnv.registerType(typeName, Ns)
  baseEnv.registerConstant(name, typeName, new Ns())
}

export function registerExtensions(baseEnv, env) {
  namespace(baseEnv, 'strings', 'StringsNamespace')
  env.registerFunction('StringsNamespace.quote(string): string', (_, s) => quote(s))
  namespace(baseEnv, 'jsonpatch', 'JsonPatchNamespace')
  env.registerFunction('JsonPatchNamespace.escapeKey(string): string', (_, s) => escapeKey(s))
}

/**
 * The optMap/optFlatMap macros: `o.optMap(v, expr)` is none when `o` is none, else `optional.of(expr)`
 * with `v` bound to the value; optFlatMap's expression must itself give an optional.
 */
export function registerOptionalMacros(baseEnv, Optional) {
  const macro = (flat) => ({ args, receiver, ast }) => {
    if (args[0].op !== 'id') throw Object.assign(new Error(`${flat ? 'optFlatMap' : 'optMap'}() variable name must be a simple identifier`), { node: args[0] })
    return { ast, receiver, var: args[0].args, exp: args[1], bindCtx: undefined, typeCheck: typeCheck(flat), evaluate }
  }
  const typeCheck = (flat) => (checker, m, ctx) => {
    const rt = checker.check(m.receiver, ctx)
    const inner = rt.kind === 'optional' ? rt.valueType : checker.getType('dyn')
    m.bindCtx = ctx.forkWithVariable(m.var, inner)
    const et = checker.check(m.exp, m.bindCtx)
    if (flat) {
      if (et.kind !== 'optional' && et.kind !== 'dyn') throw checker.createError('invalid_macro_argument', `optFlatMap() expression must return an optional, got ${et.name}`, m.exp)
      m.flat = true
      return et
    }
    return checker.getType(`optional<${et.name}>`)
  }
  function evaluate(ev, m, ctx) {
    const o = ev.run(m.receiver, ctx)
    if (!o.hasValue()) return Optional.none()
    const r = ev.run(m.exp, m.bindCtx.reuse(ctx).setIterValue(o.value(), ev))
    return m.flat ? r : Optional.of(r)
  }
  baseEnv.registerFunction('optional<A>.optMap(ast, ast): optional<dyn>', macro(false))
  baseEnv.registerFunction('optional<A>.optFlatMap(ast, ast): optional<dyn>', macro(true))
}
