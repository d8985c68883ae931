// Parsers for the structured node options: taints, eviction thresholds, reserved resources, NUMA memory, label keys.

import { ValueError } from './errors.js'
import { parseDuration } from './duration.js'
import { parseBytes, parseQuantity, toMillis } from './quantity.js'
import { parseKeyValues, parsePercent } from './values.js'

export type TaintEffect = 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute'
export interface Taint { key: string; value: string; effect: TaintEffect }

export const EVICTION_SIGNALS = [
  'memory.available', 'allocatableMemory.available', 'nodefs.available', 'nodefs.inodesFree', 'imagefs.available', 'imagefs.inodesFree', 'pid.available'
] as const
export type EvictionSignal = typeof EVICTION_SIGNALS[number]

/** An amount: an absolute quantity (bytes, inodes, pids) or a percent (0-100) of capacity. */
export type ThresholdValue = { quantity: number } | { percent: number }
export interface EvictionThreshold { signal: EvictionSignal; operator: 'LessThan'; value: ThresholdValue }

export interface MemoryReservation { numaNode: number; limits: Record<string, number> }

const NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/

/** A qualified name (`[prefix/]name`) as label and taint keys must be. */
export function checkQualifiedName (key: string): void {
  const parts = key.split('/')
  if (parts.length > 2) throw new ValueError(`key "${key}" must be a name with an optional DNS subdomain prefix and '/'`)
  const name = parts[parts.length - 1]
  if (parts.length === 2) {
    const prefix = parts[0]
    if (prefix === '' || prefix.length > 253 || !DNS1123_SUBDOMAIN.test(prefix)) throw new ValueError(`key "${key}" has an invalid prefix (must be a lowercase DNS subdomain)`)
  }
  if (name === '' || name.length > 63 || !NAME.test(name)) throw new ValueError(`key "${key}" is invalid (name part: up to 63 alphanumerics, '-', '_' or '.', starting and ending alphanumeric)`)
}

export function checkLabelValue (key: string, value: string): void {
  if (value === '') return
  if (value.length > 63 || !NAME.test(value)) throw new ValueError(`value "${value}" of "${key}" is invalid (up to 63 alphanumerics, '-', '_' or '.', starting and ending alphanumeric)`)
}

/** One `key=value:effect` or `key:effect` taint. */
export function parseTaint (spec: string): Taint {
  const t = spec.trim()
  const colon = t.lastIndexOf(':')
  if (colon < 0) throw new ValueError(`taint "${t}" must be key=value:effect or key:effect`)
  const effect = t.slice(colon + 1)
  if (effect !== 'NoSchedule' && effect !== 'PreferNoSchedule' && effect !== 'NoExecute') {
    throw new ValueError(`taint "${t}" has effect "${effect}"; must be NoSchedule, PreferNoSchedule or NoExecute`)
  }
  const kv = t.slice(0, colon)
  const eq = kv.indexOf('=')
  const key = eq < 0 ? kv : kv.slice(0, eq)
  const value = eq < 0 ? '' : kv.slice(eq + 1)
  checkQualifiedName(key)
  checkLabelValue(key, value)
  return { key, value, effect }
}

export function parseTaints (text: string): Taint[] {
  const out: Taint[] = []
  for (const item of text.split(',')) {
    if (item.trim() === '') continue
    const taint = parseTaint(item)
    if (out.some(o => o.key === taint.key && o.effect === taint.effect)) throw new ValueError(`taint "${item.trim()}" repeats key ${taint.key} with effect ${taint.effect}`)
    out.push(taint)
  }
  return out
}

function checkSignal (signal: string): EvictionSignal {
  if (!(EVICTION_SIGNALS as readonly string[]).includes(signal)) throw new ValueError(`unsupported eviction signal "${signal}" (known: ${EVICTION_SIGNALS.join(', ')})`)
  return signal as EvictionSignal
}

/** `10%` or a non-negative quantity. */
export function parseThresholdValue (signal: string, text: string): ThresholdValue {
  const t = text.trim()
  if (t.endsWith('%')) return { percent: parsePercent(t) }
  const q = parseQuantity(t)
  if (q < 0) throw new ValueError(`threshold for ${signal} must not be negative`)
  return { quantity: Math.ceil(q) }
}

