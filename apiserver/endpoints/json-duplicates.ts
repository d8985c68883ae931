// Finds duplicate object keys in JSON text (which JSON.parse silently collapses), reported as field paths.

interface Frame {
  isObject: boolean
  keys: Set<string> | undefined
  /** Path of this container, e.g. `spec.containers[0]`. */
  path: string
  index: number
  /** For objects: the key whose value is being read next (set after the key string). */
  key: string | undefined
  expectKey: boolean
}

function join (base: string, key: string): string {
  return base === '' ? key : `${base}.${key}`
}

/**
 * The index just past the JSON string starting at text[i] === '"'. Text must be valid JSON. Jumps from quote to quote
 * (indexOf) instead of reading every character: most of a body's bytes are inside values.
 */
function stringEnd (text: string, i: number): number {
  let j = text.indexOf('"', i + 1)
  // a quote after an odd run of backslashes is part of the string
  for (;;) {
    let k = j - 1
    while (text.charCodeAt(k) === 92 /* \ */) k--
    if ((j - 1 - k) % 2 === 0) return j + 1
    j = text.indexOf('"', j + 1)
  }
}

/** The decoded key of the JSON string text[i..end). */
function keyText (text: string, i: number, end: number): string {
  const raw = text.slice(i + 1, end - 1)
  return raw.includes('\\') ? JSON.parse(text.slice(i, end)) as string : raw
}

/**
 * Nesting beyond this is refused with 400. Go's decoder allows 10,000 levels; V8's JSON.stringify and
 * the recursive schema walkers overflow the stack at a few thousand, so orch draws the line at 1,000,
 * far deeper than any real object.
 */
export const MAX_JSON_DEPTH = 1000

export class MaxDepthError extends Error {
  constructor () { super('exceeded max depth'); this.name = 'MaxDepthError' }
}

/**
 * Returns the paths of repeated keys in document order (`metadata.labels.app`, `spec.containers[0].name`).
 * Throws MaxDepthError past MAX_JSON_DEPTH levels of nesting.
 * Precondition: `text` already parsed with JSON.parse (so it is well formed); this only tracks structure.
 */
export function findDuplicateKeys (text: string): string[] {
  const dups: string[] = []
  const stack: Frame[] = []
  let i = 0
  const childPath = (): string => {
    const top = stack[stack.length - 1]
    if (top === undefined) return ''
    return top.isObject ? join(top.path, top.key ?? '') : `${top.path}[${top.index}]`
  }
  while (i < text.length) {
    const c = text.charCodeAt(i)
    if (c === 34) {
      const top = stack[stack.length - 1]
      const next = stringEnd(text, i)
      if (top !== undefined && top.isObject && top.expectKey) {
        const s = keyText(text, i, next)
        if (top.keys!.has(s)) dups.push(join(top.path, s))
        else top.keys!.add(s)
        top.key = s
        top.expectKey = false
      }
      i = next
      continue
    }
    if (c === 123 /* { */ || c === 91 /* [ */) {
      const isObject = c === 123
      if (stack.length >= MAX_JSON_DEPTH) throw new MaxDepthError()
      stack.push({ isObject, keys: isObject ? new Set() : undefined, path: childPath(), index: 0, key: undefined, expectKey: isObject })
    } else if (c === 125 || c === 93) {
      stack.pop()
    } else if (c === 44 /* , */) {
      const top = stack[stack.length - 1]
      if (top !== undefined) {
        if (top.isObject) top.expectKey = true
        else top.index++
      }
    }
    i++
  }
  return dups
}
