// Command-line flag parsing for `orch`: `--flag value`, `--flag=value`, and boolean switches; unknown flags are errors.

export class UsageError extends Error {
  readonly code = 'ORCH_ERR_USAGE'
  override readonly name = 'UsageError'
}

export interface FlagSpec {
  /** Flag name without dashes, e.g. `data-dir`. */
  name: string
  /** `list`: repeatable, every value kept in order (`--orchlet-arg=--max-pods=50 --orchlet-arg=...`). */
  kind: 'string' | 'int' | 'bool' | 'duration' | 'list'
  /** A one-letter form taken with one dash (`-v 4`, `-v=4`), as Kubernetes' `-v`. */
  shorthand?: string
  help: string
  default?: string | number | boolean
}

export type Flags = Record<string, string | number | boolean | string[] | undefined>

export function parseFlags (argv: string[], specs: FlagSpec[]): { flags: Flags; rest: string[] } {
  const flags: Flags = {}
  for (const s of specs) flags[s.name] = s.default
  const rest: string[] = []
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    const short = /^-[^-]/.test(arg)
    if (!arg.startsWith('--') && !short) { rest.push(arg); continue }
    const eq = arg.indexOf('=')
    const given = arg.slice(short ? 1 : 2, eq === -1 ? undefined : eq)
    const spec = specs.find(s => short ? s.shorthand === given : s.name === given)
    if (spec === undefined) throw new UsageError(`unknown flag: ${short ? '-' : '--'}${given}`)
    const name = spec.name
    let value: string | undefined = eq === -1 ? undefined : arg.slice(eq + 1)
    if (spec.kind === 'bool') {
      flags[name] = value === undefined ? true : parseBool(name, value)
      continue
    }
    if (value === undefined) {
      value = argv[++i]
      if (value === undefined) throw new UsageError(`flag needs an argument: --${name}`)
    }
    if (spec.kind === 'list') { flags[name] = [...((flags[name] as string[] | undefined) ?? []), value]; continue }
    flags[name] = spec.kind === 'int' ? parseInt10(name, value) : spec.kind === 'duration' ? parseDuration(name, value) : value
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

const UNIT_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 }

/** A Go duration (`60s`, `1m30s`, `500ms`, `0`) in milliseconds, as Kubernetes' duration flags take it. */
export function parseDuration (name: string, v: string): number {
  if (v === '0') return 0
  const re = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/gy
  let total = 0
  let matched = 0
  for (let m = re.exec(v); m !== null; m = re.exec(v)) {
    total += Number(m[1]) * UNIT_MS[m[2]]
    matched = re.lastIndex
  }
  if (v === '' || matched !== v.length) throw new UsageError(`invalid value "${v}" for --${name}: want a duration such as 60s or 1m0s`)
  return total
}

export function flagHelp (specs: FlagSpec[]): string {
  return specs.map(s => {
    const arg = s.kind === 'bool' ? '' : s.kind === 'list' ? ' VALUE (repeatable)' : s.kind === 'int' ? ' N' : s.kind === 'duration' ? ' DURATION' : ' VALUE'
    const def = s.default === undefined ? '' : ` (default ${JSON.stringify(s.default)})`
    const short = s.shorthand === undefined ? '' : `-${s.shorthand}, `
    return `  ${short}--${s.name}${arg}\n      ${s.help}${def}`
  }).join('\n')
}
