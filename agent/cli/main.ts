// `orchlet [flags]`: parse and validate the options, answer --help/--version, then hand the config to runAgent.

import { acquireLockFile, applyOomScoreAdj, checkSwap } from '../node/process-guards.js'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { createLogger } from '../../apiserver/logging/logger.js'
import { runAgent, type RunningAgent } from '../agent.js'
import { parseArgs } from '../config/argv.js'
import { ConfigError } from '../config/errors.js'
import { helpText, versionLine } from '../config/help.js'
import { loadOrchletConfig } from '../config/load.js'
import { pack } from './pack.js'

export interface CliIo {
  stdout: (text: string) => void
  stderr: (text: string) => void
}

/** package.json sits two levels above this file both in the source tree and in dist/ (dist/agent/cli -> dist/../). */
function packageJsonPath (): string {
  const here = dirname(fileURLToPath(import.meta.url))
  const up = here.includes(`${'/'}dist${'/'}`) ? join(here, '..', '..', '..') : join(here, '..', '..')
  return join(up, 'package.json')
}

/** Runs the command; resolves to the exit code for bad input and --help/--version, or to undefined once the agent runs. */
export async function main (argv: readonly string[], env: Readonly<Record<string, string | undefined>>, io: CliIo): Promise<number | undefined> {
  if (argv[0] === 'pack') return pack(argv.slice(1), { stdout: io.stdout, stderr: io.stderr })
  // Until the options are read (their own warnings), the default format; then the one they ask for.
  const early = createLogger({ format: 'text', fd: 2, base: undefined })
  try {
    const args = parseArgs(argv)
    const asked = (flag: string): boolean => [...args.values].some(([o, raws]) => o.flag === flag && raws[raws.length - 1] !== 'false')
    if (asked('help')) { io.stdout(helpText()); return 0 }
    if (asked('version')) { io.stdout(`${versionLine(packageJsonPath())}\n`); return 0 }
    const config = await loadOrchletConfig(argv, env, { logger: early })
    const logger = createLogger({ format: config.loggingFormat, verbosity: config.verbosity, vmodule: config.vmodule, fd: 2, base: undefined })
    checkSwap(config.failSwapOn)
    let started: RunningAgent | undefined
    const onContention = (): void => {
      logger.info({ path: config.lockFile }, 'another process wants the lock file; exiting (--exit-on-lock-contention)')
      if (started === undefined) process.exit(0); else stop()
    }
    const lock = config.lockFile === '' ? undefined : await acquireLockFile(config.lockFile, { onContention: config.exitOnLockContention ? onContention : undefined })
    const oomProblem = applyOomScoreAdj(config.oomScoreAdj)
    if (oomProblem !== undefined) logger.warn({ oomScoreAdj: config.oomScoreAdj }, oomProblem)
    const agent = await runAgent(config, { logger })
    started = agent
    if (config.runOnce) {
      // --runonce: start the local pods, report how each one started, and exit.
      const result = await agent.podsStarted(config.runtimeRequestTimeout)
      for (const line of result.lines) io.stdout(`${line}\n`)
      await agent.stop({ stopPods: true })
      lock?.release()
      return result.ok ? 0 : 1
    }
    function stop (): void {
      agent.stop({ shutdown: true }).finally(() => lock?.release()).then(() => process.exit(0), (err: Error) => { io.stderr(`${err.message}\n`); process.exit(1) })
    }
    process.once('SIGINT', stop)
    process.once('SIGTERM', stop)
    return undefined
  } catch (err) {
    if (err instanceof ConfigError) { io.stderr(`${err.message}\n`); return 1 }
    io.stderr(`orchlet: ${(err as Error).message}\n`)
    return 1
  }
}

/** Entry used by bin/orchlet.js and by running this file directly. */
export async function cli (): Promise<void> {
  const code = await main(process.argv.slice(2), process.env, {
    stdout: t => process.stdout.write(t),
    stderr: t => process.stderr.write(t)
  })
  if (code !== undefined) process.exitCode = code
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await cli()
