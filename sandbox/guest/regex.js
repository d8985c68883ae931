// Guest side: RE2 pattern syntax translated to JavaScript RegExp, rejecting what RE2 does not accept.
//
// RE2 has no backreferences or lookaround; `(?i)`-style leading flags, `\A`, `\z`, `(?P<name>` and POSIX
// classes are RE2 syntax that JavaScript spells differently. Errors read like Go's regexp package
// ("error parsing regexp: ...") because Kubernetes users see those messages. Compiled patterns are cached.

const POSIX = {
  alnum: '0-9A-Za-z', alpha: 'A-Za-z', ascii: '\\x00-\\x7F', blank: '\\t ', cntrl: '\\x00-\\x1F\\x7F',
  digit: '0-9', graph: '!-~', lower: 'a-z', print: ' -~', punct: '!-/:-@[-`{-~', space: '\\t\\n\\v\\f\\r ',
  upper: 'A-Z', word: '0-9A-Za-z_', xdigit: '0-9A-Fa-f',
}

function regexError(msg) {
  const e = new Error(`error parsing regexp: ${msg}`)
  e.celEval = true
  return e
}

export function translate(re) {
  let flags = ''
  let src = re
  const m = /^\(\?([imsU]+)\)/.exec(src)
  if (m) {
    src = src.slice(m[0].length)
    if (m[1].includes('i')) flags += 'i'
    if (m[1].includes('s')) flags += 's'
    if (m[1].includes('m')) flags += 'm'
  }
  if (/\\[1-9]/.test(src)) throw regexError(`invalid escape sequence: \`${/\\[1-9]/.exec(src)[0]}\``)
  if (/\(\?[=!]|\(\?<[=!]/.test(src)) throw regexError(`invalid or unsupported Perl syntax: \`${/\(\?<?[=!]?/.exec(src)[0]}\``)
  src = src
    .replace(/\(\?P</g, '(?<')
    .replace(/\\A/g, '^')
    .replace(/\\z/g, '$(?![\\s\\S])')
    .replace(/\[:(\^?)([a-z]+):\]/g, (all, neg, name) => (POSIX[name] && !neg ? POSIX[name] : all))
  return { src, flags }
}

export function createRegexCache(max = 256) {
  const cache = new Map()
  return function toJsRegExp(re, extraFlags = '') {
    const key = extraFlags + '\u0000' + re
    let rx = cache.get(key)
    if (rx) {
      rx.lastIndex = 0
      return rx
    }
    const { src, flags } = translate(re)
    try {
      rx = new RegExp(src, 'u' + flags + extraFlags)
    } catch (err) {
      throw regexError(describe(err, re))
    }
    if (cache.size >= max) cache.delete(cache.keys().next().value)
    cache.set(key, rx)
    return rx
  }
}

function describe(err, re) {
  const msg = String(err.message || err)
  if (/unmatched|parenthes|extraneous/i.test(msg) && re.includes(')')) return `unexpected ): \`${re}\``
  if (/missing|expecting.*\)/i.test(msg)) return `missing closing ): \`${re}\``
  if (/nothing to repeat/i.test(msg)) return `missing argument to repetition operator: \`${re}\``
  return `${msg}: \`${re}\``
}

const defaultCache = createRegexCache()
export const toJsRegExp = defaultCache
