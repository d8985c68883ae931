// A small JSONPath evaluator for printer columns: `.a.b`, `.a[0]`, `.a[*].b`, `.a[?(@.type=="Ready")].status`, `.a['x.y']`.

type Step =
  | { kind: 'field'; name: string }
  | { kind: 'index'; index: number }
  | { kind: 'all' }
  | { kind: 'filter'; path: string[]; op: '==' | '!='; value: unknown }

export class JsonPathError extends Error {
  readonly code = 'JSONPATH_ERR_SYNTAX'
}

/** Compiles a path (with or without surrounding `{}`); throws JsonPathError on syntax it does not know. */
export function compileJsonPath (expr: string): (root: unknown) => unknown[] {
  let text = expr.trim()
  if (text.startsWith('{') && text.endsWith('}')) text = text.slice(1, -1).trim()
  if (text.startsWith('$')) text = text.slice(1)
  const steps = parseSteps(text)
  return root => evaluate(steps, root)
}

function parseSteps (text: string): Step[] {
  const steps: Step[] = []
  let i = 0
  while (i < text.length) {
    const c = text[i]
    if (c === '.') {
      i++
      let j = i
      while (j < text.length && text[j] !== '.' && text[j] !== '[') j++
      const name = text.slice(i, j)
      if (name === '*') steps.push({ kind: 'all' })
      else if (name !== '') steps.push({ kind: 'field', name })
      i = j
    } else if (c === '[') {
      const end = findClose(text, i)
      steps.push(parseBracket(text.slice(i + 1, end).trim()))
      i = end + 1
    } else {
      throw new JsonPathError(`unexpected character ${JSON.stringify(c)} at ${i} in ${JSON.stringify(text)}`)
    }
  }
  return steps
}

function findClose (text: string, open: number): number {
  let depth = 0
  let quote = ''
  for (let i = open; i < text.length; i++) {
    const c = text[i]
    if (quote !== '') { if (c === quote) quote = ''; continue }
    if (c === '"' || c === "'") quote = c
    else if (c === '[') depth++
    else if (c === ']' && --depth === 0) return i
  }
  throw new JsonPathError(`unclosed [ in ${JSON.stringify(text)}`)
}

function parseBracket (inner: string): Step {
  if (inner === '*') return { kind: 'all' }
  if (/^-?\d+$/.test(inner)) return { kind: 'index', index: Number(inner) }
  const quoted = /^(['"])(.*)\1$/.exec(inner)
  if (quoted !== null) return { kind: 'field', name: quoted[2] }
  const filter = /^\?\(\s*@((?:\.[\w-]+)+)\s*(==|!=)\s*(.+?)\s*\)$/.exec(inner)
  if (filter !== null) {
    return { kind: 'filter', path: filter[1].slice(1).split('.'), op: filter[2] as '==' | '!=', value: literal(filter[3]) }
  }
  throw new JsonPathError(`unsupported JSONPath bracket [${inner}]`)
}

function literal (text: string): unknown {
  const q = /^(['"])(.*)\1$/.exec(text)
  if (q !== null) return q[2]
  if (text === 'true') return true
  if (text === 'false') return false
  const n = Number(text)
  if (Number.isFinite(n)) return n
  throw new JsonPathError(`unsupported JSONPath literal ${text}`)
}

function evaluate (steps: Step[], root: unknown): unknown[] {
  let current: unknown[] = [root]
  for (const step of steps) {
    const next: unknown[] = []
    for (const v of current) apply(step, v, next)
    current = next
  }
  return current
}

function apply (step: Step, v: unknown, out: unknown[]): void {
  if (v === null || typeof v !== 'object') return
  switch (step.kind) {
    case 'field': {
      if (Array.isArray(v)) return
      const x = (v as Record<string, unknown>)[step.name]
      if (x !== undefined) out.push(x)
      return
    }
    case 'index': {
      if (!Array.isArray(v)) return
      const x = v[step.index < 0 ? v.length + step.index : step.index]
      if (x !== undefined) out.push(x)
      return
    }
    case 'all':
      out.push(...(Array.isArray(v) ? v : Object.values(v)))
      return
    case 'filter':
      if (!Array.isArray(v)) return
      for (const el of v) {
        let x: unknown = el
        for (const k of step.path) x = x !== null && typeof x === 'object' ? (x as Record<string, unknown>)[k] : undefined
        if ((x === step.value) === (step.op === '==')) out.push(el)
      }
  }
}
