// Label and field selectors: parsing (Kubernetes grammar) and matching against parsed objects.

import { badRequest } from '../errors/status-error.js'

type LabelOp = 'in' | 'notin' | 'exists' | '!' | 'gt' | 'lt'
export interface LabelRequirement { key: string, op: LabelOp, values: string[] }

export interface FieldRequirement { field: string, op: '=' | '!=', value: string }

/** Extracts a field selector value from an object ('' when absent). */
export type FieldGetter = (obj: Record<string, unknown>) => string

/** An index key of watchers: `term` names the field or label (`label:<key>`), `get` reads it off an object. */
export interface WatchTerm { term: string, value: string, get: FieldGetter }

/** What a label getter answers for an absent label: no label value can be it (so `key=` never matches it). */
const NO_LABEL = '\u0000'

export interface Selector {
  /** True when it matches every object (no requirements). */
  readonly empty: boolean
  /**
   * One equality every matching object satisfies (`field=value`, else a label `key=value`): watchers are indexed by
   * it and offered only the events whose object has (or had) that value; matches() still applies the whole selector.
   */
  readonly watchTerm?: WatchTerm
  /** The parsed requirements (all must hold), for planning an indexed read. */
  readonly labelRequirements: readonly LabelRequirement[]
  readonly fieldRequirements: readonly FieldRequirement[]
  matches (obj: Record<string, unknown>): boolean
}

const QUALIFIED = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/

function parseError (why: string): never {
  throw badRequest(`unable to parse requirement: ${why}`)
}

function tokenize (s: string): string[] {
  const out: string[] = []
  let i = 0
  while (i < s.length) {
    const c = s[i]
    if (c === ' ' || c === '\t') { i++; continue }
    const two = s.slice(i, i + 2)
    if (two === '==' || two === '!=') { out.push(two); i += 2; continue }
    if ('=!(),<>'.includes(c)) { out.push(c); i++; continue }
    let j = i
    while (j < s.length && !' \t=!(),<>'.includes(s[j])) j++
    out.push(s.slice(i, j))
    i = j
  }
  return out
}

const isWord = (t: string | undefined): t is string => t !== undefined && !['=', '==', '!=', '!', '(', ')', ',', '<', '>'].includes(t)

function checkKey (key: string): string {
  if (key.length > 317 || !QUALIFIED.test(key)) parseError(`key: Invalid value: "${key}": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character`)
  return key
}

function checkValue (key: string, v: string): string {
  if (v.length > 63 || !LABEL_VALUE.test(v)) parseError(`values[0][${key}]: Invalid value: "${v}": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character`)
  return v
}

/** Parses a label selector (=, ==, !=, in, notin, exists, !key, >, <). Throws 400 on bad syntax. */
export function parseLabelSelector (text: string): LabelRequirement[] {
  const toks = tokenize(text)
  const reqs: LabelRequirement[] = []
  let i = 0
  const next = (): string | undefined => toks[i++]
  while (i < toks.length) {
    let t = next()
    if (t === '!') {
      const key = next()
      if (!isWord(key)) parseError(`found '${key ?? ''}', expected: identifier after '!'`)
      reqs.push({ key: checkKey(key), op: '!', values: [] })
    } else if (isWord(t)) {
      const key = checkKey(t)
      const op = toks[i]
      if (op === undefined || op === ',') {
        reqs.push({ key, op: 'exists', values: [] })
      } else if (op === '=' || op === '==' || op === '!=') {
        i++
        const v = isWord(toks[i]) ? toks[i++] : ''
        reqs.push({ key, op: op === '!=' ? 'notin' : 'in', values: [checkValue(key, v)] })
      } else if (op === '>' || op === '<') {
        i++
        const v = next()
        if (v === undefined || !/^-?\d+$/.test(v)) parseError(`for 'Gt', 'Lt' operators, the value must be an integer`)
        reqs.push({ key, op: op === '>' ? 'gt' : 'lt', values: [v] })
      } else if (op === 'in' || op === 'notin') {
        i++
        if (next() !== '(') parseError(`found '${toks[i - 1] ?? ''}', expected: '('`)
        const values: string[] = []
        for (;;) {
          t = toks[i]
          if (t === ')') { i++; break }
          if (t === ',') { i++; if (values.length === 0 || toks[i] === ')' || toks[i] === ',') values.push(''); continue }
          if (!isWord(t)) parseError(`found '${t ?? ''}', expected: ',', ')' or identifier`)
          values.push(checkValue(key, t)); i++
        }
        if (values.length === 0) parseError(`for 'in', 'notin' operators, values set can't be empty`)
        reqs.push({ key, op, values })
      } else {
        parseError(`found '${op}', expected: in, notin, =, ==, !=, gt, lt`)
      }
    } else {
      parseError(`found '${t ?? ''}', expected: !, identifier, or 'end of string'`)
    }
    if (i < toks.length) {
      if (toks[i] !== ',') parseError(`found '${toks[i]}', expected: ',' or 'end of string'`)
      i++
      if (i >= toks.length) parseError(`found '', expected: identifier after ','`)
    }
  }
  return reqs
}

