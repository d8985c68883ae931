// Value kinds of the option table: how one kind reads a command-line occurrence and a config-file value.

import { ValueError } from './errors.js'
import { formatDuration, parseDuration } from './duration.js'
import { formatBytes, parseByteSize, parseBytes } from './quantity.js'
import * as v from './values.js'
import * as r from './resources.js'
import { tracingClientSettings, type TracingSettings } from '../../apiserver/tracing/config.js'

/** How a setting's value is read from the config file and shown; enough for a field no flag sets. */
export interface FileKind<T> {
  /** Shown in `--help` as the value placeholder; bool flags show none. */
  readonly name: string
  /** The value of a setting with no default. */
  readonly zero: T
  /** A value decoded from JSON/YAML; throws ValueError naming the expected type. */
  file (value: unknown): T
  /** For help text defaults and error messages. */
  show (value: T): string
}

/** A kind a command-line flag can carry as well. */
export interface Kind<T> extends FileKind<T> {
  readonly isBool?: boolean
  /**
   * The value of every occurrence on the command line, in order. Scalars keep the last; lists append; maps merge.
   * Command-line values replace the config file's value whole, as pflag's first Set does.
   */
  flag (raws: string[]): T
}

function last (raws: string[]): string {
  return raws[raws.length - 1]
}

function typeName (x: unknown): string {
  if (x === null) return 'null'
  if (Array.isArray(x)) return 'a list'
  if (typeof x === 'object') return 'an object'
  return `${typeof x} ${JSON.stringify(x)}`
}

function wantString (x: unknown): string {
  if (typeof x !== 'string') throw new ValueError(`expected a string, got ${typeName(x)}`)
  return x
}

function wantStringMap (x: unknown): Record<string, string> {
  if (x === null || typeof x !== 'object' || Array.isArray(x)) throw new ValueError(`expected an object of strings, got ${typeName(x)}`)
  const out: Record<string, string> = {}
  for (const [k, val] of Object.entries(x)) {
    if (typeof val !== 'string') throw new ValueError(`expected a string for key ${k}, got ${typeName(val)}`)
    out[k] = val
  }
  return out
}

function wantList (x: unknown): unknown[] {
  if (!Array.isArray(x)) throw new ValueError(`expected a list, got ${typeName(x)}`)
  return x
}

/** A kind whose file form is the same string as its flag form. */
function fromString<T> (name: string, parse: (s: string) => T, zero: T, show: (t: T) => string = String): Kind<T> {
  return { name, zero, flag: raws => parse(last(raws)), file: x => parse(wantString(x)), show }
}

export const bool: Kind<boolean> = {
  name: 'bool',
  isBool: true,
  zero: false,
  flag: raws => v.parseBool(last(raws)),
  file: x => { if (typeof x !== 'boolean') throw new ValueError(`expected true or false, got ${typeName(x)}`); return x },
  show: String
}

function integer (name: string, min: number, max: number): Kind<number> {
  return {
    name,
    zero: 0,
    flag: raws => v.parseInteger(last(raws), min, max),
    file: x => {
      if (typeof x !== 'number' || !Number.isInteger(x)) throw new ValueError(`expected an integer, got ${typeName(x)}`)
      if (x < min || x > max) throw new ValueError(`must be between ${min} and ${max}`)
      return x
    },
    show: String
  }
}

export const int32 = integer('int32', -(2 ** 31), 2 ** 31 - 1)
export const int64 = integer('int64', Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER)

export const port: Kind<number> = { ...integer('port', -(2 ** 31), 2 ** 31 - 1), name: 'port' }

export const string = fromString('string', s => s, '')
export const path = fromString('path', s => s, '')
export const ip = fromString('ip', v.parseIp, '')
export const nodeIps = fromString<string[]>('ip[,ip]', v.parseNodeIps, [], t => t.join(','))
/** Milliseconds. */
export const duration: Kind<number> = fromString('duration', parseDuration, 0, formatDuration)
/** Bytes. */
export const bytes: Kind<number> = {
  ...fromString('quantity', parseBytes, 0, formatBytes),
  file: x => typeof x === 'number' ? parseBytes(String(x)) : parseBytes(wantString(x))
}
/** Bytes, also accepting `K` for 1000. */
export const byteSize: Kind<number> = {
  ...fromString('size', parseByteSize, 0, formatBytes),
  file: x => typeof x === 'number' ? parseByteSize(String(x)) : parseByteSize(wantString(x))
}

export function enumOf<T extends string> (values: readonly T[], zero?: T): Kind<T> {
  return fromString<T>(values.join('|'), s => v.parseEnum(s, values), zero ?? values[0])
}

/** An enum that may also be left empty (`--tls-min-version`). */
export function optionalEnum<T extends string> (values: readonly T[]): Kind<T | ''> {
  return fromString<T | ''>(values.join('|'), s => s.trim() === '' ? '' : v.parseEnum(s, values), '')
}

