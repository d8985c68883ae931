// The `orch` command: `up`, `apiserver`, `version`, `--help`. Returns an exit code instead of exiting, so tests can call it.

import { pino, type Logger } from 'pino'
import { versionInfo } from '../endpoints/version.js'
import { flagHelp, parseFlags, UsageError, type FlagSpec } from './args.js'

const SERVE_FLAGS: FlagSpec[] = [
  { name: 'data-dir', kind: 'string', help: 'directory of the LMDB store and the kubeconfig', default: './.orch' },
  { name: 'port', kind: 'int', help: 'port to serve on; 0 picks a free port', default: 6443 },
  { name: 'bind-address', kind: 'string', help: 'address to listen on', default: '127.0.0.1' },
  { name: 'log-level', kind: 'string', help: 'pino log level (trace, debug, info, warn, error)', default: 'info' }
]

const USAGE = `orch: a small Kubernetes-style control plane

Usage:
  orch up [flags]         start the control plane (API server and its controllers) and write DIR/kubeconfig
  orch apiserver [flags]  start the API server alone (same flags; TLS and authentication options come later)
  orch version            print the version
  orch --help             show this help

Flags of up and apiserver:
${flagHelp(SERVE_FLAGS)}

Plain HTTP only for now. Use: kubectl --kubeconfig DIR/kubeconfig get ns
`

export interface MainIo {
  out(text: string): void
  err(text: string): void
  /** Builds the logger (default: pino JSON lines on stdout, pino-pretty on a TTY). */
  logger?(level: string): Logger
}

const defaultIo: MainIo = {
  out: t => process.stdout.write(t),
  err: t => process.stderr.write(t)
}

function makeLogger (level: string): Logger {
  if (process.stdout.isTTY === true) {
    return pino({ level, transport: { target: 'pino-pretty', options: { colorize: true } } })
  }
  return pino({ level })
}

export async function main (argv: string[], io: MainIo = defaultIo): Promise<number> {
  const [command, ...args] = argv
  try {
    switch (command) {
      case undefined:
      case '--help':
      case '-h':
      case 'help':
        io.out(USAGE)
        return 0
      case 'version':
      case '--version': {
        const v = versionInfo()
        io.out(`orch ${v.gitVersion} (${v.platform}, ${v.goVersion})\n`)
        return 0
      }
      case 'up':
      case 'apiserver': {
        const { flags, rest } = parseFlags(args, [...SERVE_FLAGS, { name: 'help', kind: 'bool', help: 'show help' }])
        if (flags.help === true) { io.out(USAGE); return 0 }
        if (rest.length > 0) throw new UsageError(`unexpected argument: ${rest[0]}`)
        const port = flags.port as number
        if (port > 65535) throw new UsageError(`invalid value "${port}" for --port: must be at most 65535`)
        const level = flags['log-level'] as string
        const logger = (io.logger ?? makeLogger)(level)
        // Loaded on demand: help and version need neither the store nor the registry.
        const { runUntilSignalled } = await import('./up.js')
        return await runUntilSignalled({ dataDir: flags['data-dir'] as string, port, bindAddress: flags['bind-address'] as string, logger })
      }
      default:
        throw new UsageError(`unknown command "${command}"`)
    }
  } catch (err) {
    if (err instanceof UsageError) {
      io.err(`orch: ${err.message}\nRun 'orch --help' for usage.\n`)
      return 2
    }
    io.err(`orch: ${err instanceof Error ? err.message : String(err)}\n`)
    return 1
  }
}
