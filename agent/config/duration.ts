// Go/Kubernetes duration syntax (`2m0s`, `1h30m`, `100ms`, `-1s`) to milliseconds, and back to Go's canonical text.

import { ValueError } from './errors.js'

const UNIT_MS: Record<string, number> = {
  ns: 1e-6, us: 1e-3, 'µs': 1e-3, 'μs': 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000
}

const PART = /^(\d*)(?:\.(\d*))?(ns|us|µs|μs|ms|s|m|h)/

/** Parses a Go duration (as time.ParseDuration does) into milliseconds; fractions of a ms are kept. */
export function parseDuration (text: string): number {
  const raw = text.trim()
  if (raw === '') throw new ValueError('empty duration; use a form like 10s or 2m0s')
  let rest = raw
  let sign = 1
  if (rest[0] === '-' || rest[0] === '+') {
    if (rest[0] === '-') sign = -1
    rest = rest.slice(1)
  }
  if (rest === '0') return 0
  if (rest === '') throw new ValueError(`invalid duration "${raw}"`)
  let total = 0
  while (rest !== '') {
    const m = PART.exec(rest)
    if (m === null || (m[1] === '' && (m[2] === undefined || m[2] === ''))) {
      if (/^\d+(\.\d*)?$/.test(rest)) throw new ValueError(`missing unit in duration "${raw}" (use ns, us, ms, s, m or h)`)
      throw new ValueError(`invalid duration "${raw}"`)
    }
    const whole = m[1] === '' ? 0 : Number(m[1])
    const frac = m[2] === undefined || m[2] === '' ? 0 : Number(`0.${m[2]}`)
    total += (whole + frac) * UNIT_MS[m[3]]
    rest = rest.slice(m[0].length)
  }
  if (total > 9_223_372_036_854) throw new ValueError(`duration "${raw}" is out of range`)
  return sign * total
}

/** Formats milliseconds as Go's Duration.String() does: `0s`, `100ms`, `1.5s`, `2m0s`, `4h0m0s`. */
export function formatDuration (ms: number): string {
  if (ms === 0) return '0s'
  const neg = ms < 0
  let ns = Math.round(Math.abs(ms) * 1e6)
  const sign = neg ? '-' : ''
  if (ns < 1e9) {
    if (ns < 1e3) return `${sign}${ns}ns`
    if (ns < 1e6) return `${sign}${trim(ns / 1e3)}µs`
    return `${sign}${trim(ns / 1e6)}ms`
  }
  const h = Math.floor(ns / 3.6e12)
  ns -= h * 3.6e12
  const m = Math.floor(ns / 6e10)
  ns -= m * 6e10
  const s = trim(ns / 1e9)
  if (h > 0) return `${sign}${h}h${m}m${s}s`
  if (m > 0) return `${sign}${m}m${s}s`
  return `${sign}${s}s`
}

function trim (n: number): string {
  return String(Number(n.toFixed(9)))
}