/** Comma list; repeated flags append, as pflag's StringSlice does. */
export const stringList: Kind<string[]> = {
  name: 'strings',
  zero: [],
  flag: raws => raws.flatMap(v.parseStringList),
  file: x => wantList(x).map(item => wantString(item)),
  show: t => t.join(',')
}

/** `k=v` map; the first flag replaces the file's map, later ones merge into it. */
export const stringMap: Kind<Record<string, string>> = {
  name: 'key=value,...',
  zero: {},
  flag: raws => Object.assign({}, ...raws.map(s => v.parseKeyValues(s))),
  file: wantStringMap,
  show: t => Object.entries(t).map(([k, x]) => `${k}=${x}`).join(',')
}

export const boolMap: Kind<Record<string, boolean>> = {
  name: 'key=true|false,...',
  zero: {},
  flag: raws => Object.assign({}, ...raws.map(v.parseKeyBools)),
  file: x => {
    if (x === null || typeof x !== 'object' || Array.isArray(x)) throw new ValueError(`expected an object of booleans, got ${typeName(x)}`)
    for (const [k, val] of Object.entries(x)) if (typeof val !== 'boolean') throw new ValueError(`expected true or false for ${k}, got ${typeName(val)}`)
    return { ...(x as Record<string, boolean>) }
  },
  show: t => Object.entries(t).map(([k, x]) => `${k}=${String(x)}`).join(',')
}

export const labels: Kind<Record<string, string>> = { ...stringMap, flag: raws => Object.assign({}, ...raws.map(v.parseLabels)) }

/** `name:value` headers, repeatable; the file form is `{name: [values]}`. */
export const headers: Kind<Record<string, string[]>> = {
  name: 'name:value,...',
  zero: {},
  flag: raws => raws.reduce<Record<string, string[]>>((acc, s) => v.parseHeaders(s, acc), {}),
  file: x => {
    if (x === null || typeof x !== 'object' || Array.isArray(x)) throw new ValueError(`expected an object of string lists, got ${typeName(x)}`)
    const out: Record<string, string[]> = {}
    for (const [k, list] of Object.entries(x)) out[k] = wantList(list).map(item => wantString(item))
    return out
  },
  show: t => Object.entries(t).flatMap(([k, l]) => l.map(x => `${k}:${x}`)).join(',')
}

/** A kind read as a string map and then converted (eviction maps, reservations); repeated flags merge their maps. */
function mapKind<T> (name: string, parseFlagMap: (s: string) => Record<string, string>, convert: (m: Record<string, string>) => T, zero: T, show: (t: T) => string): Kind<T> {
  return {
    name,
    zero,
    flag: raws => convert(Object.assign({}, ...raws.map(parseFlagMap))),
    file: x => convert(wantStringMap(x)),
    show
  }
}

function showAmount (x: r.ThresholdValue | undefined): string {
  return x === undefined ? '' : 'percent' in x ? `${x.percent}%` : formatBytes(x.quantity)
}

function showMap (m: Record<string, string>, sep = '='): string {
  return Object.entries(m).map(([key, x]) => `${key}${sep}${x}`).join(',')
}

export const thresholds = mapKind('signal<value,...', r.parseLessThanMap, r.thresholdsFromMap, [],
  t => showMap(Object.fromEntries(t.map(x => [x.signal, showAmount(x.value)])), '<'))
export const gracePeriods = mapKind('signal=duration,...', s => v.parseKeyValues(s), r.gracePeriodsFromMap, {},
  t => showMap(Object.fromEntries(Object.entries(t).map(([key, ms]) => [key, formatDuration(ms ?? 0)]))))
export const reclaims = mapKind('signal=quantity,...', s => v.parseKeyValues(s), r.reclaimsFromMap, {},
  t => showMap(Object.fromEntries(Object.entries(t).map(([key, x]) => [key, showAmount(x)]))))
export const reservation = mapKind('resource=quantity,...', s => v.parseKeyValues(s), r.reservationFromMap, {},
  t => showMap(Object.fromEntries(Object.entries(t).map(([key, n]) => [key, key === 'cpu' ? `${n}m` : key === 'pid' ? String(n) : formatBytes(n)]))))
export const qosReserved = mapKind('resource=percent,...', s => v.parseKeyValues(s), r.qosReservedFromMap, {},
  t => showMap(Object.fromEntries(Object.entries(t).map(([key, n]) => [key, `${n}%`]))))

export const taints: Kind<r.Taint[]> = {
  name: 'key=value:effect,...',
  zero: [],
  flag: raws => r.parseTaints(raws.join(',')),
  file: x => wantList(x).map(item => {
    if (item === null || typeof item !== 'object') throw new ValueError(`expected a taint object, got ${typeName(item)}`)
    const t = item as Record<string, unknown>
    return r.parseTaint(`${wantString(t.key)}${t.value === undefined ? '' : `=${wantString(t.value)}`}:${wantString(t.effect)}`)
  }),
  show: t => t.map(x => `${x.key}=${x.value}:${x.effect}`).join(',')
}

