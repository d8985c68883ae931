// The logging flags of every orch component (kube-apiserver's names): --logging-format, -v, --vmodule, --log-level.

import type { Logger } from 'pino'
import { createLogger, LoggingOptionError, parseLoggingFormat, parseVmodule } from '../logging/logger.js'
import { UsageError, type FlagSpec, type Flags } from './args.js'

export const LOGGING_FLAGS: FlagSpec[] = [
  { name: 'logging-format', kind: 'string', help: 'log format: text (human-readable lines) or json (one JSON object per line)', default: 'text' },
  { name: 'v', shorthand: 'v', kind: 'int', help: 'log verbosity: 0-3 info, 4-5 debug, 6 and above trace', default: 0 },
  { name: 'vmodule', kind: 'string', help: 'pattern=N,... verbosity per component (glob on the component name, e.g. scheduler=6); text format only' },
  { name: 'log-level', kind: 'string', help: 'pino log level (trace, debug, info, warn, error); wins over -v' }
]

/** The logger the flags ask for; a bad value is a usage error naming the flag. */
export function loggerFromFlags (flags: Flags): Logger {
  try {
    return createLogger({
      format: parseLoggingFormat(String(flags['logging-format'] ?? 'text')),
      verbosity: flags.v as number | undefined,
      vmodule: typeof flags.vmodule === 'string' ? parseVmodule(flags.vmodule) : undefined,
      level: flags['log-level'] as string | undefined
    })
  } catch (err) {
    if (err instanceof LoggingOptionError) throw new UsageError(err.message)
    throw err
  }
}

/** The pino level the flags ask for (for an injected logger factory). */
export function levelFromFlags (flags: Flags): string {
  const v = (flags.v as number | undefined) ?? 0
  return (flags['log-level'] as string | undefined) ?? (v >= 6 ? 'trace' : v >= 4 ? 'debug' : 'info')
}
