// The whole setting table: command-line options and file-only fields, as loading, validation and /configz walk it.

import { FILE_FIELDS, type FieldSpec } from './file-fields.js'
import { OPTIONS, type OptionSpec } from './options.js'

/** One setting: an option (a flag, maybe with a file field) or a field only the config file holds. */
export type SettingSpec = OptionSpec | FieldSpec

export const SETTINGS: readonly SettingSpec[] = [...OPTIONS, ...FILE_FIELDS]

export function isOption (s: SettingSpec): s is OptionSpec {
  return 'flag' in s
}

export function findSetting (key: string): SettingSpec | undefined {
  return SETTINGS.find(s => s.key === key)
}

/** How messages name a setting: `--flag`, or the field path of a file-only one. */
export function settingName (s: SettingSpec): string {
  return isOption(s) ? `--${s.flag}` : s.field
}

/** The value a setting has when neither a file nor a flag gives one. */
export function defaultValue (s: SettingSpec): unknown {
  if (s.default === undefined) return structuredClone(s.kind.zero)
  return isOption(s) ? s.kind.flag([s.default]) : s.kind.file(s.default)
}
