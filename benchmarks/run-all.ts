// Runs the hot-path harnesses one after another (never together: each measures against a peer in the same run)
// and gathers their JSON lines into benchmarks/results/summary.json.
// Run: npx tsx benchmarks/run-all.ts [name ...]   (default: every harness in HOT_PATHS; settings pass through the
// environment to each harness, e.g. ROUNDS=3). Prints one JSON line.

import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The harnesses of the hot paths (issue 13's figures), in the order they run. */
const HOT_PATHS = ['watch-fanout', 'watch-selectors', 'list', 'creates', 'apply', 'sandbox-eval', 'validating-admission-policy', 'idle-rss']

const here = dirname(fileURLToPath(import.meta.url))

interface HarnessRun { name: string; exitCode: number | null; seconds: number; result?: unknown; error?: string }

/** Runs one harness with tsx in its own process; its result is the last line of its stdout that parses as JSON. */
async function runHarness (name: string): Promise<HarnessRun> {
  const file = join(here, `${name}.ts`)
  if (!existsSync(file)) return { name, exitCode: null, seconds: 0, error: `no harness ${file}` }
  const started = Date.now()
  const child = spawn(process.execPath, ['--import', 'tsx', file], { stdio: ['ignore', 'pipe', 'inherit'], env: process.env })
  let stdout = ''
  child.stdout.setEncoding('utf8')
  child.stdout.on('data', (chunk: string) => { stdout += chunk; process.stderr.write(chunk) })
  const exitCode = await new Promise<number | null>(resolve => child.on('close', resolve))
  const seconds = Math.round((Date.now() - started) / 100) / 10
  const result = lastJsonLine(stdout)
  return result === undefined
    ? { name, exitCode, seconds, error: 'no JSON line on stdout' }
    : { name, exitCode, seconds, result }
}

function lastJsonLine (text: string): unknown {
  const lines = text.split('\n').map(l => l.trim()).filter(l => l.startsWith('{'))
  for (let i = lines.length - 1; i >= 0; i--) {
    try {
      return JSON.parse(lines[i]!) as unknown
    } catch {
      // not JSON after all: try the line before
    }
  }
  return undefined
}

async function main (): Promise<void> {
  const asked = process.argv.slice(2)
  const unknown = asked.filter(n => !existsSync(join(here, `${n}.ts`)))
  if (unknown.length > 0) throw new Error(`unknown harness(es): ${unknown.join(', ')}`)
  const runs: HarnessRun[] = []
  for (const name of asked.length > 0 ? asked : HOT_PATHS) {
    process.stderr.write(`--- ${name}\n`)
    runs.push(await runHarness(name))
  }
  const summary = { benchmark: 'run-all', at: new Date().toISOString(), runs }
  mkdirSync(join(here, 'results'), { recursive: true })
  writeFileSync(join(here, 'results', 'summary.json'), JSON.stringify(summary, null, 2) + '\n')
  console.log(JSON.stringify({ benchmark: 'run-all', runs: runs.map(r => ({ name: r.name, exitCode: r.exitCode, seconds: r.seconds, ok: r.error === undefined && r.exitCode === 0 })) }))
  if (runs.some(r => r.error !== undefined || r.exitCode !== 0)) process.exitCode = 1
}

await main()
