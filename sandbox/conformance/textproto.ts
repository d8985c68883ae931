// A small protobuf text-format reader (enough for cel-spec's SimpleTestFile textprotos).
//
// Every field becomes an array of values (fields may repeat). Strings stay byte strings (one char per
// byte, the file read as latin1) so bytes_value keeps its bytes; utf8() decodes a string field.

export type TextValue = string | number | boolean | TextMessage | { enum: string }
export interface TextMessage {
  [field: string]: TextValue[]
}

export class TextprotoError extends Error {}

export function parseTextproto(src: string): TextMessage {
  let i = 0
  const n = src.length

  function skip(): void {
    while (i < n) {
      const c = src[i]
      if (c === '#') {
        while (i < n && src[i] !== '\n') i++
      } else if (c === ' ' || c === '\n' || c === '\r' || c === '\t' || c === ',' || c === ';') i++
      else break
    }
  }

  function name(): string {
    skip()
    if (src[i] === '[') {
      const end = src.indexOf(']', i)
      const v = src.slice(i, end + 1)
      i = end + 1
      return v
    }
    const m = /^[A-Za-z_][A-Za-z0-9_.]*/.exec(src.slice(i, i + 200))
    if (!m) throw new TextprotoError(`expected a field name at ${i}: ${src.slice(i, i + 30)}`)
    i += m[0].length
    return m[0]
  }

  function message(close: string | undefined): TextMessage {
    const out: TextMessage = {}
    for (;;) {
      skip()
      if (i >= n) {
        if (close) throw new TextprotoError('unterminated message')
        return out
      }
      if (close && src[i] === close) {
        i++
        return out
      }
      const field = name()
      skip()
      let hasColon = false
      if (src[i] === ':') {
        hasColon = true
        i++
        skip()
      }
      const values = src[i] === '[' && hasColon ? list() : [value()]
      ;(out[field] ??= []).push(...values)
    }
  }

  function list(): TextValue[] {
    i++
    const out: TextValue[] = []
    for (;;) {
      skip()
      if (src[i] === ']') {
        i++
        return out
      }
      out.push(value())
    }
  }

  function value(): TextValue {
    skip()
    const c = src[i]
    if (c === '{' || c === '<') {
      i++
      return message(c === '{' ? '}' : '>')
    }
    if (c === '"' || c === "'") {
      let s = ''
      while (src[i] === '"' || src[i] === "'") {
        s += quoted()
        skip()
      }
      return s
    }
    const m = /^[-+]?[A-Za-z0-9_.+\-]+/.exec(src.slice(i, i + 100))
    if (!m) throw new TextprotoError(`bad value at ${i}: ${src.slice(i, i + 30)}`)
    i += m[0].length
    const t = m[0]
    if (t === 'true' || t === 'True') return true
    if (t === 'false' || t === 'False') return false
    const lower = t.toLowerCase()
    if (lower === 'inf' || lower === 'infinity' || lower === '-inf' || lower === '-infinity' || lower === 'nan' || /^[-+]?[0-9]/.test(t)) {
      if (/^-?(inf|infinity)$/.test(lower)) return lower.startsWith('-') ? -Infinity : Infinity
      if (lower === 'nan') return NaN
      return t as unknown as number // numbers stay text: int64/uint64 need exact digits
    }
    return { enum: t }
  }

  function quoted(): string {
    const q = src[i++]
    let s = ''
    while (i < n && src[i] !== q) {
      const c = src[i++]
      if (c !== '\\') {
        s += c
        continue
      }
      const e = src[i++]
      switch (e) {
        case 'n': s += '\n'; break
        case 't': s += '\t'; break
        case 'r': s += '\r'; break
        case 'a': s += '\x07'; break
        case 'b': s += '\b'; break
        case 'f': s += '\f'; break
        case 'v': s += '\v'; break
        case 'x': {
          const m = /^[0-9a-fA-F]{1,2}/.exec(src.slice(i, i + 2))!
          s += String.fromCharCode(parseInt(m[0], 16))
          i += m[0].length
          break
        }
        case 'u':
        case 'U': {
          const len = e === 'u' ? 4 : 8
          const cp = parseInt(src.slice(i, i + len), 16)
          i += len
          s += Buffer.from(String.fromCodePoint(cp), 'utf8').toString('latin1')
          break
        }
        default:
          if (e >= '0' && e <= '7') {
            const m = /^[0-7]{1,3}/.exec(src.slice(i - 1, i + 2))!
            s += String.fromCharCode(parseInt(m[0], 8))
            i += m[0].length - 1
          } else s += e
      }
    }
    i++
    return s
  }

  return message(undefined)
}

/** A byte string read from the textproto, decoded as UTF-8. */
export function utf8(s: string): string {
  return Buffer.from(s, 'latin1').toString('utf8')
}

export function first<T extends TextValue>(m: TextMessage | undefined, field: string): T | undefined {
  return m?.[field]?.[0] as T | undefined
}