/** The `signal<value` map of the eviction options (flag form); only `<` is an operator. */
export function parseLessThanMap (text: string): Record<string, string> {
  const out: Record<string, string> = {}
  for (const item of text.split(',')) {
    if (item.trim() === '') continue
    const at = item.indexOf('<')
    if (at < 0) throw new ValueError(`malformed threshold "${item.trim()}", expect signal<value (only < is allowed)`)
    out[item.slice(0, at).trim()] = item.slice(at + 1).trim()
  }
  return out
}

export function thresholdsFromMap (map: Record<string, string>): EvictionThreshold[] {
  return Object.entries(map).map(([signal, v]) => ({ signal: checkSignal(signal), operator: 'LessThan', value: parseThresholdValue(signal, v) }))
}

export function gracePeriodsFromMap (map: Record<string, string>): Partial<Record<EvictionSignal, number>> {
  const out: Partial<Record<EvictionSignal, number>> = {}
  for (const [signal, v] of Object.entries(map)) {
    const ms = parseDuration(v)
    if (ms < 0) throw new ValueError(`grace period for ${signal} must not be negative`)
    out[checkSignal(signal)] = ms
  }
  return out
}

export function reclaimsFromMap (map: Record<string, string>): Partial<Record<EvictionSignal, ThresholdValue>> {
  const out: Partial<Record<EvictionSignal, ThresholdValue>> = {}
  for (const [signal, v] of Object.entries(map)) out[checkSignal(signal)] = parseThresholdValue(signal, v)
  return out
}

const RESERVABLE = ['cpu', 'memory', 'ephemeral-storage', 'pid'] as const

/** `cpu=200m,memory=500Mi,...` to numbers: cpu in millicores, memory and storage in bytes, pid a count. */
export function reservationFromMap (map: Record<string, string>): Record<string, number> {
  const out: Record<string, number> = {}
  for (const [name, v] of Object.entries(map)) {
    if (!(RESERVABLE as readonly string[]).includes(name)) throw new ValueError(`cannot reserve "${name}" (only ${RESERVABLE.join(', ')})`)
    const q = parseQuantity(v)
    if (q < 0) throw new ValueError(`reservation of ${name} must not be negative`)
    out[name] = name === 'cpu' ? toMillis(q) : Math.ceil(q)
  }
  return out
}

/** `--qos-reserved memory=50%`: percent per resource; only memory is supported. */
export function qosReservedFromMap (map: Record<string, string>): Record<string, number> {
  const out: Record<string, number> = {}
  for (const [name, v] of Object.entries(map)) {
    if (name !== 'memory') throw new ValueError(`only memory can be reserved per QoS class, got "${name}"`)
    out[name] = parsePercent(v)
  }
  return out
}

const HUGEPAGES = /^hugepages-(.+)$/

/** Memory type names: `memory` or `hugepages-<size>`. */
export function checkMemoryType (name: string): void {
  const m = HUGEPAGES.exec(name)
  if (name === 'memory') return
  if (m !== null) {
    try { if (parseQuantity(m[1]) > 0) return } catch {}
  }
  throw new ValueError(`unknown memory type "${name}" (memory or hugepages-<size>)`)
}

/** `0:memory=1Gi,hugepages-1M=2Gi;1:memory=2Gi` (one flag may hold several NUMA nodes, `;`-separated). */
export function parseReservedMemory (text: string): MemoryReservation[] {
  const out: MemoryReservation[] = []
  for (const node of text.split(';')) {
    if (node.trim() === '') continue
    const parts = node.split(':')
    if (parts.length !== 2 || !/^\d+$/.test(parts[0].trim())) throw new ValueError(`"${node.trim()}" must be numaNode:type=quantity[,type=quantity...]`)
    const limits: Record<string, number> = {}
    for (const [type, q] of Object.entries(parseKeyValues(parts[1]))) {
      checkMemoryType(type)
      limits[type] = parseBytes(q)
    }
    if (Object.keys(limits).length === 0) throw new ValueError(`"${node.trim()}" reserves nothing`)
    out.push({ numaNode: Number(parts[0].trim()), limits })
  }
  return out
}
