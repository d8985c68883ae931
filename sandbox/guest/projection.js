// Guest side: which top-level properties of each schema-object variable a checked program can read.
//
// A program that uses a variable only as the operand of field selections (`self.a`, `has(self.b)`) reads
// nothing of it but those fields: the host may send just those properties (their whole subtrees) instead of
// the object, which saves serializing, parsing and converting the rest. Value, errors and cost stay the same:
// an absent field is absent in both, the object keeps its type, and cost never depends on unread fields.
// Any other use (the variable alone, `==`, `.?`, a function argument), a comprehension or `cel.bind`
// variable of the same name, or a field the schema does not map back to a property sends the variable whole.

/**
 * `{ variable: [property, ...] }` for the variables of environment `e` that `ast` reads only through field
 * selections, or undefined when there is none.
 */
export function projectionOf(ast, e) {
  const fields = new Map() // variable -> Set of CEL field names
  const whole = new Set()
  const visit = (x) => {
    if (Array.isArray(x)) {
      for (const y of x) visit(y)
      return
    }
    if (!x || typeof x !== 'object') return
    if (typeof x.op !== 'string') {
      // a comprehension's arguments ({ iterable, init, step, iterVarName, ... }): names it binds shadow variables
      // (only sub-nodes and arrays are followed: the rest, such as loop contexts, is no part of the tree)
      for (const [k, v] of Object.entries(x)) {
        if (/var/i.test(k) && typeof v === 'string') whole.add(v)
        else if (Array.isArray(v) || (v && typeof v === 'object' && typeof v.op === 'string')) visit(v)
      }
      return
    }
    if (x.__alt) visit(x.__alt)
    switch (x.op) {
      case 'value':
        return
      case 'id':
        whole.add(x.args)
        return
      case '.': {
        const base = x.args[0]
        if (base && base.op === 'id' && typeof x.args[1] === 'string') {
          const set = fields.get(base.args) ?? new Set()
          set.add(x.args[1])
          fields.set(base.args, set)
          return
        }
        visit(x.args)
        return
      }
      default:
        visit(x.args)
    }
  }
  visit(ast)
  let out
  for (const [name, set] of fields) {
    const v = Object.prototype.hasOwnProperty.call(e.vars, name) ? e.vars[name] : undefined
    if (whole.has(name) || !v || v.decl.optional || !v.decl.schema) continue
    const names = e.types.fieldNames(v.decl.schema)
    if (!names) continue
    const props = []
    for (const f of set) {
      const p = names.get(f)
      if (p === undefined) break
      props.push(p)
    }
    if (props.length !== set.size) continue
    ;(out ??= {})[name] = props
  }
  return out
}
