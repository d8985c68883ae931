// Watch fan-out: orch against its ceiling (a minimal HTTPS server writing the same pre-encoded bytes with
// cork/writev), alternately in the same run. N watchers, M creates; load generator, counting clients and
// server each in their own process; server CPU from /proc; events delivered per server CPU-second.
// Run: npx tsx benchmarks/watch-fanout.ts   (WATCHERS, EVENTS, OBJECT_BYTES, CONCURRENCY, ROUNDS,
// ORCH_ROOT: the tree whose bin/orch.js is measured, default this one; ORCH_NODE_ARGS: node flags for it;
// STORAGE: comma-separated backends measured in turn each round, `lmdb` (default) and/or `etcd` (a private 3-member
// cluster started with .ci/etcd.sh for the run and stopped after it, a fresh --etcd-prefix per round); CEILING=0
// leaves the ceiling out; ORCH_ARGS: more `orch apiserver` flags, space-separated). Prints one JSON line and writes benchmarks/results/watch-fanout-<WATCHERS>w.json (LABEL adds a suffix).

import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parse } from 'yaml'
import type { TestEtcdCluster } from '../apiserver/storage/etcd/etcd-for-tests.js'
import { withRunEtcd } from './harness/etcd.js'
import { cpuSeconds, harnessChild, httpsGet, message, rssMiB, sleep, stop, type Creds } from './harness/processes.js'

const WATCHERS = Number(process.env.WATCHERS ?? 1000)
const EVENTS = Number(process.env.EVENTS ?? 2000)
const OBJECT_BYTES = Number(process.env.OBJECT_BYTES ?? 1024)
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 64)
const ROUNDS = Number(process.env.ROUNDS ?? 3)
const STORAGE = (process.env.STORAGE ?? 'lmdb').split(',').map(x => x.trim()).filter(x => x !== '')
const CEILING = process.env.CEILING !== '0'
for (const s of STORAGE) if (s !== 'lmdb' && s !== 'etcd') throw new Error(`STORAGE: unknown backend ${s}`)
const here = dirname(fileURLToPath(import.meta.url))
const root = join(here, '..')
const orchRoot = process.env.ORCH_ROOT ?? root
const PATH = '/api/v1/namespaces/default/configmaps'



async function waitFor (check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(20)
  }
}





interface Run { eventsPerCpuSecond: number, serverCpuSeconds: number, seconds: number, rssMiB: number, eventBytes: number, clientCpuSeconds: number, writesPerSecond: number }

/** One measured run against a started server: watchers connect, the load runs, every watcher sees every event. */
async function measure (server: ChildProcess, creds: Creds): Promise<Run> {
  const list = JSON.parse(await httpsGet(creds, PATH)) as { metadata: { resourceVersion: string } }
  const port = new URL(creds.url).port
  const clients = harnessChild(join(here, 'fanout', 'clients.ts'), {
    HOST: '127.0.0.1', PORT: port, WATCHERS: String(WATCHERS), CERT: creds.cert, KEY: creds.key,
    PATH_QS: `${PATH}?watch=true&resourceVersion=${list.metadata.resourceVersion}`
  })
  const load = harnessChild(join(here, 'fanout', 'load.ts'), { URL: creds.url, CERT: creds.cert, KEY: creds.key, EVENTS: String(EVENTS), CONCURRENCY: String(CONCURRENCY), OBJECT_BYTES: String(OBJECT_BYTES) })
  try {
    await message(clients)
    await message(load)
    await sleep(500)
    const cpu0 = cpuSeconds(server.pid!)
    const ccpu0 = cpuSeconds(clients.pid!)
    const t0 = process.hrtime.bigint()
    const { seconds: writeSeconds } = await message<{ seconds: number }>(load, { go: true })
    let last = { total: 0, min: 0, bytes: 0 }
    const deadline = Date.now() + 300_000
    while (WATCHERS > 0 && last.min < EVENTS) { // no watchers: the creates alone
      if (Date.now() > deadline) throw new Error(`timed out: ${JSON.stringify(last)}`)
      await sleep(20)
      last = await message(clients, { cmd: 'count' })
    }
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9
    const cpu = cpuSeconds(server.pid!) - cpu0
    return {
      eventsPerCpuSecond: Math.round(last.total / cpu),
      serverCpuSeconds: Number(cpu.toFixed(2)),
      seconds: Number(seconds.toFixed(2)),
      rssMiB: Math.round(rssMiB(server.pid!)),
      eventBytes: Math.round(last.bytes / last.total),
      clientCpuSeconds: Number((cpuSeconds(clients.pid!) - ccpu0).toFixed(2)),
      writesPerSecond: Math.round(EVENTS / writeSeconds)
    }
  } finally {
    clients.send({ cmd: 'stop' })
    await stop(clients)
    await stop(load)
  }
}

