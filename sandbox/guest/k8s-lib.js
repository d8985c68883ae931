// Guest side: the Kubernetes CEL libraries the base library lacks (lists, regex, URLs, string ext v1 gaps).

import { Duration, UnsignedInt } from 'cel-lib/functions.js'
import { Optional } from 'cel-lib/optional.js'
import { regexFind, regexFindAll, regexMatches } from './regex.js'
import { parseRequestURI } from './url.js'
import { format } from './format.js'
import { registerExtensions, registerOptionalMacros } from './k8s-ext.js'
import { registerQuantity } from './quantity.js'
import { registerTwoVarComprehensions } from './twovar.js'

const fail = (msg) => {
  const e = new Error(msg)
  e.celEval = true
  return e
}

function compare(a, b) {
  if (a instanceof UnsignedInt) return cmp(a.valueOf(), b.valueOf())
  if (a instanceof Duration) return cmp(a.seconds * 1000000000n + BigInt(a.nanos), b.seconds * 1000000000n + BigInt(b.nanos))
  if (a instanceof Date) return cmp(a.getTime(), b.getTime())
  if (a instanceof Uint8Array) {
    for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i] - b[i]
    return a.length - b.length
  }
  return cmp(a, b)
}
const cmp = (a, b) => (a < b ? -1 : a > b ? 1 : 0)

function deepEqual(a, b) {
  if (a === b) return true
  if (typeof a !== typeof b) {
    // CEL's heterogeneous numeric equality
    if ((typeof a === 'bigint' || typeof a === 'number') && (typeof b === 'bigint' || typeof b === 'number')) return Number(a) === Number(b)
    return false
  }
  if (typeof a !== 'object' || a === null || b === null) return a !== a && b !== b ? false : a === b
  if (a instanceof UnsignedInt || a instanceof Duration || a instanceof Date) return b.constructor === a.constructor && compare(a, b) === 0
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => deepEqual(x, b[i]))
  if (a instanceof Uint8Array) return b instanceof Uint8Array && compare(a, b) === 0
  const ka = a instanceof Map ? [...a.keys()] : Object.keys(a)
  const kb = b instanceof Map ? [...b.keys()] : Object.keys(b)
  if (ka.length !== kb.length) return false
  const get = (o, k) => (o instanceof Map ? o.get(k) : o[k])
  return ka.every((k) => (b instanceof Map ? b.has(k) : Object.prototype.hasOwnProperty.call(b, k)) && deepEqual(get(a, k), get(b, k)))
}

/** Lexicographic byte order for bytes (the base library has only == and +). */
function registerBytesOrder(env) {
  env.registerOperator('bytes < bytes', (a, b) => compare(a, b) < 0)
  env.registerOperator('bytes <= bytes', (a, b) => compare(a, b) <= 0)
  env.registerOperator('bytes > bytes', (a, b) => compare(a, b) > 0)
  env.registerOperator('bytes >= bytes', (a, b) => compare(a, b) >= 0)
}

