// loadOrchletConfig: defaults, then the config file, then drop-ins, then flags; gates resolved; validated once.

import { createFeatureGates, FeatureGateError } from '../../apiserver/featuregate/featuregate.js'
import { parseArgs } from './argv.js'
import { ConfigError, invalidFile, invalidFlag, ValueError } from './errors.js'
import { loadConfigFiles, type ReadFile } from './file.js'
import { OPTIONS, type OptionSpec } from './options.js'
import { defaultValue, findSetting, SETTINGS, type SettingSpec } from './settings.js'
import type { ConfigLogger, OrchletConfig } from './types.js'
import { validateConfig } from './validate.js'

export const DROPIN_DIR_ENV = 'ORCHLET_CONFIG_DROPIN_DIR_ALPHA'

export interface LoadDeps {
  logger: ConfigLogger
  readFile?: ReadFile
}

/** Values given on the command line, each occurrence checked alone first so an error names the exact text. */
function flagValues (argv: readonly string[], logger: ConfigLogger): Map<SettingSpec, unknown> {
  const { values, order } = parseArgs(argv)
  const out = new Map<SettingSpec, unknown>()
  for (const opt of order) {
    const raws = values.get(opt) as string[]
    for (const raw of raws) {
      try {
        opt.kind.flag([raw])
      } catch (err) {
        if (err instanceof ValueError) throw invalidFlag(opt.flag, raw, err.message)
        throw err
      }
    }
    try {
      out.set(opt, opt.kind.flag(raws))
    } catch (err) {
      if (err instanceof ValueError) throw invalidFlag(opt.flag, raws.join(','), err.message)
      throw err
    }
    if (opt.deprecated !== undefined) logger.warn(`Flag --${opt.flag} has been deprecated, ${opt.deprecated}`)
  }
  return out
}

export { defaultValue }

/**
 * Builds the one OrchletConfig from argv (without node and script) and the environment.
 * Throws ConfigError with a one-line message for any bad flag, file, gate or rule.
 */
export async function loadOrchletConfig (argv: readonly string[], env: Readonly<Record<string, string | undefined>>, deps: LoadDeps): Promise<OrchletConfig> {
  const flags = flagValues(argv, deps.logger)
  const byKey = (key: string): unknown => flags.get(OPTIONS.find(o => o.key === key) as OptionSpec)
  const configFile = byKey('config') as string | undefined
  const dropInDir = (byKey('configDir') as string | undefined) ?? env[DROPIN_DIR_ENV]
  const origins = new Map<SettingSpec, string>()
  const files = await loadConfigFiles(configFile, dropInDir, deps.readFile, origins)

  const values: Record<string, unknown> = {}
  const explicit = new Set<string>()
  for (const s of SETTINGS) {
    if (flags.has(s) || files.has(s)) explicit.add(s.key)
    values[s.key] = flags.has(s) ? flags.get(s) : files.has(s) ? files.get(s) : defaultValue(s)
  }
  // Gates merge key by key: a flag overrides the file's value for the gates it names, as the kubelet does.
  const gateValues = { ...(files.get(OPTIONS.find(o => o.key === 'featureGateValues') as OptionSpec) as Record<string, boolean> ?? {}), ...(byKey('featureGateValues') as Record<string, boolean> ?? {}) }
  let featureGates
  try {
    featureGates = createFeatureGates(gateValues, { warn: msg => deps.logger.warn(msg) })
  } catch (err) {
    if (err instanceof FeatureGateError) throw new ConfigError('ORCHLET_CONFIG_FEATURE_GATE', `invalid value for --feature-gates (${err.pair}): ${err.message}`)
    throw err
  }
  if (values.imageServiceEndpoint === '') values.imageServiceEndpoint = values.containerRuntimeEndpoint
  delete values.help
  delete values.version
  const config = { ...values, featureGateValues: gateValues, featureGates, standalone: values.orchconfig === '' } as unknown as OrchletConfig
  try {
    validateConfig(config, { logger: deps.logger, explicit })
  } catch (err) {
    // A rule broken by a value the file gave (and no flag overrode) is reported at the file's field.
    const setting = err instanceof ConfigError && err.value !== undefined ? findSetting(err.value.key) : undefined
    const file = setting === undefined || flags.has(setting) ? undefined : origins.get(setting)
    if (err instanceof ConfigError && setting !== undefined && file !== undefined) throw invalidFile(file, setting.field, `${err.value!.raw}: ${err.value!.rule}`)
    throw err
  }
  return config
}
