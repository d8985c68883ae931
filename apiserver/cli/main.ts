// The `orch` command: `up`, `apiserver`, `version`, `--help`. Returns an exit code instead of exiting, so tests can call it.

import { hostname } from 'node:os'
import { pino, type Logger } from 'pino'
import { versionInfo } from '../endpoints/version.js'
import { flagHelp, parseFlags, UsageError, type FlagSpec } from './args.js'

const SERVE_FLAGS: FlagSpec[] = [
  { name: 'data-dir', kind: 'string', help: 'directory of the LMDB store and the kubeconfig', default: './.orch' },
  { name: 'port', kind: 'int', help: 'port to serve on; 0 picks a free port', default: 6443 },
  { name: 'bind-address', kind: 'string', help: 'address to listen on', default: '127.0.0.1' },
  { name: 'log-level', kind: 'string', help: 'pino log level (trace, debug, info, warn, error)', default: 'info' }
]

const NODE_FLAGS: FlagSpec[] = [
  { name: 'orchlet', kind: 'bool', help: 'run an orchlet for this machine (up only)', default: true },
  { name: 'node-name', kind: 'string', help: 'name of the local node (default: the hostname)' },
  { name: 'orchlet-port', kind: 'int', help: 'serving port of the local orchlet; 0 picks a free port (default: 10250, or 0 when --port is 0)' },
  { name: 'orchlet-config', kind: 'string', help: 'OrchletConfiguration file for the local orchlet (replaces the generated one)' }
]

const USAGE = `orch: a small Kubernetes-style control plane

Usage:
  orch up [flags]         start the control plane and an orchlet for this machine, and write DIR/kubeconfig
  orch apiserver [flags]  start the API server alone (same flags; TLS and authentication options come later)
  orch version            print the version
  orch --help             show this help

Flags of up and apiserver:
${flagHelp(SERVE_FLAGS)}

Flags of up:
${flagHelp(NODE_FLAGS)}

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
        const specs = command === 'up' ? [...SERVE_FLAGS, ...NODE_FLAGS] : SERVE_FLAGS
        const { flags, rest } = parseFlags(args, [...specs, { name: 'help', kind: 'bool', help: 'show help' }])
        if (flags.help === true) { io.out(USAGE); return 0 }
        if (rest.length > 0) throw new UsageError(`unexpected argument: ${rest[0]}`)
        const port = flags.port as number
        if (port > 65535) throw new UsageError(`invalid value "${port}" for --port: must be at most 65535`)
        const level = flags['log-level'] as string
        const logger = (io.logger ?? makeLogger)(level)
        // Loaded on demand: help and version need neither the store nor the registry.
        const { runUntilSignalled } = await import('./up.js')
        const localNode = command === 'up' && flags.orchlet === true
          ? {
              nodeName: ((flags['node-name'] as string | undefined) ?? hostname()).toLowerCase(),
              port: (flags['orchlet-port'] as number | undefined) ?? (port === 0 ? 0 : 10250),
              configFile: flags['orchlet-config'] as string | undefined
            }
          : undefined
        return await runUntilSignalled({ dataDir: flags['data-dir'] as string, port, bindAddress: flags['bind-address'] as string, logger, localNode })
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
