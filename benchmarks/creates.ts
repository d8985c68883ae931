// Durable creates: orch (ConfigMaps over HTTPS, LMDB, acknowledged after fsync) against etcd's own figure for the same
// bytes (plain Puts through gRPC to a single-member etcd on the same box, acknowledged after its WAL fsync), rounds
// alternated in one run. Each round starts `orch apiserver` on a fresh store and, per client count, runs orch's load
// and then etcd's, each load generator in its own process; p50/p99 latency and creates/s.
// Run: npx tsx benchmarks/creates.ts   (CLIENTS=1,64, COUNT=2000 creates per run, WARMUP=500, OBJECT_BYTES=1024,
// ROUNDS=3, ORCH_ROOT: the tree whose bin/orch.js is measured, default this one; ORCH_NODE_ARGS: node flags for it,
// e.g. --cpu-prof; BASE_ROOT: another tree measured the same way in every round, as "base", for before/after
// figures from one run; ETCD=0 leaves etcd out; OP=get: orch answers GETs of one ConfigMap instead, OP=dryrun dry-run creates, for profiling the
// request path without the commit). Each orch run also reports serverCpuUs, the server process's CPU per request. Prints one JSON line and writes benchmarks/results/creates.json
// (LABEL adds a suffix).

import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parse } from 'yaml'
import type { TestEtcdCluster } from '../apiserver/storage/etcd/etcd-for-tests.js'
import { withRunEtcd } from './harness/etcd.js'
import type { LoadResult } from './creates/latency.js'
import { cpuSeconds, httpsGet, sleep, stop, type Creds } from './harness/processes.js'

const CLIENTS = (process.env.CLIENTS ?? '1,64').split(',').map(Number)
const COUNT = Number(process.env.COUNT ?? 2000)
const WARMUP = Number(process.env.WARMUP ?? 500)
const OBJECT_BYTES = Number(process.env.OBJECT_BYTES ?? 1024)
const ROUNDS = Number(process.env.ROUNDS ?? 3)
const ETCD = process.env.ETCD !== '0'
const here = dirname(fileURLToPath(import.meta.url))
const root = join(here, '..')
const orchRoot = process.env.ORCH_ROOT ?? root
const baseRoot = process.env.BASE_ROOT
const PATH = '/api/v1/namespaces/default/configmaps'
// create (the benchmark), dryrun (dry-run creates) or get: GETs of one ConfigMap, to profile the request path without the store's commit.
const OP = process.env.OP ?? 'create'


/** Runs one load process to the end: waits for its warm-up, starts the measured run, returns its figures. */
async function load (file: string, env: Record<string, string>, serverPid?: number): Promise<LoadResult> {
  const c = spawn(process.execPath, ['--import', 'tsx', join(here, 'creates', file)], {
    env: { ...process.env, ...env, COUNT: String(COUNT), WARMUP: String(WARMUP) }, stdio: ['ignore', 'inherit', 'inherit', 'ipc']
  })
  try {
    let ready = false
    let cpu0 = 0
    return await new Promise<LoadResult>((resolve, reject) => {
      c.on('message', m => {
        if (!ready) { ready = true; if (serverPid !== undefined) cpu0 = cpuSeconds(serverPid); c.send({ go: true }); return }
        const r = m as LoadResult
        // The server's CPU (all its threads) over the measured run, per request: the load is the only client.
        if (serverPid !== undefined) r.serverCpuUs = Math.round((cpuSeconds(serverPid) - cpu0) * 1e6 / COUNT)
        resolve(r)
      })
      c.once('exit', code => reject(new Error(`${file} exited ${code}`)))
    })
  } finally { await stop(c) }
}


/** Starts `orch apiserver` on a fresh store; returns its credentials and a stop. */
async function startOrch (tree: string): Promise<{ creds: Creds, pid: number, stop: () => Promise<void> }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'orch-creates-'))
  const nodeArgs = (process.env.ORCH_NODE_ARGS ?? '').split(' ').filter(a => a !== '')
  const server = spawn(process.execPath, [...nodeArgs, join(tree, 'bin/orch.js'), 'apiserver', '--data-dir', dataDir, '--port', '0'],
    { stdio: ['ignore', 'ignore', 'inherit'] })
  const kc = join(dataDir, 'kubeconfig')
  const deadline = Date.now() + 60_000
  while (!existsSync(kc)) {
    if (Date.now() > deadline || server.exitCode !== null) throw new Error('orch did not start')
    await sleep(20)
  }
  const cfg = parse(readFileSync(kc, 'utf8')) as { clusters: Array<{ cluster: { server: string } }>, users: Array<{ user: Record<string, string> }> }
  const b64 = (s: string | undefined): string => Buffer.from(s ?? '', 'base64').toString()
  const creds = { url: cfg.clusters[0]!.cluster.server, cert: b64(cfg.users[0]!.user['client-certificate-data']), key: b64(cfg.users[0]!.user['client-key-data']) }
  return { creds, pid: server.pid!, stop: async () => { await stop(server); rmSync(dataDir, { recursive: true, force: true }) } }
}