export function matchLabels (reqs: LabelRequirement[], labels: Record<string, string> | undefined): boolean {
  for (const r of reqs) {
    const v = labels?.[r.key]
    switch (r.op) {
      case 'exists': if (v === undefined) return false; break
      case '!': if (v !== undefined) return false; break
      case 'in': if (v === undefined || !r.values.includes(v)) return false; break
      case 'notin': if (v !== undefined && r.values.includes(v)) return false; break
      case 'gt': case 'lt': {
        if (v === undefined || !/^-?\d+$/.test(v)) return false
        const n = Number(v); const want = Number(r.values[0])
        if (r.op === 'gt' ? !(n > want) : !(n < want)) return false
      }
    }
  }
  return true
}

function unescapeField (s: string): string {
  return s.replace(/\\(.)/g, '$1')
}

/** Splits on separators not preceded by a backslash. */
function splitUnescaped (s: string, sep: string): string[] {
  const parts: string[] = []
  let cur = ''
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '\\' && i + 1 < s.length) { cur += s[i] + s[i + 1]; i++; continue }
    if (s[i] === sep) { parts.push(cur); cur = ''; continue }
    cur += s[i]
  }
  parts.push(cur)
  return parts
}

/** Parses a field selector (=, ==, !=; backslash escapes) and checks each field is supported. */
export function parseFieldSelector (text: string, supported: (field: string) => boolean): FieldRequirement[] {
  const reqs: FieldRequirement[] = []
  if (text.trim() === '') return reqs
  for (const term of splitUnescaped(text, ',')) {
    const m = /^([^=!]*?)\s*(==|!=|=)\s*(.*)$/.exec(term.replace(/\\./g, '__'))
    if (m === null) throw badRequest(`invalid selector: '${text}'; can't understand '${term}'`)
    const field = term.slice(0, m[1].length).trim()
    const raw = term.slice(m[1].length).replace(/^\s*(==|!=|=)\s*/, '')
    if (!supported(field)) throw badRequest(`field label not supported: ${field}`)
    reqs.push({ field, op: m[2] === '!=' ? '!=' : '=', value: unescapeField(raw) })
  }
  return reqs
}

/** Value at a dotted path, as a field selector sees it ('' when absent). */
export function fieldPathValue (obj: Record<string, unknown>, path: string): string {
  let cur: unknown = obj
  for (const part of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return ''
    cur = (cur as Record<string, unknown>)[part]
  }
  if (cur === undefined || cur === null) return ''
  return typeof cur === 'object' ? JSON.stringify(cur) : String(cur)
}

/** The field getters every kind supports. */
export const METADATA_FIELDS: Record<string, FieldGetter> = {
  'metadata.name': o => fieldPathValue(o, 'metadata.name'),
  'metadata.namespace': o => fieldPathValue(o, 'metadata.namespace')
}

/** Compiles optional label and field selectors into one matcher; parses only what is given. */
export function compileSelector (labelSelector: string | undefined, fieldSelector: string | undefined,
  fields: Record<string, FieldGetter>): Selector {
  const labels = labelSelector !== undefined && labelSelector.trim() !== '' ? parseLabelSelector(labelSelector) : []
  const fieldReqs = fieldSelector !== undefined
    ? parseFieldSelector(fieldSelector, f => Object.prototype.hasOwnProperty.call(fields, f))
    : []
  const empty = labels.length === 0 && fieldReqs.length === 0
  return {
    empty,
    watchTerm: watchTermOf(labels, fieldReqs, fields),
    labelRequirements: labels,
    fieldRequirements: fieldReqs,
    matches (obj) {
      if (labels.length > 0) {
        const meta = obj.metadata as { labels?: Record<string, string> } | undefined
        if (!matchLabels(labels, meta?.labels)) return false
      }
      for (const f of fieldReqs) {
        const v = fields[f.field](obj)
        if ((v === f.value) !== (f.op === '=')) return false
      }
      return true
    }
  }
}

/** The first field equality (fields the system selects by are the narrow ones), else the first one-value label equality. */
function watchTermOf (labels: LabelRequirement[], fieldReqs: FieldRequirement[], fields: Record<string, FieldGetter>): WatchTerm | undefined {
  const f = fieldReqs.find(r => r.op === '=')
  if (f !== undefined) return { term: f.field, value: f.value, get: fields[f.field] }
  const l = labels.find(r => r.op === 'in' && r.values.length === 1)
  if (l === undefined) return undefined
  const key = l.key
  return { term: `label:${key}`, value: l.values[0], get: o => (o.metadata as { labels?: Record<string, string> } | undefined)?.labels?.[key] ?? NO_LABEL }
}

/** Field selectors naming a single object (metadata.name=x) let watch/list narrow by key. */
export function singleNameFromFieldSelector (fieldSelector: string | undefined): string | undefined {
  if (fieldSelector === undefined) return undefined
  const m = /^\s*metadata\.name\s*==?\s*([^,\\]+?)\s*$/.exec(fieldSelector)
  return m === null ? undefined : m[1]
}