function registerLists(env) {
  const comparable = ['int', 'uint', 'double', 'string', 'bytes', 'bool', 'google.protobuf.Duration', 'google.protobuf.Timestamp']
  for (const t of comparable) {
    env.registerFunction(`list<${t}>.isSorted(): bool`, (l) => l.every((x, i) => i === 0 || compare(l[i - 1], x) <= 0))
    env.registerFunction(`list<${t}>.min(): ${t}`, (l) => {
      if (!l.length) throw fail('min called on empty list')
      return l.reduce((m, x) => (compare(x, m) < 0 ? x : m))
    })
    env.registerFunction(`list<${t}>.max(): ${t}`, (l) => {
      if (!l.length) throw fail('max called on empty list')
      return l.reduce((m, x) => (compare(x, m) > 0 ? x : m))
    })
  }
  env.registerFunction('list<int>.sum(): int', (l) => {
    let s = 0n
    for (const x of l) s += x
    if (s > 9223372036854775807n || s < -9223372036854775808n) throw fail('integer overflow')
    return s
  })
  env.registerFunction('list<uint>.sum(): uint', (l) => new UnsignedInt(l.reduce((s, x) => s + x.valueOf(), 0n)))
  env.registerFunction('list<double>.sum(): double', (l) => l.reduce((s, x) => s + x, 0))
  env.registerFunction('list<google.protobuf.Duration>.sum(): google.protobuf.Duration', (l) => {
    let n = 0n
    for (const d of l) n += d.seconds * 1000000000n + BigInt(d.nanos)
    return new Duration(n / 1000000000n, Number(n % 1000000000n))
  })
  env.registerFunction('list<A>.indexOf(A): int', (l, v) => BigInt(l.findIndex((x) => deepEqual(x, v))))
  env.registerFunction('list<A>.lastIndexOf(A): int', (l, v) => {
    for (let i = l.length - 1; i >= 0; i--) if (deepEqual(l[i], v)) return BigInt(i)
    return -1n
  })
  env.registerFunction('list<A>.includes(A): bool', (l, v) => l.some((x) => deepEqual(x, v)))
  env.registerFunction('string.includes(string): bool', (s, v) => s.includes(v))
}

function registerRegex(env) {
  env.registerFunction('string.find(string): string', (s, re) => regexFind(s, re))
  env.registerFunction('matches(string, string): bool', (s, re) => regexMatches(s, re))
  env.registerFunction('string.findAll(string): list<string>', (s, re) => regexFindAll(s, re, -1n))
  env.registerFunction('string.findAll(string, int): list<string>', (s, re, n) => regexFindAll(s, re, n))
}

function registerUrls(env) {
  class URL {
    constructor(parts) {
      Object.assign(this, parts)
    }
  }
  env.registerType('kubernetes.URL', URL)
  const parse = (s) => {
    const r = parseRequestURI(s)
    if (r.error) throw fail(`URL parse error during conversion from string: ${r.error}`)
    return new URL(r.url)
  }
  env.registerFunction('url(string): kubernetes.URL', parse)
  try {
    env.registerOperator('kubernetes.URL == kubernetes.URL', (a, b) => deepEqual({ ...a }, { ...b }))
  } catch (err) {
    if (!/overlaps/.test(err.message)) throw err
  }
  env.registerFunction('isURL(string): bool', (s) => !parseRequestURI(s).error)
  env.registerFunction('kubernetes.URL.getScheme(): string', (u) => u.scheme)
  env.registerFunction('kubernetes.URL.getHost(): string', (u) => u.host)
  env.registerFunction('kubernetes.URL.getHostname(): string', (u) => u.hostname)
  env.registerFunction('kubernetes.URL.getPort(): string', (u) => u.port)
  env.registerFunction('kubernetes.URL.getEscapedPath(): string', (u) => u.escapedPath)
  env.registerFunction('kubernetes.URL.getQuery(): map<string, list<string>>', (u) => {
    const o = {}
    for (const [k, v] of u.query) (o[k] ??= []).push(v)
    return o
  })
}

/** Code points, so indexes agree with cel-go (which indexes runes, not UTF-16 units). */
const runes = (s) => Array.from(s)

