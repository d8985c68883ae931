// --tracing-config-file: the TracingConfiguration kind (apiserver.orch.io/v1alpha1, spec document 2 §2.1), read strictly.

import { readFileSync } from 'node:fs'
import { parse } from 'yaml'

/** The tracing client's settings. `endpoint` defaults to the local collector; no rate means "follow the parent, else never". */
export interface TracingSettings {
  endpoint: string
  samplingRatePerMillion?: number
}

export const DEFAULT_TRACING_ENDPOINT = 'localhost:4317'
const API_VERSIONS = ['apiserver.orch.io/v1alpha1', 'apiserver.orch.io/v1beta1', 'apiserver.config.k8s.io/v1alpha1', 'apiserver.config.k8s.io/v1beta1']

export class TracingConfigError extends Error {
  readonly code = 'ORCH_ERR_TRACING_CONFIG'
  override readonly name = 'ConfigError'
}

/** Checks a decoded TracingConfiguration; every problem is one line naming the file and the field. */
export function tracingSettingsFrom (doc: unknown, file: string): TracingSettings {
  const fail = (msg: string): never => { throw new TracingConfigError(`--tracing-config-file ${file}: ${msg}`) }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) return fail('must hold a TracingConfiguration object')
  const o = doc as Record<string, unknown>
  if (!API_VERSIONS.includes(String(o.apiVersion))) fail(`apiVersion: Unsupported value: "${String(o.apiVersion)}": supported values: "${API_VERSIONS[0]}"`)
  if (o.kind !== 'TracingConfiguration') fail(`kind: Unsupported value: "${String(o.kind)}": supported values: "TracingConfiguration"`)
  for (const k of Object.keys(o)) if (!['apiVersion', 'kind', 'endpoint', 'samplingRatePerMillion'].includes(k)) fail(`unknown field "${k}"`)
  return tracingClientSettings(o, fail)
}

/**
 * The tracing client's members (`endpoint`, `samplingRatePerMillion`) of a TracingConfiguration or of the orchlet's
 * `tracing` field; `fail` reports a problem as one line.
 */
export function tracingClientSettings (o: Record<string, unknown>, fail: (msg: string) => never): TracingSettings {
  const settings: TracingSettings = { endpoint: DEFAULT_TRACING_ENDPOINT }
  if (o.endpoint !== undefined) {
    if (typeof o.endpoint !== 'string' || o.endpoint === '') fail('endpoint: Invalid value: must be a non-empty host:port')
    const endpoint = o.endpoint as string
    if (!/^(\[[0-9a-fA-F:.]+\]|[^:/\s]+):\d{1,5}$/.test(endpoint)) fail(`endpoint: Invalid value: "${endpoint}": must be host:port`)
    settings.endpoint = endpoint
  }
  if (o.samplingRatePerMillion !== undefined) {
    const r = o.samplingRatePerMillion
    if (typeof r !== 'number' || !Number.isInteger(r) || r < 0 || r > 1_000_000) {
      fail(`samplingRatePerMillion: Invalid value: ${JSON.stringify(r)}: must be an integer from 0 to 1000000`)
    }
    settings.samplingRatePerMillion = r as number
  }
  return settings
}

export function loadTracingConfig (file: string): TracingSettings {
  let text: string
  try { text = readFileSync(file, 'utf8') } catch (err) { throw new TracingConfigError(`--tracing-config-file ${file}: ${(err as Error).message}`) }
  let doc: unknown
  try { doc = parse(text) } catch (err) { throw new TracingConfigError(`--tracing-config-file ${file}: ${(err as Error).message.split('\n')[0]}`) }
  return tracingSettingsFrom(doc, file)
}
