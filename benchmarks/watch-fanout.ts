// Watch fan-out: N watchers on one resource, M writes; events delivered per second and the server's CPU and memory.
// Run: npx tsx benchmarks/watch-fanout.ts   (settings: WATCHERS, EVENTS, OBJECT_BYTES, CONCURRENCY)
// Prints one JSON line and writes benchmarks/results/watch-fanout-<WATCHERS>w.json.

import { spawn } from 'node:child_process'
import { loadKubeconfig } from '../apiserver/client/kubeconfig.js'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Pool } from 'undici'
import { parse } from 'yaml'

const WATCHERS = Number(process.env.WATCHERS ?? 100)
const EVENTS = Number(process.env.EVENTS ?? 2000)
const OBJECT_BYTES = Number(process.env.OBJECT_BYTES ?? 1024)
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 64)
/** Extra `orch apiserver` flags (e.g. ORCH_ARGS="--etcd-servers http://127.0.0.1:2379") and a tag for the result file. */
const ORCH_ARGS = (process.env.ORCH_ARGS ?? '').split(' ').filter(a => a !== '')
const TAG = process.env.TAG === undefined ? '' : `-${process.env.TAG}`
const root = join(dirname(fileURLToPath(import.meta.url)), '..')

/** utime+stime of a process in seconds, from /proc (clock ticks of 100 Hz on Linux). */
function cpuSeconds (pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
  return (Number(fields[11]) + Number(fields[12])) / 100
}

function rssBytes (pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return m ? Number(m[1]) * 1024 : 0
}

async function waitFor (check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise(resolve => setTimeout(resolve, 20))
  }
}

async function main (): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'orch-bench-'))
  const server = spawn(process.execPath, [join(root, 'bin/orch.js'), 'apiserver', '--data-dir', dataDir, '--port', '0', ...ORCH_ARGS], { stdio: ['ignore', 'ignore', 'inherit'] })
  const kubeconfig = join(dataDir, 'kubeconfig')
  try {
    await waitFor(() => existsSync(kubeconfig), 30_000, 'the server')
    const url = String((parse(readFileSync(kubeconfig, 'utf8')) as { clusters: Array<{ cluster: { server: string } }> }).clusters[0]!.cluster.server)
    // The server speaks HTTPS with its own CA and wants the admin's client certificate (DIR/kubeconfig).
    const kc = loadKubeconfig(kubeconfig)
    const pool = new Pool(url, { connect: { ca: kc.caPem, cert: kc.clientCertPem, key: kc.clientKeyPem }, connections: WATCHERS + CONCURRENCY + 4, pipelining: 1, bodyTimeout: 0, headersTimeout: 0 })
    const base = '/api/v1/namespaces/default/configmaps'
    const list = await pool.request({ method: 'GET', path: base })
    const rv = String((await list.body.json() as { metadata: { resourceVersion: string } }).metadata.resourceVersion)

    const counts = new Array<number>(WATCHERS).fill(0)
    const aborts: AbortController[] = []
    await Promise.all(counts.map(async (_, i) => {
      const abort = new AbortController()
      aborts.push(abort)
      const res = await pool.request({ method: 'GET', path: `${base}?watch=true&resourceVersion=${rv}`, signal: abort.signal })
      res.body.on('data', (chunk: Buffer) => { for (const b of chunk) if (b === 10) counts[i]!++ })
      res.body.on('error', () => {})
    }))

    const payload = 'x'.repeat(OBJECT_BYTES)
    const cpu0 = cpuSeconds(server.pid!)
    const client0 = process.cpuUsage()
    const t0 = process.hrtime.bigint()
    let next = 0
    await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
      while (next < EVENTS) {
        const n = next++
        const res = await pool.request({ method: 'POST', path: base, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${n}` }, data: { payload } }) })
        await res.body.dump()
        if (res.statusCode !== 201) throw new Error(`create answered ${res.statusCode}`)
      }
    }))
    const tWrites = process.hrtime.bigint()
    await waitFor(() => counts.every(c => c >= EVENTS), 300_000, 'every watcher to see every event')
    const t1 = process.hrtime.bigint()
    const cpu1 = cpuSeconds(server.pid!)
    const client1 = process.cpuUsage(client0)
    const seconds = Number(t1 - t0) / 1e9
    const delivered = counts.reduce((a, b) => a + b, 0)
    const result = {
      benchmark: 'watch-fanout',
      watchers: WATCHERS,
      events: EVENTS,
      objectBytes: OBJECT_BYTES,
      writeConcurrency: CONCURRENCY,
      writesPerSecond: Math.round(EVENTS / (Number(tWrites - t0) / 1e9)),
      eventsDeliveredPerSecond: Math.round(delivered / seconds),
      seconds: Number(seconds.toFixed(3)),
      serverCpuSeconds: Number((cpu1 - cpu0).toFixed(2)),
      serverCpuMicrosPerDeliveredEvent: Number(((cpu1 - cpu0) * 1e6 / delivered).toFixed(2)),
      serverRssMiB: Math.round(rssBytes(server.pid!) / 1048576),
      // The watchers run in this process on the same 2 cores: when this is near `seconds`, the client is the limit.
      clientCpuSeconds: Number(((client1.user + client1.system) / 1e6).toFixed(2)),
      node: process.version,
      date: new Date().toISOString()
    }
    for (const a of aborts) a.abort()
    await pool.destroy()
    console.log(JSON.stringify(result))
    mkdirSync(join(root, 'benchmarks/results'), { recursive: true })
    writeFileSync(join(root, `benchmarks/results/watch-fanout-${WATCHERS}w${TAG}.json`), JSON.stringify(result, null, 2) + '\n')
  } finally {
    server.kill('SIGTERM')
    await new Promise(resolve => server.once('exit', resolve))
    rmSync(dataDir, { recursive: true, force: true })
  }
}

await main()
