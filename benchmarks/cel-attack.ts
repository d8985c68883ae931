// CEL attack: GET latency while clients write custom objects whose validation rules run to the sandbox deadline.
// Run: npx tsx benchmarks/cel-attack.ts   (settings: DURATION_S, ATTACKERS, CEL_WORKERS, ORCH_BIN)
// Prints one JSON line and writes benchmarks/results/cel-attack.json (cel-attack-<label>.json with RESULT_LABEL).
//
// One `orch apiserver` child process on a fresh store and port 0. A baseline phase runs the GET client
// alone; the attack phase adds ATTACKERS clients, each writing objects of test/fixtures/cel-attack.ts
// (rules that run to the 250 ms deadline, answered 422) back to back, while the same GET client runs.

import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Pool } from 'undici'
import { parse } from 'yaml'
import { attackCrd, attackObject, attackPath } from '../test/fixtures/cel-attack.js'

const SECONDS = Number(process.env.DURATION_S ?? 10)
const ATTACKERS = Number(process.env.ATTACKERS ?? 2)
const CEL_WORKERS = process.env.CEL_WORKERS
const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const ORCH_BIN = process.env.ORCH_BIN ?? join(root, 'bin/orch.js')
const LABEL = process.env.RESULT_LABEL

function rssBytes (pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return m ? Number(m[1]) * 1024 : 0
}

async function waitFor (check: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise(resolve => setTimeout(resolve, 20))
  }
}

const ms = (ns: bigint): number => Number(ns) / 1e6
function quantile (sorted: number[], q: number): number {
  if (sorted.length === 0) return NaN
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!
}
const round = (x: number, d = 2): number => Number(x.toFixed(d))

interface Phase { gets: number[], getErrors: number, attacks: number[], attackStatuses: Record<number, number>, seconds: number }

/** Sequential GETs for DURATION_S; with `attackers`, that many clients write attack objects back to back meanwhile. */
async function phase (pool: Pool, attackers: number): Promise<Phase> {
  const out: Phase = { gets: [], getErrors: 0, attacks: [], attackStatuses: {}, seconds: SECONDS }
  const end = Date.now() + SECONDS * 1000
  let n = 0
  const attack = async (): Promise<void> => {
    while (Date.now() < end) {
      const t0 = process.hrtime.bigint()
      const res = await pool.request({ method: 'POST', path: attackPath('default'), headers: { 'content-type': 'application/json' }, body: JSON.stringify(attackObject(`a-${n++}`)) })
      await res.body.dump()
      out.attacks.push(ms(process.hrtime.bigint() - t0))
      out.attackStatuses[res.statusCode] = (out.attackStatuses[res.statusCode] ?? 0) + 1
    }
  }
  const get = async (): Promise<void> => {
    while (Date.now() < end) {
      const t0 = process.hrtime.bigint()
      const res = await pool.request({ method: 'GET', path: '/api/v1/namespaces/default/configmaps/probe' })
      await res.body.dump()
      if (res.statusCode !== 200) out.getErrors++
      out.gets.push(ms(process.hrtime.bigint() - t0))
    }
  }
  await Promise.all([get(), ...Array.from({ length: attackers }, attack)])
  return out
}

function summary (p: Phase): Record<string, number> {
  const g = [...p.gets].sort((a, b) => a - b)
  const a = [...p.attacks].sort((x, y) => x - y)
  return {
    getsPerSecond: round(g.length / p.seconds, 1),
    getP50Ms: round(quantile(g, 0.5)),
    getP99Ms: round(quantile(g, 0.99)),
    getMaxMs: round(g[g.length - 1] ?? NaN),
    getErrors: p.getErrors,
    attackWritesPerSecond: round(a.length / p.seconds, 2),
    attackP50Ms: round(quantile(a, 0.5)),
    attackP99Ms: round(quantile(a, 0.99))
  }
}

async function main (): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'orch-bench-'))
  const args = [ORCH_BIN, 'apiserver', '--data-dir', dataDir, '--port', '0', '--log-level', 'warn']
  if (CEL_WORKERS !== undefined) args.push('--cel-workers', CEL_WORKERS)
  const server = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'inherit'] })
  const kubeconfig = join(dataDir, 'kubeconfig')
  try {
    await waitFor(() => existsSync(kubeconfig), 30_000, 'the server')
    const url = String((parse(readFileSync(kubeconfig, 'utf8')) as { clusters: Array<{ cluster: { server: string } }> }).clusters[0]!.cluster.server)
    const pool = new Pool(url, { connections: ATTACKERS + 2, pipelining: 1 })
    const rssIdle = rssBytes(server.pid!)
    const post = async (path: string, body: unknown): Promise<number> => {
      const res = await pool.request({ method: 'POST', path, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
      await res.body.dump()
      return res.statusCode
    }
    if (await post('/apis/apiextensions.orch.io/v1/customresourcedefinitions', attackCrd()) !== 201) throw new Error('CRD create failed')
    await waitFor(async () => { const r = await pool.request({ method: 'GET', path: attackPath('default') }); await r.body.dump(); return r.statusCode === 200 }, 30_000, 'the CRD to be served')
    if (await post('/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'probe' }, data: { a: 'b' } }) !== 201) throw new Error('ConfigMap create failed')
    // Warm-up: the first attack object makes the rule threads and compiles the rules in them.
    await Promise.all(Array.from({ length: ATTACKERS }, (_, i) => post(attackPath('default'), attackObject(`warm-${i}`))))

    const baseline = summary(await phase(pool, 0))
    const attack = await phase(pool, ATTACKERS)
    const underAttack = summary(attack)
    const result = {
      benchmark: 'cel-attack',
      attackers: ATTACKERS,
      celWorkers: CEL_WORKERS !== undefined ? Number(CEL_WORKERS) : ORCH_BIN === join(root, 'bin/orch.js') ? 'cores' : 'server default',
      seconds: SECONDS,
      baseline: { getsPerSecond: baseline.getsPerSecond, getP50Ms: baseline.getP50Ms, getP99Ms: baseline.getP99Ms, getMaxMs: baseline.getMaxMs },
      underAttack,
      attackStatuses: attack.attackStatuses,
      serverRssIdleMiB: Math.round(rssIdle / 1048576),
      serverRssMiB: Math.round(rssBytes(server.pid!) / 1048576),
      server: ORCH_BIN === join(root, 'bin/orch.js') ? 'this tree' : ORCH_BIN,
      node: process.version,
      date: new Date().toISOString()
    }
    await pool.destroy()
    console.log(JSON.stringify(result))
    mkdirSync(join(root, 'benchmarks/results'), { recursive: true })
    writeFileSync(join(root, `benchmarks/results/cel-attack${LABEL === undefined ? '' : `-${LABEL}`}.json`), JSON.stringify(result, null, 2) + '\n')
  } finally {
    server.kill('SIGTERM')
    await new Promise(resolve => server.once('exit', resolve))
    rmSync(dataDir, { recursive: true, force: true })
  }
}

await main()
