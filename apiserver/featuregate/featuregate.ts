// Feature gates shared by the API server and the orchlet: `--feature-gates A=true,B=false`, AllAlpha/AllBeta, lookups.

import { DEFAULT_FEATURE_GATES } from './gates.js'

export type FeatureStage = 'ALPHA' | 'BETA' | 'GA' | 'DEPRECATED'

export interface FeatureSpec {
  stage: FeatureStage
  default: boolean
  /** A gate that may not be set to anything but its default (GA or deprecated features on their way out). */
  lockToDefault?: boolean
}

export type FeatureTable = Readonly<Record<string, FeatureSpec>>

export type FeatureGateErrorCode = 'FEATURE_GATE_UNKNOWN' | 'FEATURE_GATE_INVALID_VALUE' | 'FEATURE_GATE_LOCKED'

export class FeatureGateError extends Error {
  readonly code: FeatureGateErrorCode
  /** The `name=value` pair at fault, for callers that name the option it came from. */
  readonly pair: string
  constructor (code: FeatureGateErrorCode, pair: string, message: string) {
    super(message)
    this.name = 'FeatureGateError'
    this.code = code
    this.pair = pair
  }
}

/** The resolved gates: read-only after construction. */
export interface FeatureGates {
  /** Whether a gate is on; an unregistered name throws (a programming error, as Kubernetes panics). */
  enabled (name: string): boolean
  /** The values given explicitly (after AllAlpha/AllBeta expansion is NOT applied). */
  explicit (): Record<string, boolean>
  /** Every gate with its resolved value, sorted by name. */
  all (): Array<{ name: string, stage: FeatureStage, default: boolean, enabled: boolean }>
  /** `Name=true|false (STAGE - default=x)` lines, for `--help`. */
  describe (): string[]
}

const SPECIAL: Record<string, FeatureStage> = { AllAlpha: 'ALPHA', AllBeta: 'BETA' }

const TRUE = ['1', 't', 'T', 'true', 'TRUE', 'True']
const FALSE = ['0', 'f', 'F', 'false', 'FALSE', 'False']

/** Parses `A=true,B=false` (blank items skipped); a value that is not a Go bool is an error. */
export function parseFeatureGateList (text: string): Record<string, boolean> {
  const out: Record<string, boolean> = {}
  for (const item of text.split(',')) {
    const pair = item.trim()
    if (pair === '') continue
    const at = pair.indexOf('=')
    if (at < 0) throw new FeatureGateError('FEATURE_GATE_INVALID_VALUE', pair, `missing bool value for ${pair}`)
    const name = pair.slice(0, at).trim()
    const value = pair.slice(at + 1).trim()
    if (TRUE.includes(value)) out[name] = true
    else if (FALSE.includes(value)) out[name] = false
    else throw new FeatureGateError('FEATURE_GATE_INVALID_VALUE', pair, `invalid value of ${name}=${value}: must be true or false`)
  }
  return out
}

export interface FeatureGateOptions {
  table?: FeatureTable
  /** Receives the warnings Kubernetes logs for setting GA or deprecated gates. */
  warn?: (message: string) => void
}

/**
 * Resolves gate values the way Kubernetes' featuregate.Set does: unknown gates and locked gates set off their
 * default are errors; AllAlpha/AllBeta set every gate of their stage that was not given explicitly.
 */
export function createFeatureGates (values: Record<string, boolean> = {}, opts: FeatureGateOptions = {}): FeatureGates {
  const table = opts.table ?? DEFAULT_FEATURE_GATES
  const enabled = new Map<string, boolean>()
  for (const [name, value] of Object.entries(values)) {
    const spec = table[name]
    const pair = `${name}=${String(value)}`
    if (spec === undefined) throw new FeatureGateError('FEATURE_GATE_UNKNOWN', pair, `unrecognized feature gate: ${name}`)
    if (spec.lockToDefault === true && spec.default !== value) {
      throw new FeatureGateError('FEATURE_GATE_LOCKED', pair, `cannot set feature gate ${name} to ${String(value)}, feature is locked to ${String(spec.default)}`)
    }
    enabled.set(name, value)
    if (spec.stage === 'DEPRECATED') opts.warn?.(`Setting deprecated feature gate ${name}=${String(value)}. It will be removed in a future release.`)
    else if (spec.stage === 'GA') opts.warn?.(`Setting GA feature gate ${name}=${String(value)}. It will be removed in a future release.`)
  }
  const explicit = Object.fromEntries(enabled)
  for (const [special, stage] of Object.entries(SPECIAL)) {
    const on = enabled.get(special)
    if (on === undefined) continue
    for (const [name, spec] of Object.entries(table)) {
      if (spec.stage === stage && !(name in explicit)) enabled.set(name, on)
    }
  }
  const isOn = (name: string): boolean => {
    const v = enabled.get(name)
    if (v !== undefined) return v
    const spec = table[name]
    if (spec === undefined) throw new FeatureGateError('FEATURE_GATE_UNKNOWN', name, `feature gate ${name} is not registered`)
    return spec.default
  }
  return {
    enabled: isOn,
    explicit: () => ({ ...explicit }),
    all: () => Object.keys(table).sort().map(name => ({ name, stage: table[name].stage, default: table[name].default, enabled: isOn(name) })),
    describe: () => Object.keys(table).sort().map(name => {
      const s = table[name]
      return `${name}=true|false (${s.stage} - default=${String(s.default)})`
    })
  }
}
