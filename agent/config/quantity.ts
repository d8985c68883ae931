// Kubernetes resource quantities (`100Mi`, `1.5Gi`, `500m`, `1e3`, `2k`) to numbers in base units.

import { ValueError } from './errors.js'

const BINARY: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 }
const DECIMAL: Record<string, number> = { n: 1e-9, u: 1e-6, m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18 }

const QUANTITY = /^([+-]?(?:\d+(?:\.\d*)?|\.\d+))(Ki|Mi|Gi|Ti|Pi|Ei|[eE][+-]?\d+|[numkMGTPE]?)$/

/** Parses a quantity to its value in base units (bytes for memory, cores for cpu: `500m` is 0.5). */
export function parseQuantity (text: string): number {
  const raw = text.trim()
  const m = QUANTITY.exec(raw)
  if (m === null) throw new ValueError(`"${raw}" is not a quantity (forms like 128974848, 129e6, 129M, 123Mi, 500m)`)
  const num = Number(m[1])
  const suffix = m[2]
  let factor: number
  if (suffix in BINARY) factor = BINARY[suffix]
  else if (suffix[0] === 'e' || suffix[0] === 'E') factor = 10 ** Number(suffix.slice(1))
  else factor = DECIMAL[suffix]
  const value = num * factor
  if (!Number.isFinite(value)) throw new ValueError(`quantity "${raw}" is out of range`)
  return value
}

/** A quantity of bytes, rounded up to a whole byte as Kubernetes does for Value(). */
export function parseBytes (text: string): number {
  const v = parseQuantity(text)
  if (v < 0) throw new ValueError(`quantity "${text.trim()}" must not be negative`)
  return Math.ceil(v)
}

/** A byte size where `K` also means 1000 (the logging options accept 512, 1K, 2Ki, 3M). */
export function parseByteSize (text: string): number {
  const raw = text.trim()
  return parseBytes(raw.endsWith('K') ? `${raw.slice(0, -1)}k` : raw)
}

/** Millis of a quantity (cpu `500m` -> 500, `2` -> 2000), rounded up as MilliValue() does. */
export function toMillis (value: number): number {
  return Math.ceil(Number((value * 1000).toFixed(6)))
}

/** Bytes as the largest binary suffix that divides them exactly (`1Gi`, `1536Ki`), else plain. */
export function formatBytes (n: number): string {
  if (n === 0 || !Number.isInteger(n)) return String(n)
  for (const [suffix, factor] of Object.entries(BINARY).reverse()) {
    if (n % factor === 0) return `${n / factor}${suffix}`
  }
  return String(n)
}

/** How Kubernetes keeps a quantity's suffix family (resource.Format): binary (Ki..), decimal (k..) or exponent (e3). */
export type QuantityFormat = 'BinarySI' | 'DecimalSI' | 'DecimalExponent'

export function quantityFormat (text: string): QuantityFormat {
  const m = QUANTITY.exec(text.trim())
  const suffix = m?.[2] ?? ''
  if (suffix in BINARY) return 'BinarySI'
  if (suffix[0] === 'e' || suffix[0] === 'E') return 'DecimalExponent'
  return 'DecimalSI'
}

const DECIMAL_SUFFIXES: Array<[number, string]> = [[18, 'E'], [15, 'P'], [12, 'T'], [9, 'G'], [6, 'M'], [3, 'k'], [0, '']]

/**
 * A quantity's canonical text (Quantity.String()) for a whole number in its format: binary values of 1024 and
 * above take the largest binary suffix that divides them exactly (`1536Mi`); smaller ones, and decimal ones, the
 * largest power of 1000 (`1500k`, `1M`); the exponent form writes that power as `e3`.
 */
export function formatQuantity (value: number, format: QuantityFormat): string {
  if (!Number.isInteger(value)) return String(value)
  if (format === 'BinarySI' && Math.abs(value) >= 1024) {
    for (const [suffix, factor] of Object.entries(BINARY).reverse()) if (value % factor === 0) return `${value / factor}${suffix}`
    return String(value)
  }
  if (value === 0) return '0'
  for (const [exp, suffix] of DECIMAL_SUFFIXES) {
    if (value % 10 ** exp !== 0) continue
    if (format === 'DecimalExponent') return exp === 0 ? String(value) : `${value / 10 ** exp}e${exp}`
    return `${value / 10 ** exp}${suffix}`
  }
  return String(value)
}

/** The canonical text of a quantity as written (`1024Ki` -> `1Mi`, `1000k` -> `1M`). */
export function canonicalQuantity (text: string): string {
  return formatQuantity(Math.ceil(parseQuantity(text)), quantityFormat(text))
}
