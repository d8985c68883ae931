// Command-line flag parsing for `orch`: `--flag value`, `--flag=value`, and boolean switches; unknown flags are errors.

export class UsageError extends Error {
  readonly code = 'ORCH_ERR_USAGE'
  override readonly name = 'UsageError'
}

export interface FlagSpec {
  /** Flag name without dashes, e.g. `data-dir`. */
  name: string
  kind: 'string' | 'int' | 'bool'
  help: string
  default?: string | number | boolean
}

export type Flags = Record<string, string | number | boolean | undefined>

export function parseFlags (argv: string[], specs: FlagSpec[]): { flags: Flags; rest: string[] } {
  const flags: Flags = {}
  for (const s of specs) flags[s.name] = s.default
  const rest: string[] = []
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    if (!arg.startsWith('--')) { rest.push(arg); continue }
    const eq = arg.indexOf('=')
    const name = arg.slice(2, eq === -1 ? undefined : eq)
    const spec = specs.find(s => s.name === name)
    if (spec === undefined) throw new UsageError(`unknown flag: --${name}`)
    let value: string | undefined = eq === -1 ? undefined : arg.slice(eq + 1)
    if (spec.kind === 'bool') {
      flags[name] = value === undefined ? true : parseBool(name, value)
      continue
    }
    if (value === undefined) {
      value = argv[++i]
      if (value === undefined) throw new UsageError(`flag needs an argument: --${name}`)
    }
    flags[name] = spec.kind === 'int' ? parseInt10(name, value) : value
  }
  return { flags, rest }
}

function parseBool (name: string, v: string): boolean {
  if (v === 'true') return true
  if (v === 'false') return false
  throw new UsageError(`invalid value "${v}" for --${name}: want true or false`)
}

function parseInt10 (name: string, v: string): number {
  if (!/^\d+$/.test(v)) throw new UsageError(`invalid value "${v}" for --${name}: want a non-negative integer`)
  return Number(v)
}

export function flagHelp (specs: FlagSpec[]): string {
  return specs.map(s => {
    const arg = s.kind === 'bool' ? '' : s.kind === 'int' ? ' N' : ' VALUE'
    const def = s.default === undefined ? '' : ` (default ${JSON.stringify(s.default)})`
    return `  --${s.name}${arg}\n      ${s.help}${def}`
  }).join('\n')
}
