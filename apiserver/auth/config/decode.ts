// Strict decoding of the API server's configuration files (YAML or JSON): version, kind, unknown fields, field types.

import { parse as parseYaml } from 'yaml'

/** The groups/versions the configuration kinds are read under: orch's own name and Kubernetes' names. */
export const CONFIG_API_VERSIONS = [
  'apiserver.orch.io/v1alpha1', 'apiserver.orch.io/v1beta1',
  'apiserver.config.k8s.io/v1alpha1', 'apiserver.config.k8s.io/v1beta1'
]

/**
 * The fields a kind allows: a nested shape, a list of one shape, or a leaf type. `duration` is a Go duration
 * string (`5m`, `30s`) decoded to milliseconds; `string?` keeps the difference between unset and empty.
 */
export type Shape = { [field: string]: FieldType }
export type FieldType = 'string' | 'boolean' | 'duration' | 'string[]' | Shape | [Shape]

/** A file that does not decode: the message reads as Kubernetes' decoder errors. */
export class ConfigDecodeError extends Error {
  override readonly name = 'ConfigDecodeError'
}

const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)

/** Parses `text` as `kind` under one of CONFIG_API_VERSIONS; durations become milliseconds, unknown fields are errors. */
export function decodeConfig (text: string, kind: string, shape: Shape): Record<string, unknown> {
  let doc: unknown
  try {
    doc = parseYaml(text)
  } catch (err) {
    throw new ConfigDecodeError(`error converting YAML to JSON: ${(err as Error).message}`)
  }
  if (!isRecord(doc)) throw new ConfigDecodeError(`couldn't get version/kind; json parse error: the file does not hold an object`)
  const apiVersion = doc.apiVersion
  const gotKind = doc.kind
  if (typeof gotKind !== 'string' || gotKind === '') throw new ConfigDecodeError(`Object 'Kind' is missing in '${JSON.stringify(doc)}'`)
  if (typeof apiVersion !== 'string' || apiVersion === '') throw new ConfigDecodeError(`Object 'apiVersion' is missing in '${JSON.stringify(doc)}'`)
  if (!CONFIG_API_VERSIONS.includes(apiVersion) || gotKind !== kind) {
    throw new ConfigDecodeError(`no kind "${gotKind}" is registered for version "${apiVersion}" in scheme`)
  }
  const { apiVersion: _v, kind: _k, ...body } = doc
  const unknown: string[] = []
  const out = decodeObject(body, shape, '', unknown)
  if (unknown.length > 0) throw new ConfigDecodeError(`strict decoding error: ${unknown.map(f => `unknown field "${f}"`).join(', ')}`)
  return out
}

function decodeObject (value: Record<string, unknown>, shape: Shape, path: string, unknown: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(value)) {
    const at = path === '' ? k : `${path}.${k}`
    if (!Object.hasOwn(shape, k)) { unknown.push(at); continue }
    const t = shape[k]
    if (v === null || v === undefined) continue
    out[k] = decodeField(v, t, at, unknown)
  }
  return out
}

function decodeField (v: unknown, t: FieldType, at: string, unknown: string[]): unknown {
  if (t === 'string' || t === 'boolean') {
    if (typeof v !== t) throw new ConfigDecodeError(`${at}: cannot decode ${typeof v} into a field of type ${t}`)
    return v
  }
  if (t === 'duration') {
    if (typeof v !== 'string') throw new ConfigDecodeError(`${at}: cannot decode ${typeof v} into a duration`)
    return goDurationMs(v)
  }
  if (t === 'string[]') {
    if (!Array.isArray(v) || v.some(s => typeof s !== 'string')) throw new ConfigDecodeError(`${at}: cannot decode into a list of strings`)
    return v
  }
  if (Array.isArray(t)) {
    if (!Array.isArray(v)) throw new ConfigDecodeError(`${at}: cannot decode ${typeof v} into a list`)
    return v.map((item, i) => {
      if (!isRecord(item)) throw new ConfigDecodeError(`${at}[${i}]: cannot decode into an object`)
      return decodeObject(item, t[0], `${at}[${i}]`, unknown)
    })
  }
  if (!isRecord(v)) throw new ConfigDecodeError(`${at}: cannot decode into an object`)
  return decodeObject(v, t, at, unknown)
}

const UNIT_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 }

/** A Go duration (`-1m30s`, `500ms`, `0`) in milliseconds; `time: invalid duration "x"` otherwise. */
export function goDurationMs (text: string): number {
  const m = /^([-+]?)(.*)$/.exec(text)!
  const body = m[2]
  if (body === '0') return 0
  const re = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)/gy
  let total = 0
  let end = 0
  for (let p = re.exec(body); p !== null; p = re.exec(body)) {
    total += Number(p[1]) * UNIT_MS[p[2]]
    end = re.lastIndex
  }
  if (body === '' || end !== body.length) throw new ConfigDecodeError(`time: invalid duration ${JSON.stringify(text)}`)
  return m[1] === '-' ? -total : total
}

/** A duration as Go's time.Duration.String() prints it (`5m0s`, `30s`, `1h0m0s`, `500ms`). */
export function goDurationString (ms: number): string {
  if (ms === 0) return '0s'
  const sign = ms < 0 ? '-' : ''
  let rest = Math.abs(ms)
  if (rest < 1000) return `${sign}${rest}ms`
  const h = Math.floor(rest / 3_600_000)
  rest -= h * 3_600_000
  const m = Math.floor(rest / 60_000)
  rest -= m * 60_000
  const s = `${Number((rest / 1000).toFixed(9))}s`
  if (h > 0) return `${sign}${h}h${m}m${s}`
  if (m > 0) return `${sign}${m}m${s}`
  return `${sign}${s}`
}