const median = (xs: number[]): number => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]! }

function summary (runs: LoadResult[]): Record<string, number> {
  return {
    p50MsMedian: median(runs.map(r => r.p50Ms)),
    p50MsMin: Math.min(...runs.map(r => r.p50Ms)),
    p99MsMedian: median(runs.map(r => r.p99Ms)),
    perSecondMedian: median(runs.map(r => r.perSecond)),
    perSecondMax: Math.max(...runs.map(r => r.perSecond)),
    ...(runs.every(r => r.serverCpuUs !== undefined) ? { serverCpuUsMedian: median(runs.map(r => r.serverCpuUs!)) } : {})
  }
}

type Runs = Record<string, { orch: LoadResult[], base: LoadResult[], etcd: LoadResult[] }>

/** One round's orch runs on a fresh store of `tree`, each client count in turn; etcd after each when `etcd` is given. */
async function orchRound (tree: string, label: 'orch' | 'base', r: number, runs: Runs, etcd: TestEtcdCluster | undefined): Promise<number> {
  let storedBytes = 0
  const orch = await startOrch(tree)
  try {
    for (const clients of CLIENTS) {
      const o = await load('orch-load.ts', { URL: orch.creds.url, CERT: orch.creds.cert, KEY: orch.creds.key, CLIENTS: String(clients), OBJECT_BYTES: String(OBJECT_BYTES), PREFIX: `c${clients}`, OP: OP }, orch.pid)
      runs[clients]![label].push(o)
      console.error(`round ${r + 1} ${clients} clients ${label} ${JSON.stringify(o)}`)
      // etcd Puts the bytes orch stores for one of these creates (its metadata included).
      const value = await httpsGet(orch.creds, `${PATH}/c${clients}-0`)
      storedBytes = value.length
      if (etcd === undefined) continue
      const e = await load('etcd-load.ts', { ENDPOINTS: etcd.endpoints.join(','), VALUE: value, CLIENTS: String(clients), PREFIX: `/r${r}c${clients}` })
      runs[clients]!.etcd.push(e)
      console.error(`round ${r + 1} ${clients} clients etcd ${JSON.stringify(e)}`)
    }
  } finally { await orch.stop() }
  return storedBytes
}

async function main (etcd: TestEtcdCluster | undefined): Promise<void> {
  const runs: Runs = Object.fromEntries(CLIENTS.map(c => [c, { orch: [], base: [], etcd: [] }]))
  let storedBytes = 0
  for (let r = 0; r < ROUNDS; r++) {
    storedBytes = await orchRound(orchRoot, 'orch', r, runs, etcd)
    if (baseRoot !== undefined) await orchRound(baseRoot, 'base', r, runs, undefined)
  }
  const byClients = Object.fromEntries(CLIENTS.map(c => {
    const o = summary(runs[c]!.orch)
    const base = baseRoot === undefined ? {} : { base: summary(runs[c]!.base) }
    if (etcd === undefined) return [c, { orch: o, ...base }]
    const e = summary(runs[c]!.etcd)
    return [c, {
      orch: o,
      ...base,
      etcd: e,
      // orch / etcd: creates/s (above 1: orch faster) and p50 latency (below 1: orch faster), of the median runs.
      throughputRatio: Number((o.perSecondMedian! / e.perSecondMedian!).toFixed(2)),
      p50Ratio: Number((o.p50MsMedian! / e.p50MsMedian!).toFixed(2))
    }]
  }))
  const result = {
    benchmark: 'creates',
    orchRoot: orchRoot === root ? 'this tree' : orchRoot,
    ...(baseRoot === undefined ? {} : { baseRoot }),
    count: COUNT, warmup: WARMUP, objectBytes: OBJECT_BYTES, storedBytes, rounds: ROUNDS,
    byClients,
    runs,
    node: process.version,
    date: new Date().toISOString()
  }
  console.log(JSON.stringify(result))
  mkdirSync(join(root, 'benchmarks/results'), { recursive: true })
  const label = process.env.LABEL !== undefined ? `-${process.env.LABEL}` : ''
  writeFileSync(join(root, `benchmarks/results/creates${label}.json`), JSON.stringify(result, null, 2) + '\n')
}

// One member, as orch is one process on one disk: etcd's best case on this box.
await withRunEtcd(ETCD ? 1 : 0, main)
