// Benchmark: what the request-metrics step costs a request, and what a scrape costs. An in-process API server on a real
// LMDB store; a front server calls it either directly ('off') or through one more withRequestMetrics step ('on', the
// step counted twice: its cost is the difference); GETs of one ConfigMap. Then /metrics of the inner server is timed
// against a GET of the ConfigMap in the same run.
// Run: npx tsx benchmarks/request-metrics.ts   (REQUESTS=4000, CONCURRENCY=16, ROUNDS=3)
// Prints one JSON line and writes benchmarks/results/request-metrics.json.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { finished } from 'node:stream/promises'
import { fileURLToPath } from 'node:url'
import { pino } from 'pino'
import { Pool, request } from 'undici'
import { openLmdbStore } from '../apiserver/storage/lmdb/index.js'
import { createRegistry } from '../apiserver/registry/registry.js'
import { createApiServer } from '../apiserver/server.js'
import { withRequestMetrics } from '../apiserver/endpoints/request-metrics.js'
import type { RequestHandler } from '../apiserver/endpoints/request-limits.js'
import { apiServerMetrics, collectStorageGauges, timedStore } from '../apiserver/cli/metrics-setup.js'

const REQUESTS = Number(process.env.REQUESTS ?? 4000)
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 16)
const ROUNDS = Number(process.env.ROUNDS ?? 3)

const dir = mkdtempSync(join(tmpdir(), 'orch-bench-metrics-'))
const logger = pino({ level: 'silent' })
const metrics = apiServerMetrics(undefined)
const store = timedStore(metrics, await openLmdbStore({ path: join(dir, 'db') }))
const registry = createRegistry({ store, logger })
await registry.start()
collectStorageGauges(metrics, () => registry, store)
const api = createApiServer({ registry, logger, metrics })
const extra = apiServerMetrics(undefined)

async function front (on: boolean): Promise<{ url: string, close: () => Promise<void> }> {
  const inner: RequestHandler = async (req, res) => { api.handle(req, res); await finished(res).catch(() => {}) }
  const chain = on ? withRequestMetrics(extra, (_g, _v, r) => r === 'configmaps', inner) : inner
  const s = createServer((req: IncomingMessage, res: ServerResponse) => { void chain(req, res, { url: new URL(req.url ?? '/', 'http://x'), longRunning: false }) })
  await new Promise<void>(resolve => s.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${(s.address() as AddressInfo).port}`, close: async () => { s.closeAllConnections(); await new Promise(resolve => s.close(resolve)) } }
}

async function run (url: string, path: string, n: number): Promise<{ perSecond: number, cpuUsPerRequest: number }> {
  const pool = new Pool(url, { connections: CONCURRENCY })
  let next = 0
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, n) }, async () => {
    while (next < n) {
      next++
      const r = await pool.request({ method: 'GET', path })
      await r.body.text()
      if (r.statusCode !== 200) throw new Error(`GET ${path} answered ${r.statusCode}`)
    }
  }))
  const wall = performance.now() - t0
  const cpu = process.cpuUsage(cpu0)
  await pool.close()
  return { perSecond: Math.round(n / wall * 1000), cpuUsPerRequest: Math.round((cpu.user + cpu.system) / n) }
}

const base = await front(false)
await (await request(`${base.url}/api/v1/namespaces/default/configmaps`, {
  method: 'POST', headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'base' }, data: { v: 'x' } })
})).body.text()
await run(base.url, '/api/v1/namespaces/default/configmaps/base', REQUESTS) // warm-up
await base.close()

type Figures = Awaited<ReturnType<typeof run>>
const best = (a: Figures | undefined, b: Figures): Figures => a === undefined || b.cpuUsPerRequest < a.cpuUsPerRequest ? b : a
const results: Record<string, Figures | undefined> = {}
for (let round = 0; round < ROUNDS; round++) {
  for (const on of [false, true]) {
    const f = await front(on)
    results[on ? 'on' : 'off'] = best(results[on ? 'on' : 'off'], await run(f.url, '/api/v1/namespaces/default/configmaps/base', REQUESTS))
    await f.close()
  }
}
// A scrape after those requests (every series of the run present), one at a time, against a GET one at a time.
const f = await front(false)
let scrape: Figures | undefined
let get: Figures | undefined
for (let round = 0; round < ROUNDS; round++) {
  scrape = best(scrape, await run(f.url, '/metrics', 50))
  get = best(get, await run(f.url, '/api/v1/namespaces/default/configmaps/base', 50))
}
const bytes = (await (await request(`${f.url}/metrics`)).body.text()).length
await f.close()

await api.close()
await registry.stop()
await store.close()
rmSync(dir, { recursive: true, force: true })
const out = {
  bench: 'request-metrics', requests: REQUESTS, rounds: ROUNDS, concurrency: CONCURRENCY, results,
  stepCpuUsPerRequest: (results.on?.cpuUsPerRequest ?? 0) - (results.off?.cpuUsPerRequest ?? 0),
  scrape: { ...scrape, bytes }, getForComparison: get
}
console.log(JSON.stringify(out))
const file = resolve(dirname(fileURLToPath(import.meta.url)), 'results/request-metrics.json')
mkdirSync(dirname(file), { recursive: true })
writeFileSync(file, JSON.stringify(out, null, 2) + '\n')