/** The file form is the same CPU list string (`reservedSystemCPUs: "0-1"`). */
export const cpuList = fromString<number[]>('cpus', v.parseCpuList, [], v.formatCpuList)

export const reservedMemory: Kind<r.MemoryReservation[]> = {
  name: 'node:type=quantity,...',
  zero: [],
  flag: raws => raws.flatMap(r.parseReservedMemory),
  file: x => wantList(x).map(item => {
    if (item === null || typeof item !== 'object') throw new ValueError(`expected {numaNode, limits}, got ${typeName(item)}`)
    const o = item as Record<string, unknown>
    if (typeof o.numaNode !== 'number' || !Number.isInteger(o.numaNode) || o.numaNode < 0) throw new ValueError('numaNode must be a non-negative integer')
    const limits: Record<string, number> = {}
    for (const [type, q] of Object.entries(wantStringMap(o.limits))) { r.checkMemoryType(type); limits[type] = parseBytes(q) }
    return { numaNode: o.numaNode, limits }
  }),
  show: t => t.map(m => `${m.numaNode}:${Object.entries(m.limits).map(([type, n]) => `${type}=${formatBytes(n)}`).join(',')}`).join(';')
}

/** `pattern=N` list; the file form is LoggingConfiguration's `[{filePattern, verbosity}]`. */
export const vmodule: Kind<Record<string, number>> = {
  name: 'pattern=N,...',
  zero: {},
  flag: raws => {
    const out: Record<string, number> = {}
    for (const [k, n] of Object.entries(Object.assign({}, ...raws.map(s => v.parseKeyValues(s))) as Record<string, string>)) out[k] = v.parseInteger(n, 0)
    return out
  },
  file: x => {
    const out: Record<string, number> = {}
    for (const item of wantList(x)) {
      const o = (item ?? {}) as Record<string, unknown>
      if (typeof o.verbosity !== 'number' || !Number.isInteger(o.verbosity) || o.verbosity < 0) throw new ValueError('verbosity must be a non-negative integer')
      out[wantString(o.filePattern)] = o.verbosity
    }
    return out
  },
  show: t => Object.entries(t).map(([k, n]) => `${k}=${n}`).join(',')
}

/** One entry of shutdownGracePeriodByPodPriority: pods of at least `priority` get `shutdownGracePeriodSeconds`. */
export interface PriorityGracePeriod { priority: number; shutdownGracePeriodSeconds: number }

function wantInteger (o: Record<string, unknown>, key: string, min: number, max: number): number {
  const x = o[key]
  if (typeof x !== 'number' || !Number.isInteger(x)) throw new ValueError(`${key} must be an integer, got ${typeName(x ?? null)}`)
  if (x < min || x > max) throw new ValueError(`${key} must be between ${min} and ${max}`)
  return x
}

/** KubeletConfiguration's `[{priority, shutdownGracePeriodSeconds}]`; a file-only kind (no flag carries it). */
export const priorityGracePeriods: FileKind<PriorityGracePeriod[]> = {
  name: '[{priority, shutdownGracePeriodSeconds}]',
  zero: [],
  file: x => {
    const seen = new Set<number>()
    return wantList(x).map(item => {
      if (item === null || typeof item !== 'object' || Array.isArray(item)) throw new ValueError(`expected {priority, shutdownGracePeriodSeconds}, got ${typeName(item)}`)
      const o = item as Record<string, unknown>
      for (const key of Object.keys(o)) if (key !== 'priority' && key !== 'shutdownGracePeriodSeconds') throw new ValueError(`unknown field ${key} in an entry`)
      const priority = wantInteger(o, 'priority', -(2 ** 31), 2 ** 31 - 1)
      if (seen.has(priority)) throw new ValueError(`priority ${priority} is listed twice`)
      seen.add(priority)
      return { priority, shutdownGracePeriodSeconds: wantInteger(o, 'shutdownGracePeriodSeconds', 0, Number.MAX_SAFE_INTEGER) }
    })
  },
  show: t => t.map(p => `${p.priority}=${p.shutdownGracePeriodSeconds}s`).join(',')
}

/** The kubelet's `tracing` field (the tracing client config): `endpoint`, `samplingRatePerMillion`; null when absent. */
export const tracingConfig: FileKind<TracingSettings | null> = {
  name: '{endpoint, samplingRatePerMillion}',
  zero: null,
  file: x => {
    if (x === null || typeof x !== 'object' || Array.isArray(x)) throw new ValueError(`expected {endpoint, samplingRatePerMillion}, got ${typeName(x)}`)
    const o = x as Record<string, unknown>
    for (const key of Object.keys(o)) if (key !== 'endpoint' && key !== 'samplingRatePerMillion') throw new ValueError(`unknown field ${key}`)
    return tracingClientSettings(o, msg => { throw new ValueError(msg) })
  },
  show: t => t === null ? '' : `${t.endpoint}${t.samplingRatePerMillion === undefined ? '' : ` at ${t.samplingRatePerMillion}/1000000`}`
}
