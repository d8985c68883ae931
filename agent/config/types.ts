// OrchletConfig: the one typed configuration the whole agent reads, built once by loadOrchletConfig.

import type { FeatureGates } from '../../apiserver/featuregate/featuregate.js'
import type { FieldValues } from './file-fields.js'
import type { OptionValues } from './options.js'

export type { EvictionSignal, EvictionThreshold, ThresholdValue, Taint, MemoryReservation } from './resources.js'

/**
 * Every option of spec §3 by key (see OPTIONS for the flag and config field of each), every file-only field
 * (FILE_FIELDS), plus the resolved gates.
 * Units: durations are milliseconds; byte quantities are bytes; reserved cpu is millicores; percents are 0-100.
 * `imageServiceEndpoint` is already defaulted to `containerRuntimeEndpoint`.
 */
export type OrchletConfig = Readonly<Omit<OptionValues, 'help' | 'version' | 'featureGateValues'> & FieldValues & {
  /** The gate values as given (file, drop-ins, flags merged). */
  featureGateValues: Readonly<Record<string, boolean>>
  featureGates: FeatureGates
  /** No --orchconfig: static pods only. */
  standalone: boolean
}>

/** What loading needs from a logger (pino's methods fit). */
export interface ConfigLogger {
  warn (msg: string): void
}
