// The error catalogue of orchlet option and configuration loading: one class, stable codes, one-line messages.

export type ConfigErrorCode =
  | 'ORCHLET_CONFIG_UNKNOWN_FLAG' // a flag that is not in the option table
  | 'ORCHLET_CONFIG_FLAG_SYNTAX' // missing value, stray argument
  | 'ORCHLET_CONFIG_INVALID_VALUE' // a value that does not parse or breaks a rule
  | 'ORCHLET_CONFIG_FILE' // a config file or drop-in that cannot be read, parsed or decoded
  | 'ORCHLET_CONFIG_FEATURE_GATE' // unknown gate, bad bool, locked gate

/** A start-up error; `message` is the single line printed before exiting non-zero. */
export class ConfigError extends Error {
  readonly code: ConfigErrorCode
  /** For a value breaking a rule: which setting (by key), the value as shown and the rule (so a value from a file can be reported there). */
  readonly value?: { key: string, raw: string, rule: string }
  constructor (code: ConfigErrorCode, message: string, value?: { key: string, raw: string, rule: string }) {
    super(message)
    this.name = 'ConfigError'
    this.code = code
    this.value = value
  }
}

/** Thrown by value parsers: carries only the rule; the caller adds which option or field it belongs to. */
export class ValueError extends Error {
  constructor (rule: string) {
    super(rule)
    this.name = 'ValueError'
  }
}

/**
 * The one format every bad value uses: `invalid value for --flag (raw): rule`, a file-only field named by its path.
 * `key` (the setting's) is given for rules checked after loading, so a value a file gave can be reported at its field.
 */
export function invalidValue (name: string, raw: string, rule: string, key?: string): ConfigError {
  return new ConfigError('ORCHLET_CONFIG_INVALID_VALUE', `invalid value for ${name} (${raw}): ${rule}`, key === undefined ? undefined : { key, raw, rule })
}

export function invalidFlag (flag: string, raw: string, rule: string): ConfigError {
  return invalidValue(`--${flag}`, raw, rule)
}

/** Config file errors name the file and, when known, the field path. */
export function invalidFile (file: string, field: string | undefined, rule: string): ConfigError {
  const where = field === undefined ? '' : ` field ${field}:`
  return new ConfigError('ORCHLET_CONFIG_FILE', `invalid config file ${file}:${where} ${rule}`)
}