function registerStrings(env) {
  env.registerFunction('string.charAt(int): string', (s, i) => {
    const r = runes(s)
    if (i < 0n || i > BigInt(r.length)) throw fail(`index out of range: ${i}`)
    return r[Number(i)] ?? ''
  })
  env.registerFunction('string.replace(string, string): string', (s, a, b) => s.split(a).join(b))
  env.registerFunction('string.replace(string, string, int): string', (s, a, b, n) => {
    if (n < 0n) return s.split(a).join(b)
    let out = s
    let from = 0
    for (let k = 0n; k < n; k++) {
      const i = out.indexOf(a, from)
      if (i < 0) break
      out = out.slice(0, i) + b + out.slice(i + a.length)
      from = i + b.length + (a.length === 0 ? 1 : 0)
    }
    return out
  })
  env.registerFunction('string.split(string, int): list<string>', (s, sep, n) => {
    if (n === 0n) return []
    const all = s.split(sep)
    if (n < 0n || BigInt(all.length) <= n) return all
    const k = Number(n)
    return [...all.slice(0, k - 1), all.slice(k - 1).join(sep)]
  })
  env.registerFunction('string.reverse(): string', (s) => runes(s).reverse().join(''))
  env.registerFunction('string.format(list): string', (s, args) => format(s, args))
}

/** Standard conversions the base library lacks: int(uint), int(timestamp), string(timestamp|duration). */
function registerConversions(env) {
  const MAX_INT = 9223372036854775807n
  env.registerFunction('int(uint): int', (u) => {
    const v = u.valueOf()
    if (v > MAX_INT) throw fail('integer overflow')
    return v
  })
  env.registerFunction('int(google.protobuf.Timestamp): int', (t) => BigInt(Math.floor(t.getTime() / 1000)))
  env.registerFunction('string(google.protobuf.Timestamp): string', (t) => t.toISOString().replace(/\.000Z$/, 'Z').replace(/(\.\d*?)0+Z$/, '$1Z'))
  env.registerFunction('string(google.protobuf.Duration): string', (d) => {
    const total = d.seconds * 1000000000n + BigInt(d.nanos)
    const neg = total < 0n
    const abs = neg ? -total : total
    const frac = abs % 1000000000n
    return `${neg ? '-' : ''}${abs / 1000000000n}${frac ? '.' + String(frac).padStart(9, '0').replace(/0+$/, '') : ''}s`
  })
}

/** Optional helpers the base library lacks: optional.ofNonZeroValue and optional equality. */
function registerOptionals(env) {
  const isZero = (v) =>
    v === null || v === undefined || v === '' || v === 0 || v === 0n || v === false ||
    (v instanceof UnsignedInt && v.valueOf() === 0n) || (v instanceof Uint8Array && v.length === 0) ||
    (Array.isArray(v) && v.length === 0) || (v instanceof Map && v.size === 0) ||
    (v && (v.constructor === Object || v.constructor === undefined) && Object.keys(v).length === 0)
  env.registerFunction('OptionalNamespace.ofNonZeroValue(dyn): optional<dyn>', (_, v) => (isZero(v) ? Optional.none() : Optional.of(v)))
  const eq = (a, b) => a.hasValue() === b.hasValue() && (!a.hasValue() || deepEqual(a.value(), b.value()))
  env.registerOperator('optional<dyn> == optional<dyn>', eq)
}

