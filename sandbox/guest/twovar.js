// Guest side: cel-go's two-variable comprehensions (ext.TwoVarComprehensions): all, exists, existsOne,
// transformList, transformMap over lists (index, value) and maps (key, value).

const evalError = (msg) => Object.assign(new Error(msg), { celEval: true })

export const TWO_VAR_MACROS = new Set(['all', 'exists', 'existsOne', 'transformList', 'transformMap'])

function entries(v) {
  if (Array.isArray(v)) return v.map((x, i) => [BigInt(i), x])
  if (v instanceof Map) return [...v]
  if (v && typeof v === 'object') return Object.keys(v).map((k) => [k, v[k]])
  throw evalError('comprehension over a value that is neither a list nor a map')
}

function typeCheck(checker, m, ctx) {
  const rt = checker.check(m.receiver, ctx)
  const dyn = checker.getType('dyn')
  const keyType = rt.kind === 'list' ? checker.getType('int') : rt.kind === 'map' ? rt.keyType : dyn
  const valType = rt.kind === 'list' || rt.kind === 'map' ? rt.valueType : dyn
  m.c1 = ctx.forkWithVariable(m.v1, keyType)
  m.c2 = m.c1.forkWithVariable(m.v2, valType)
  if (m.filter) checker.check(m.filter, m.c2)
  const et = checker.check(m.exp, m.c2)
  if (m.name === 'transformList') return checker.getType(`list<${et.name}>`)
  if (m.name === 'transformMap') return checker.getType(`map<${keyType.name}, ${et.name}>`)
  return checker.getType('bool')
}

function evaluate(ev, m, ctx) {
  const items = entries(ev.run(m.receiver, ctx))
  const bind = (k, v) => m.c2.reuse(m.c1.reuse(ctx).setIterValue(k, ev)).setIterValue(v, ev)
  if (m.name === 'all' || m.name === 'exists') {
    // errors are absorbed when another element decides the result, as cel-go's quantifiers do
    const decisive = m.name === 'exists'
    let error
    for (const [k, v] of items) {
      try {
        if (ev.run(m.exp, bind(k, v)) === decisive) return decisive
      } catch (err) {
        if (err instanceof InternalError || err?.costLimit) throw err
        error ??= err
      }
    }
    if (error) throw error
    return !decisive
  }
  if (m.name === 'existsOne') {
    let n = 0
    for (const [k, v] of items) if (ev.run(m.exp, bind(k, v)) === true) n++
    return n === 1
  }
  const list = m.name === 'transformList'
  const out = list ? [] : new Map()
  for (const [k, v] of items) {
    const c = bind(k, v)
    if (m.filter && ev.run(m.filter, c) !== true) continue
    const r = ev.run(m.exp, c)
    if (list) out.push(r)
    else out.set(k, r)
  }
  if (list) return out
  return [...out.keys()].every((k) => typeof k === 'string') ? Object.fromEntries(out) : out
}

const expander = (name) => ({ args, receiver, ast }) => {
  for (const a of args.slice(0, 2)) if (a.op !== 'id') throw Object.assign(new Error(`${name}() variable names must be simple identifiers`), { node: a })
  if (args[0].args === args[1].args) throw Object.assign(new Error(`${name}() variable names must be different`), { node: args[1] })
  const filter = args.length === 4 ? args[2] : undefined
  return { ast, name, receiver, v1: args[0].args, v2: args[1].args, filter, exp: args[args.length - 1], typeCheck, evaluate }
}

export function registerTwoVarComprehensions(register) {
  for (const recv of ['list', 'map']) {
    register(`${recv}.all(ast, ast, ast): bool`, expander('all'))
    register(`${recv}.exists(ast, ast, ast): bool`, expander('exists'))
    register(`${recv}.existsOne(ast, ast, ast): bool`, expander('existsOne'))
    register(`${recv}.transformList(ast, ast, ast): list<dyn>`, expander('transformList'))
    register(`${recv}.transformList(ast, ast, ast, ast): list<dyn>`, expander('transformList'))
    register(`${recv}.transformMap(ast, ast, ast): map<dyn, dyn>`, expander('transformMap'))
    register(`${recv}.transformMap(ast, ast, ast, ast): map<dyn, dyn>`, expander('transformMap'))
  }
}
