// Compile and type-check errors worded and positioned as cel-go prints them (Issues.String()), for CRD rules.
//
// cel-go: `ERROR: <input>:<line>:<column>: <message>\n | <source line>\n | <dots>^`, the column 1-based in
// code points, as many dots as the 0-based column. The base library's parser differs from cel-go's ANTLR
// grammar, so syntax errors are mapped to the closest cel-go wording; checker errors map one to one where
// the base library says the same thing (undefined field, undeclared reference, no matching overload).

const EXPECTING_OPERAND =
  "{'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}"
const TOKEN_TEXT = { RPAREN: ')', LPAREN: '(', RBRACKET: ']', LBRACKET: '[', RBRACE: '}', LBRACE: '{', COLON: ':', COMMA: ',', IDENTIFIER: 'IDENTIFIER', EOF: '<EOF>' }
const BINARY = { '==': '_==_', '!=': '_!=_', '<': '_<_', '<=': '_<=_', '>': '_>_', '>=': '_>=_', '+': '_+_', '-': '_-_', '*': '_*_', '/': '_/_', '%': '_%_', in: '@in', '&&': '_&&_', '||': '_||_' }
const UNARY = { '!': '!_', '-': '-_' }

/** cel-go's spelling of a type: `list(int)`, `map(string, int)`. */
const goType = (t) => String(t).replace(/</g, '(').replace(/>/g, ')')

const skipSpaces = (expr, i) => {
  while (i < expr.length && /\s/.test(expr[i])) i++
  return i
}

/** The cel-go message and source offset for a base-library error raised by parse() or check(). */
export function celGoIssue(expr, err, phase) {
  const summary = String(err?.summary ?? err?.message ?? err)
  const node = err?.node
  let offset = err?.range?.start ?? node?.pos ?? 0
  let m
  if (phase === 'parse') {
    if ((m = /^Unexpected token: (\w+)/.exec(summary))) {
      const text = m[1] === 'EOF' ? '<EOF>' : tokenAt(expr, offset)
      return { offset, message: `Syntax error: mismatched input '${text}' expecting ${EXPECTING_OPERAND}` }
    }
    if ((m = /^Expected (\w+), got (\w+)/.exec(summary))) {
      const got = m[2] === 'EOF' ? '<EOF>' : tokenAt(expr, offset)
      return { offset, message: `Syntax error: missing '${TOKEN_TEXT[m[1]] ?? m[1]}' at '${got}'` }
    }
    if (/^Unexpected character/.test(summary)) {
      const word = /^[A-Za-z0-9_]+/.exec(expr.slice(offset))
      if (word) return { offset, message: `Syntax error: extraneous input '${word[0]}' expecting <EOF>` }
      return { offset, message: `Syntax error: token recognition error at: '${expr[offset] ?? ''}'` }
    }
    if (/^Unterminated/.test(summary)) {
      return { offset, message: `Syntax error: token recognition error at: '${expr.slice(offset).split(/[\r\n]/)[0]}'` }
    }
    if ((m = /^Reserved identifier: (.*)$/.exec(summary))) return { offset, message: `reserved identifier: ${m[1]}` }
    if (/^(error parsing regexp|expression)/.test(summary)) return { offset, message: summary }
    return { offset, message: `Syntax error: ${summary}` }
  }
  if ((m = /^Unknown variable: (.*)$/.exec(summary))) return { offset, message: `undeclared reference to '${m[1]}' (in container '')` }
  if ((m = /^No such key: (.*)$/.exec(summary))) return { offset: dotBefore(expr, offset), message: `undefined field '${m[1]}'` }
  if ((m = /^Cannot index type '(.*)'$/.exec(summary)) && node?.op === '.') {
    return { offset: dotBefore(expr, offset), message: `type '${goType(m[1])}' does not support field selection` }
  }
  if ((m = /^no such overload: (\S+) (\S+) (\S+)$/.exec(summary)) && BINARY[m[2]]) {
    return { offset: operatorAfter(expr, node, offset), message: `found no matching overload for '${BINARY[m[2]]}' applied to '(${goType(m[1])}, ${goType(m[3])})'` }
  }
  if ((m = /^no such overload: ([!-])(\S+)$/.exec(summary))) {
    return { offset: node?.pos ?? offset, message: `found no matching overload for '${UNARY[m[1]]}' applied to '(${goType(m[2])})'` }
  }
  if ((m = /^found no matching overload for '(?:(.+)\.)?([\w.]+)\((.*)\)'$/.exec(summary))) {
    const paren = expr.indexOf('(', node?.op === 'rcall' ? node.args?.[1]?.end ?? offset : offset)
    // a global function with no declaration at all is an undeclared reference in cel-go
    if (node?.op === 'call' && node.candidates?.declarations?.length === 0) {
      return { offset: paren >= 0 ? paren : offset, message: `undeclared reference to '${m[2]}' (in container '')` }
    }
    const args = `(${m[3].split(/,\s*/).filter(Boolean).map(goType).join(', ')})`
    return { offset: paren >= 0 ? paren : offset, message: `found no matching overload for '${m[2]}' applied to '${m[1] ? goType(m[1]) + '.' : ''}${args}'` }
  }
  if ((m = /^Ternary branches must have the same type, got '(.*)' and '(.*)'$/.exec(summary))) {
    return { offset: operatorAfter(expr, node, offset), message: `found no matching overload for '_?_:_' applied to '(bool, ${goType(m[1])}, ${goType(m[2])})'` }
  }
  const [lt, rt] = [node?.left?.checkedType, node?.right?.checkedType]
  if (/^Logical operator/.test(summary) && lt && rt && (node.op === '&&' || node.op === '||')) {
    return { offset: operatorAfter(expr, node, offset), message: `found no matching overload for '${BINARY[node.op]}' applied to '(${goType(lt)}, ${goType(rt)})'` }
  }
  if (/^Logical operator/.test(summary)) return { offset: operatorAfter(expr, node, offset), message: summary }
  return { offset, message: summary }
}

/** The token text starting at offset (an identifier, a number, or one operator character). */
function tokenAt(expr, offset) {
  const m = /^([A-Za-z_][A-Za-z0-9_]*|\d+|==|!=|<=|>=|&&|\|\||\S)/.exec(expr.slice(offset))
  return m ? m[1] : '<EOF>'
}

/** cel-go places a selection at its `.` token; the base library at the field name. */
function dotBefore(expr, offset) {
  let i = offset - 1
  while (i >= 0 && (/\s/.test(expr[i]) || expr[i] === '?')) i--
  return i >= 0 && expr[i] === '.' ? i : offset
}

/** cel-go places a binary operator call at its operator token; the base library at the left operand. */
function operatorAfter(expr, node, offset) {
  const left = node?.args?.[0]
  const end = typeof left === 'object' && left ? left.end : typeof left === 'number' ? left : undefined
  return typeof end === 'number' ? skipSpaces(expr, end) : offset
}

/** Formats one issue as cel-go's Issues.String() does. */
export function formatIssue(expr, offset, message) {
  const before = expr.slice(0, Math.max(0, Math.min(offset, expr.length)))
  const line = before.split(/\r\n|\r|\n/).length
  const lineStart = Math.max(before.lastIndexOf('\n'), before.lastIndexOf('\r')) + 1
  const column = [...expr.slice(lineStart, offset)].length
  const snippet = (expr.slice(lineStart).split(/\r\n|\r|\n/)[0] ?? '').replace(/\t/g, ' ')
  return `ERROR: <input>:${line}:${column + 1}: ${message}\n | ${snippet}\n | ${'.'.repeat(column)}^`
}
