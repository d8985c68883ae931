// Parsers for the scalar and list option values: bools, integers, ports, IPs, enums, key=value maps, CPU lists, headers.

import { isIP } from 'node:net'
import { ValueError } from './errors.js'

/** Go's strconv.ParseBool spellings. */
export function parseBool (text: string): boolean {
  const t = text.trim()
  if (['1', 't', 'T', 'true', 'TRUE', 'True'].includes(t)) return true
  if (['0', 'f', 'F', 'false', 'FALSE', 'False'].includes(t)) return false
  throw new ValueError('must be true or false')
}

/** A decimal integer within [min, max] (int32 unless a wider range is passed). */
export function parseInteger (text: string, min = -(2 ** 31), max = 2 ** 31 - 1): number {
  const t = text.trim()
  if (!/^[+-]?\d+$/.test(t)) throw new ValueError('must be an integer')
  const n = Number(t)
  if (n < min || n > max) throw new ValueError(`must be between ${min} and ${max}`)
  return n
}

export function parseFloatValue (text: string): number {
  const t = text.trim()
  const n = Number(t)
  if (t === '' || !Number.isFinite(n)) throw new ValueError('must be a number')
  return n
}

export function parsePort (text: string): number {
  const n = parseInteger(text)
  if (n < 0 || n > 65535) throw new ValueError('must be a port number between 0 and 65535')
  return n
}

export function parseIp (text: string): string {
  const t = text.trim()
  if (isIP(t) === 0) throw new ValueError(`"${t}" is not a valid IP address`)
  return t
}

/** `--node-ip`: one IP, or a dual-stack pair with one IPv4 and one IPv6 address. */
export function parseNodeIps (text: string): string[] {
  const t = text.trim()
  if (t === '') return []
  const parts = t.split(',').map(p => p.trim())
  if (parts.length > 2) throw new ValueError('must be one IP or a dual-stack pair of two')
  const ips = parts.map(parseIp)
  if (ips.length === 2 && isIP(ips[0]) === isIP(ips[1])) throw new ValueError('a dual-stack pair needs one IPv4 and one IPv6 address')
  return ips
}

export function parseEnum<T extends string> (text: string, allowed: readonly T[]): T {
  const t = text.trim()
  if (!(allowed as readonly string[]).includes(t)) throw new ValueError(`must be one of ${allowed.join(', ')}`)
  return t as T
}

/** A comma list as pflag's StringSlice reads it (empty items dropped, spaces trimmed). */
export function parseStringList (text: string): string[] {
  return text.split(',').map(s => s.trim()).filter(s => s !== '')
}

/** `k=v,k2=v2` pairs; blank items skipped; every item must hold an `=`. */
export function parseKeyValues (text: string, sep = '='): Record<string, string> {
  const out: Record<string, string> = {}
  for (const item of text.split(',')) {
    if (item.trim() === '') continue
    const at = item.indexOf(sep)
    if (at < 0) throw new ValueError(`malformed pair "${item.trim()}", expect key${sep}value`)
    const key = item.slice(0, at).trim()
    if (key === '') throw new ValueError(`malformed pair "${item.trim()}", the key is empty`)
    out[key] = item.slice(at + sep.length).trim()
  }
  return out
}

/** `--feature-gates` style `A=true,B=false`. */
export function parseKeyBools (text: string): Record<string, boolean> {
  const out: Record<string, boolean> = {}
  for (const [k, v] of Object.entries(parseKeyValues(text))) {
    try {
      out[k] = parseBool(v)
    } catch {
      throw new ValueError(`value of ${k} must be true or false, got "${v}"`)
    }
  }
  return out
}

/** `--node-labels`: `k=v` list where a missing `=` means an empty value (as ConfigurationMap does). */
export function parseLabels (text: string): Record<string, string> {
  const out: Record<string, string> = {}
  for (const item of text.split(',')) {
    if (item.trim() === '') continue
    const at = item.indexOf('=')
    if (at < 0) out[item.trim()] = ''
    else out[item.slice(0, at).trim()] = item.slice(at + 1).trim()
  }
  return out
}

/** `name:value` header list; the same name keeps every value in order (ColonSeparatedMultimapStringString). */
export function parseHeaders (text: string, into: Record<string, string[]> = {}): Record<string, string[]> {
  for (const item of text.split(',')) {
    if (item.trim() === '') continue
    const at = item.indexOf(':')
    if (at < 0) throw new ValueError(`malformed pair "${item.trim()}", expect name:value`)
    const name = item.slice(0, at).trim()
    if (name === '') throw new ValueError(`malformed pair "${item.trim()}", the header name is empty`)
    ;(into[name] ??= []).push(item.slice(at + 1).trim())
  }
  return into
}

/** A Linux CPU list (`0-3,8`) to sorted CPU ids. */
export function parseCpuList (text: string): number[] {
  const cpus = new Set<number>()
  for (const item of text.split(',')) {
    const r = item.trim()
    if (r === '') continue
    const m = /^(\d+)(?:-(\d+))?$/.exec(r)
    if (m === null) throw new ValueError(`"${r}" is not a CPU or CPU range (forms like 0-3,8)`)
    const from = Number(m[1])
    const to = m[2] === undefined ? from : Number(m[2])
    if (to < from) throw new ValueError(`range "${r}" ends before it starts`)
    for (let c = from; c <= to; c++) cpus.add(c)
  }
  return [...cpus].sort((a, b) => a - b)
}

/** CPU ids back to the list form, ranges joined: [0,1,2,3,8] -> `0-3,8`. */
export function formatCpuList (cpus: readonly number[]): string {
  const parts: string[] = []
  for (let i = 0; i < cpus.length; i++) {
    let j = i
    while (j + 1 < cpus.length && cpus[j + 1] === cpus[j] + 1) j++
    parts.push(j === i ? String(cpus[i]) : `${cpus[i]}-${cpus[j]}`)
    i = j
  }
  return parts.join(',')
}

/** `10%` to 10; `0%`..`100%`. */
export function parsePercent (text: string): number {
  const t = text.trim()
  if (!/^[+-]?(\d+(\.\d*)?|\.\d+)%$/.test(t)) throw new ValueError(`"${t}" is not a percentage (like 10%)`)
  const n = Number(t.slice(0, -1))
  if (n < 0 || n > 100) throw new ValueError(`percentage ${t} must be between 0% and 100%`)
  return n
}
