// `orchlet --help` text generated from the option table, and the `--version` line.

import { readFileSync } from 'node:fs'
import { createFeatureGates } from '../../apiserver/featuregate/featuregate.js'
import { CONFIG_FILE_DEPRECATION, OPTIONS, type OptionSpec } from './options.js'
import { FILE_FIELDS, type FieldSpec } from './file-fields.js'

/** Kubernetes release whose orchlet option set this is (spec §7); package.json may pin it as `orchVersion`. */
const KUBERNETES_RELEASE = 'v1.29.0'

/** `orchlet v1.29.0-orch`: the package's `orchVersion` field if present, else the emulated release with `-orch`. */
export function versionLine (packageJsonPath?: string): string {
  if (packageJsonPath !== undefined) {
    try {
      const pkg = JSON.parse(readFileSync(packageJsonPath, 'utf8')) as { orchVersion?: unknown }
      if (typeof pkg.orchVersion === 'string') return `orchlet ${pkg.orchVersion}`
    } catch {}
  }
  return `orchlet ${KUBERNETES_RELEASE}-orch`
}

function defaultText (opt: OptionSpec): string {
  if (opt.defaultText !== undefined) return ` (default ${opt.defaultText})`
  if (opt.default === undefined) return ''
  // The spec's own text of the default; quoted unless it is a number, bool or duration, as pflag shows them.
  const bare = ['bool', 'int32', 'int64', 'port', 'duration'].includes(opt.kind.name)
  return ` (default ${bare ? opt.default : `"${opt.default}"`})`
}

function line (opt: OptionSpec): string {
  const names = opt.short === undefined ? `      --${opt.flag}` : `  -${opt.short}, --${opt.flag}`
  const value = opt.kind.isBool === true ? '' : ` ${opt.kind.name}`
  const stage = opt.stage === undefined ? '' : `[${opt.stage}] `
  const dep = opt.deprecated === undefined ? '' : opt.deprecated === CONFIG_FILE_DEPRECATION ? ' (DEPRECATED: set it in the --config file)' : ` (DEPRECATED: ${opt.deprecated})`
  const gates = opt.flag === 'feature-gates' ? ['', 'Options are:', ...createFeatureGates().describe()].join('\n          ') : ''
  return `${names}${value}\n        ${stage}${opt.help}${defaultText(opt)}${dep}${gates}`
}

function fieldLine (f: FieldSpec): string {
  const shown = f.default === undefined ? '' : ` (default ${f.kind.show(f.kind.file(f.default))})`
  return `      ${f.field} ${f.kind.name}\n        ${f.help}${shown}`
}

export function helpText (): string {
  const head = [
    'orchlet: the orch node agent. It registers the node, runs the pods bound to it (or static pods when',
    'standalone) and keeps them healthy.',
    '',
    'Usage:',
    '  orchlet [flags]',
    '',
    'Most flags are better set in the file given by --config (kind OrchletConfiguration,',
    'apiVersion orchlet.config.orch.io/v1beta1); flags override the file and its drop-ins.',
    '',
    'Flags:'
  ]
  const fileOnly = ['', 'Config-file-only fields (no flag sets them):', ...FILE_FIELDS.map(fieldLine)]
  return [...head, ...[...OPTIONS].sort((a, b) => a.flag.localeCompare(b.flag)).map(line), ...fileOnly].join('\n') + '\n'
}
