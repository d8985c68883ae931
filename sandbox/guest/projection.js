// Guest side: which top-level properties of each schema-object variable a checked program can read.
//
// A program that uses a variable only as the operand of field selections (`self.a`, `has(self.b)`) reads
// nothing of it but those fields: the host may send just those properties (their whole subtrees) instead of
// the object, which saves serializing, parsing and converting the rest. Value, errors and cost stay the same:
// an absent field is absent in both, the object keeps its type, and cost never depends on unread fields.
// Any other use (the variable alone, `==`, `.?`, a function argument), a comprehension or `cel.bind`
// variable of the same name, or a field the schema does not map back to a property sends the variable whole.

/**
 * How `ast` reads the variables of environment `e`: `projection`, `{ variable: [property, ...] }` for those it reads
 * only through field selections (undefined when none), and `whole`, the declared variables it reads otherwise.
 * A declared variable in neither is not read at all.
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
  const declared = (name) => Object.prototype.hasOwnProperty.call(e.vars, name)
  let projection
  for (const [name, set] of fields) {
    if (whole.has(name) || !declared(name)) continue
    const props = propertiesOf(e, e.vars[name], set)
    if (props) (projection ??= {})[name] = props
    else whole.add(name)
  }
  return { projection, whole: [...whole].filter(declared) }
}

/** The JSON properties holding CEL fields `set` of variable `v`, or undefined when they cannot be named. */
function propertiesOf(e, v, set) {
  if (v.decl.optional) return undefined
  if (!v.decl.schema) {
    // dyn and string-keyed maps: a field selection reads the property of the same name
    return v.type === 'dyn' || /^map<string,/.test(v.type) ? [...set] : undefined
  }
  const names = e.types.fieldNames(v.decl.schema)
  if (!names) return undefined
  const props = []
  for (const f of set) {
    const p = names.get(f)
    if (p === undefined) return undefined
    props.push(p)
  }
  return props
}