/** `orch apiserver` flags for a backend: none for LMDB; for etcd the run's cluster under a prefix of its own. */
function storageArgs (storage: string, etcd: TestEtcdCluster | undefined, round: number): string[] {
  if (storage !== 'etcd') return []
  if (etcd === undefined) throw new Error('no etcd cluster')
  return ['--etcd-servers', etcd.endpoints.join(','), '--etcd-prefix', `/fanout-${process.pid}-${round}`]
}

async function orchRound (extraArgs: string[]): Promise<{ run: Run, serving: { cert: string, key: string }, objectBytes: number }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'orch-fanout-'))
  const nodeArgs = (process.env.ORCH_NODE_ARGS ?? '').split(' ').filter(a => a !== '') // e.g. --cpu-prof
  const server = spawn(process.execPath, [...nodeArgs, join(orchRoot, 'bin/orch.js'), 'apiserver', '--data-dir', dataDir, '--port', '0',
    '--max-connections', String(Math.max(4096, WATCHERS + CONCURRENCY + 64)), ...extraArgs,
    ...(process.env.ORCH_ARGS ?? '').split(' ').filter(a => a !== '')], { stdio: ['ignore', 'ignore', 'inherit'] })
  try {
    const kc = join(dataDir, 'kubeconfig')
    await waitFor(() => existsSync(kc), 60_000, 'orch')
    const cfg = parse(readFileSync(kc, 'utf8')) as { clusters: Array<{ cluster: { server: string } }>, users: Array<{ user: Record<string, string> }> }
    const b64 = (s: string | undefined): string => Buffer.from(s ?? '', 'base64').toString()
    const creds = { url: cfg.clusters[0]!.cluster.server, cert: b64(cfg.users[0]!.user['client-certificate-data']), key: b64(cfg.users[0]!.user['client-key-data']) }
    const run = await measure(server, creds)
    const objectBytes = (await httpsGet(creds, `${PATH}/cm-0`)).length
    const serving = { cert: readFileSync(join(dataDir, 'pki/apiserver.crt'), 'utf8'), key: readFileSync(join(dataDir, 'pki/apiserver.key'), 'utf8') }
    return { run, serving, objectBytes }
  } finally {
    await stop(server)
    rmSync(dataDir, { recursive: true, force: true })
  }
}

async function ceilingRound (serving: { cert: string, key: string }, metaBytes: number): Promise<Run> {
  const server = harnessChild(join(here, 'fanout', 'ceiling.ts'), { CERT: serving.cert, KEY: serving.key, META_BYTES: String(metaBytes) })
  try {
    const port = await new Promise<string>(resolve => server.stdout!.once('data', (b: Buffer) => resolve(b.toString().trim())))
    return await measure(server, { url: `https://127.0.0.1:${port}`, ...serving })
  } finally {
    await stop(server)
  }
}

const median = (xs: number[]): number => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]! }
const minOf = (xs: number[]): number => Math.min(...xs)