/** The authorizer library; decisions come from the host through `authorize(json) -> json`. */
function registerAuthz(env, authorize) {
  class Authorizer {
    constructor(user) {
      this.user = user
    }
  }
  class PathCheck {
    constructor(a, path) {
      Object.assign(this, { a, path })
    }
  }
  class ResourceCheck {
    constructor(a, attrs) {
      Object.assign(this, { a, attrs })
    }
  }
  class Decision {
    constructor(d) {
      Object.assign(this, d)
    }
  }
  env.registerType('kubernetes.authorization.Authorizer', Authorizer)
  env.registerType('kubernetes.authorization.PathCheck', PathCheck)
  env.registerType('kubernetes.authorization.ResourceCheck', ResourceCheck)
  env.registerType('kubernetes.authorization.Decision', Decision)
  const A = 'kubernetes.authorization.Authorizer'
  const R = 'kubernetes.authorization.ResourceCheck'
  const D = 'kubernetes.authorization.Decision'
  const with_ = (rc, k, v) => new ResourceCheck(rc.a, { ...rc.attrs, [k]: v })
  env.registerFunction(`${A}.path(string): kubernetes.authorization.PathCheck`, (a, p) => new PathCheck(a, p))
  class GroupCheck {
    constructor(a, group) {
      Object.assign(this, { a, group })
    }
  }
  env.registerType('kubernetes.authorization.GroupCheck', GroupCheck)
  env.registerFunction(`${A}.group(string): kubernetes.authorization.GroupCheck`, (a, g) => new GroupCheck(a, g))
  env.registerFunction(`kubernetes.authorization.GroupCheck.resource(string): ${R}`, (g, r) => new ResourceCheck(g.a, { group: g.group, resource: r }))
  for (const f of ['subresource', 'namespace', 'name']) env.registerFunction(`${R}.${f}(string): ${R}`, (rc, v) => with_(rc, f, v))
  env.registerFunction(`${A}.serviceAccount(string, string): ${A}`, (a, ns, n) => new Authorizer(`system:serviceaccount:${ns}:${n}`))
  const decide = (req) => new Decision(JSON.parse(authorize(JSON.stringify(req))))
  env.registerFunction(`kubernetes.authorization.PathCheck.check(string): ${D}`, (pc, verb) => decide({ user: pc.a.user, path: pc.path, verb }))
  env.registerFunction(`${R}.check(string): ${D}`, (rc, verb) => decide({ user: rc.a.user, ...rc.attrs, verb }))
  env.registerFunction(`${D}.allowed(): bool`, (d) => d.decision === 'allow')
  env.registerFunction(`${D}.reason(): string`, (d) => d.reason ?? '')
  env.registerFunction(`${D}.errored(): bool`, (d) => Boolean(d.error))
  env.registerFunction(`${D}.error(): string`, (d) => d.error ?? '')
  return Authorizer
}

/** Registers only what the base library does not already declare (it has e.g. split(string, int)). */
function tolerant(env) {
  return {
    registerType: (...a) => env.registerType(...a),
    registerOperator: (...a) => env.registerOperator(...a),
    registerFunction(sig, fn) {
      try {
        env.registerFunction(sig, fn)
      } catch (err) {
        if (!/overlaps with existing overload/.test(err.message)) throw err
      }
    },
  }
}

/** cel-go's ext.Sets: sets.contains, sets.equivalent, sets.intersects over lists (numeric equality across types). */
function registerSets(env, baseEnv) {
  class SetsNamespace {
    static celNamespace = true
  }
  baseEnv.registerType('SetsNamespace', SetsNamespace)
  baseEnv.registerConstant('sets', 'SetsNamespace', new SetsNamespace())
  const has = (l, v) => l.some((x) => deepEqual(numeric(x), numeric(v)))
  env.registerFunction('SetsNamespace.contains(list, list): bool', (_, a, b) => b.every((x) => has(a, x)))
  env.registerFunction('SetsNamespace.equivalent(list, list): bool', (_, a, b) => b.every((x) => has(a, x)) && a.every((x) => has(b, x)))
  env.registerFunction('SetsNamespace.intersects(list, list): bool', (_, a, b) => a.some((x) => has(b, x)))
}

const numeric = (v) => (v instanceof UnsignedInt ? v.valueOf() : Array.isArray(v) ? v.map(numeric) : v)

export function registerKubernetesLibraries(baseEnv, { authorize } = {}) {
  const env = tolerant(baseEnv)
  registerSets(env, baseEnv)
  registerConversions(env)
  registerBytesOrder(env)
  registerOptionals(env)
  registerLists(env)
  registerRegex(env)
  registerUrls(env)
  registerStrings(env)
  registerExtensions(baseEnv, env)
  registerQuantity(baseEnv, env)
  registerOptionalMacros(baseEnv, Optional)
  registerTwoVarComprehensions((sig, fn) => env.registerFunction(sig, fn))
  return { Authorizer: authorize ? registerAuthz(env, authorize) : undefined, deepEqual }
}

export { deepEqual }
