// Command-line tokens to option occurrences, with pflag's syntax: --name=value, --name value, bool --name, -v 3, --.

import { ConfigError } from './errors.js'
import { findOption, type OptionSpec } from './options.js'

export interface ParsedArgs {
  /** Raw values of every option given, in command-line order per option. */
  readonly values: Map<OptionSpec, string[]>
  /** Flags in the order first given, for deprecation warnings. */
  readonly order: OptionSpec[]
}

function lookup (name: string, shown: string): OptionSpec {
  // pflag's word-separator normalisation: --max_pods is --max-pods.
  const opt = findOption(name.replace(/_/g, '-'))
  if (opt === undefined || (shown.startsWith('--') && opt.flag !== name.replace(/_/g, '-'))) {
    throw new ConfigError('ORCHLET_CONFIG_UNKNOWN_FLAG', `unknown flag: ${shown}`)
  }
  return opt
}

function lookupQuiet (arg: string): OptionSpec | undefined {
  return findOption(arg.replace(/^--?/, '').replace(/_/g, '-'))
}

/** Splits argv (without node and script) into option values; positional arguments are an error. */
export function parseArgs (argv: readonly string[]): ParsedArgs {
  const values = new Map<OptionSpec, string[]>()
  const order: OptionSpec[] = []
  const add = (opt: OptionSpec, raw: string): void => {
    const list = values.get(opt)
    if (list === undefined) { values.set(opt, [raw]); order.push(opt) } else list.push(raw)
  }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    if (arg === '--') {
      if (i + 1 < argv.length) throw new ConfigError('ORCHLET_CONFIG_FLAG_SYNTAX', `unexpected argument "${argv[i + 1]}": orchlet takes only flags`)
      break
    }
    if (!arg.startsWith('-') || arg === '-') {
      const prev = order.length > 0 && i > 0 && argv[i - 1].startsWith('-') && !argv[i - 1].includes('=') ? lookupQuiet(argv[i - 1]) : undefined
      const hint = prev?.kind.isBool === true && /^(true|false)$/i.test(arg) ? ` (write bool flags as --${prev.flag}=${arg})` : ''
      throw new ConfigError('ORCHLET_CONFIG_FLAG_SYNTAX', `unexpected argument "${arg}": orchlet takes only flags${hint}`)
    }
    const long = arg.startsWith('--')
    const body = arg.slice(long ? 2 : 1)
    const eq = body.indexOf('=')
    let name = eq < 0 ? body : body.slice(0, eq)
    let inline = eq < 0 ? undefined : body.slice(eq + 1)
    if (!long && name.length > 1 && inline === undefined) {
      // -v3: a shorthand with its value attached.
      inline = name.slice(1)
      name = name[0]
    }
    if (!long && name.length !== 1) throw new ConfigError('ORCHLET_CONFIG_UNKNOWN_FLAG', `unknown shorthand flag: ${arg}`)
    const shown = long ? `--${name}` : `-${name}`
    const opt = lookup(name, shown)
    if (inline !== undefined) { add(opt, inline); continue }
    if (opt.kind.isBool === true) { add(opt, 'true'); continue }
    if (i + 1 >= argv.length) throw new ConfigError('ORCHLET_CONFIG_FLAG_SYNTAX', `flag needs an argument: ${shown}`)
    add(opt, argv[++i])
  }
  return { values, order }
}