async function main (etcd: TestEtcdCluster | undefined): Promise<void> {
  const orch: Record<string, Run[]> = Object.fromEntries(STORAGE.map(x => [x, []]))
  const ceiling: Run[] = []
  for (let r = 0; r < ROUNDS; r++) {
    let last: Awaited<ReturnType<typeof orchRound>> | undefined
    for (const storage of STORAGE) {
      last = await orchRound(storageArgs(storage, etcd, r))
      orch[storage]!.push(last.run)
      console.error(`round ${r + 1} orch on ${storage} ${JSON.stringify(last.run)}`)
    }
    if (!CEILING || last === undefined) continue
    // Pad the ceiling's objects to the size orch serves (its metadata: uid, timestamps, managedFields).
    const bare = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm-0', resourceVersion: '1000', x: '' }, data: { payload: 'x'.repeat(OBJECT_BYTES) } }).length
    ceiling.push(await ceilingRound(last.serving, Math.max(0, last.objectBytes - bare)))
    console.error(`round ${r + 1} ceiling ${JSON.stringify(ceiling[r])}`)
  }
  const delivered = WATCHERS * EVENTS
  const summary = (runs: Run[]): Record<string, number> => ({
    eventsPerCpuSecondMedian: median(runs.map(x => x.eventsPerCpuSecond)),
    eventsPerCpuSecondMax: Math.max(...runs.map(x => x.eventsPerCpuSecond)),
    serverCpuSecondsMin: minOf(runs.map(x => x.serverCpuSeconds)),
    serverCpuSecondsMedian: median(runs.map(x => x.serverCpuSeconds)),
    // Server CPU per delivered event (the creates' own cost included), the figure comparable across backends.
    serverCpuMicrosPerEventMin: delivered > 0 ? Number((minOf(runs.map(x => x.serverCpuSeconds)) * 1e6 / delivered).toFixed(2)) : 0,
    serverCpuMicrosPerEventMedian: delivered > 0 ? Number((median(runs.map(x => x.serverCpuSeconds)) * 1e6 / delivered).toFixed(2)) : 0,
    writesPerSecondMedian: median(runs.map(x => x.writesPerSecond)),
    rssMiBMedian: median(runs.map(x => x.rssMiB)),
    eventBytes: median(runs.map(x => x.eventBytes))
  })
  const byStorage = Object.fromEntries(STORAGE.map(x => [x, summary(orch[x]!)]))
  const o = byStorage[STORAGE[0]!]!
  const c = CEILING ? summary(ceiling) : undefined
  const e = byStorage.etcd
  const l = byStorage.lmdb
  const result = {
    benchmark: 'watch-fanout',
    orchRoot: orchRoot === root ? 'this tree' : orchRoot,
    storage: STORAGE,
    watchers: WATCHERS, events: EVENTS, objectBytes: OBJECT_BYTES, writeConcurrency: CONCURRENCY, rounds: ROUNDS,
    orch: o,
    ...(STORAGE.length > 1 ? { byStorage } : {}),
    ...(e !== undefined && l !== undefined
      ? {
          // Server CPU per delivered event, etcd / LMDB (1 = the same cost), of the cheapest and the typical runs.
          etcdOverLmdbCpuMin: Number((e.serverCpuSecondsMin! / l.serverCpuSecondsMin!).toFixed(3)),
          etcdOverLmdbCpuMedian: Number((e.serverCpuSecondsMedian! / l.serverCpuSecondsMedian!).toFixed(3))
        }
      : {}),
    ...(c !== undefined
      ? {
          ceiling: c,
          // Ratios of the cheapest (min CPU) and typical (median CPU) runs: events per server CPU-second, orch / ceiling.
          ratioMinCpu: Number((c.serverCpuSecondsMin! / o.serverCpuSecondsMin!).toFixed(3)),
          ratioMedianCpu: Number((c.serverCpuSecondsMedian! / o.serverCpuSecondsMedian!).toFixed(3)),
          rssRatio: Number((o.rssMiBMedian! / c.rssMiBMedian!).toFixed(2))
        }
      : {}),
    runs: { ...(STORAGE.length > 1 ? orch : { orch: orch[STORAGE[0]!] }), ...(CEILING ? { ceiling } : {}) },
    node: process.version,
    date: new Date().toISOString()
  }
  console.log(JSON.stringify(result))
  mkdirSync(join(root, 'benchmarks/results'), { recursive: true })
  const label = process.env.LABEL !== undefined ? `-${process.env.LABEL}` : ''
  writeFileSync(join(root, `benchmarks/results/watch-fanout-${WATCHERS}w${label}.json`), JSON.stringify(result, null, 2) + '\n')
}

await withRunEtcd(STORAGE.includes('etcd') ? 3 : 0, main)
