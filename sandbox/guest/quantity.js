// Guest side: Kubernetes' quantity library (resource.Quantity as `kubernetes.Quantity`), exact decimal arithmetic.
//
// A quantity is mantissa × 10^scale (BigInt mantissa, integer scale), like Kubernetes' inf.Dec. Binary
// suffixes are expanded exactly. Parsing rounds away from zero to nanos (9 fractional digits), as
// resource.ParseQuantity does. Exponents beyond ±1000 are rejected so no BigInt can grow without bound.

const fail = (msg) => Object.assign(new Error(msg), { celEval: true })

const DECIMAL = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 }
const BINARY = { Ki: 10n, Mi: 20n, Gi: 30n, Ti: 40n, Pi: 50n, Ei: 60n }
const QUANTITY = /^([+-]?)(\d+(?:\.\d*)?|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|[eE][+-]?\d+|[numkMGTPE])?$/
const MAX_EXPONENT = 1000
const MAX_INT = 9223372036854775807n
const MIN_INT = -9223372036854775808n

export class Quantity {
  constructor(m, s) {
    this.m = m
    this.s = s
  }

  /** Exact decimal text (`1500m` → "1.5", `2Ki` → "2048"), how the host sees a quantity result. */
  toString() {
    if (this.s >= 0) return String(this.m * pow10(this.s))
    const neg = this.m < 0n
    const digits = String(neg ? -this.m : this.m).padStart(-this.s + 1, '0')
    const cut = digits.length + this.s
    const frac = digits.slice(cut).replace(/0+$/, '')
    return `${neg ? '-' : ''}${digits.slice(0, cut)}${frac ? '.' + frac : ''}`
  }
}

const pow10 = (n) => 10n ** BigInt(n)

/** Parses a quantity string; returns undefined when it is not one. */
export function parseQuantity(str) {
  const g = QUANTITY.exec(str)
  if (!g) return undefined
  const [, sign, num, suffix = ''] = g
  const [ip, fp = ''] = num.split('.')
  let m = BigInt((ip || '0') + fp)
  let s = -fp.length
  if (suffix in BINARY) m <<= BINARY[suffix]
  else if (suffix in DECIMAL) s += DECIMAL[suffix]
  else {
    const e = Number(suffix.slice(1))
    if (!Number.isSafeInteger(e) || Math.abs(e) > MAX_EXPONENT) return undefined
    s += e
  }
  if (s < -9) {
    // round away from zero to nanos
    const d = pow10(-9 - s)
    m = m % d === 0n ? m / d : m / d + 1n
    s = -9
  }
  return new Quantity(sign === '-' ? -m : m, s)
}

/** Both mantissas on the smaller scale (scales are bounded, so the expansion is too). */
function align(a, b) {
  const s = Math.min(a.s, b.s)
  return [a.m * pow10(a.s - s), b.m * pow10(b.s - s), s]
}

export function compareQuantity(a, b) {
  const [x, y] = align(a, b)
  return x < y ? -1 : x > y ? 1 : 0
}

/** The int64 value when the quantity is an integer in range, else undefined. */
function asInt64(q) {
  let v
  if (q.s >= 0) v = q.m * pow10(q.s)
  else {
    const d = pow10(-q.s)
    if (q.m % d !== 0n) return undefined
    v = q.m / d
  }
  return v > MAX_INT || v < MIN_INT ? undefined : v
}

const plus = (a, b, neg) => {
  const [x, y, s] = align(a, b)
  return new Quantity(neg ? x - y : x + y, s)
}
const fromInt = (i) => new Quantity(i, 0)

export function registerQuantity(baseEnv, env) {
  baseEnv.registerType('kubernetes.Quantity', Quantity)
  const Q = 'kubernetes.Quantity'
  env.registerFunction(`quantity(string): ${Q}`, (s) => {
    const q = parseQuantity(s)
    if (!q) throw fail(`quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$': ${s}`)
    return q
  })
  env.registerFunction('isQuantity(string): bool', (s) => parseQuantity(s) !== undefined)
  env.registerFunction(`${Q}.sign(): int`, (q) => BigInt(q.m > 0n ? 1 : q.m < 0n ? -1 : 0))
  env.registerFunction(`${Q}.isInteger(): bool`, (q) => asInt64(q) !== undefined)
  env.registerFunction(`${Q}.asInteger(): int`, (q) => {
    const v = asInt64(q)
    if (v === undefined) throw fail('cannot convert value to integer')
    return v
  })
  env.registerFunction(`${Q}.asApproximateFloat(): double`, (q) => Number(`${q.m}e${q.s}`))
  env.registerFunction(`${Q}.compareTo(${Q}): int`, (a, b) => BigInt(compareQuantity(a, b)))
  env.registerFunction(`${Q}.isGreaterThan(${Q}): bool`, (a, b) => compareQuantity(a, b) > 0)
  env.registerFunction(`${Q}.isLessThan(${Q}): bool`, (a, b) => compareQuantity(a, b) < 0)
  env.registerFunction(`${Q}.add(${Q}): ${Q}`, (a, b) => plus(a, b, false))
  env.registerFunction(`${Q}.add(int): ${Q}`, (a, i) => plus(a, fromInt(i), false))
  env.registerFunction(`${Q}.sub(${Q}): ${Q}`, (a, b) => plus(a, b, true))
  env.registerFunction(`${Q}.sub(int): ${Q}`, (a, i) => plus(a, fromInt(i), true))
  env.registerOperator(`${Q} == ${Q}`, (a, b) => compareQuantity(a, b) === 0)
}
