// Benchmark: what audit logging costs a request. An in-process API server on a real LMDB store with the audit steps in
// front (as `orch apiserver` wires them), GETs and creates of ConfigMaps at policy levels None, Metadata, Request and
// RequestResponse, against the same server without the audit steps; events go to a real file through the batched backend.
// Run: npx tsx benchmarks/audit.ts   (REQUESTS=4000, CONCURRENCY=16, OBJECT_BYTES=1024)
// Prints one JSON line and writes benchmarks/results/audit.json.

import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
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
import { Auditor } from '../apiserver/audit/auditor.js'
import { openLogBackend } from '../apiserver/audit/log-backend.js'
import { parsePolicy, type Level } from '../apiserver/audit/policy.js'
import { withAudit, withAuditInit } from '../apiserver/endpoints/audit.js'
import type { RequestHandler } from '../apiserver/endpoints/request-limits.js'

const REQUESTS = Number(process.env.REQUESTS ?? 4000)
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 16)
const OBJECT_BYTES = Number(process.env.OBJECT_BYTES ?? 1024)
/** Every level is measured this many times, interleaved; the round with the least CPU per request counts (the machine is shared). */
const ROUNDS = Number(process.env.ROUNDS ?? 3)

const dir = mkdtempSync(join(tmpdir(), 'orch-bench-audit-'))
const logger = pino({ level: 'silent' })
const store = await openLmdbStore({ path: join(dir, 'db') })
const registry = createRegistry({ store, logger })
await registry.start()
const api = createApiServer({ registry, logger })
const admin = { username: 'bench', groups: ['system:masters', 'system:authenticated'] }

/** A front server on port 0: `handle` alone, or behind the audit steps at one level. */
async function front (level: Level | 'off', round = 0): Promise<{ url: string; close: () => Promise<void>; logBytes: () => number }> {
  const logPath = join(dir, `audit-${level}-${round}.log`)
  let chain: RequestHandler = async (req, res) => { api.handle(req, res); await finished(res).catch(() => {}) }
  let auditor: Auditor | undefined
  if (level !== 'off') {
    const policy = parsePolicy(`apiVersion: audit.orch.io/v1\nkind: Policy\nrules:\n- level: ${level}\n`)
    auditor = new Auditor({ policy, sink: await openLogBackend(logPath, { maxSizeMB: 0, maxBackups: 0, maxAgeDays: 0 }, logger) })
    chain = withAuditInit(auditor, withAudit(auditor, chain))
  }
  const s = createServer((req: IncomingMessage, res: ServerResponse) => {
    void chain(req, res, { url: new URL(req.url ?? '/', 'http://x'), longRunning: false, user: admin })
  })
  await new Promise<void>(resolve => s.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(s.address() as AddressInfo).port}`,
    logBytes: () => { try { return statSync(logPath).size } catch { return 0 } },
    close: async () => { s.closeAllConnections(); await new Promise(resolve => s.close(resolve)); await auditor?.close() }
  }
}

const pct = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]

/** Throughput, latency, and CPU per request of the whole process (server and client share it; the client is the same for every level). */
async function run (url: string, op: 'get' | 'create', tag: string): Promise<{ perSecond: number; p50Ms: number; p99Ms: number; cpuUsPerRequest: number }> {
  const pool = new Pool(url, { connections: CONCURRENCY })
  const data = { v: 'x'.repeat(OBJECT_BYTES) }
  const lat: number[] = []
  let next = 0
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < REQUESTS) {
      const i = next++
      const s = performance.now()
      const r = op === 'get'
        ? await pool.request({ method: 'GET', path: '/api/v1/namespaces/default/configmaps/base' })
        : await pool.request({
          method: 'POST', path: '/api/v1/namespaces/default/configmaps', headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${tag.toLowerCase()}-${i}` }, data })
        })
      await r.body.text()
      if (r.statusCode >= 300) throw new Error(`${op} answered ${r.statusCode}`)
      lat.push(performance.now() - s)
    }
  }))
  const wall = performance.now() - t0
  const cpu = process.cpuUsage(cpu0)
  await pool.close()
  lat.sort((a, b) => a - b)
  return {
    perSecond: Math.round(REQUESTS / wall * 1000), p50Ms: +pct(lat, 0.5).toFixed(2), p99Ms: +pct(lat, 0.99).toFixed(2),
    cpuUsPerRequest: Math.round((cpu.user + cpu.system) / REQUESTS)
  }
}

// The object every GET reads.
const base = await front('off')
const made = await request(`${base.url}/api/v1/namespaces/default/configmaps`, {
  method: 'POST', headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'base' }, data: { v: 'x'.repeat(OBJECT_BYTES) } })
})
await made.body.text()
await run(base.url, 'get', 'warm') // JIT and store caches warm before anything is timed
await base.close()

type Figures = Awaited<ReturnType<typeof run>>
const best = (a: Figures | undefined, b: Figures): Figures => a === undefined || b.cpuUsPerRequest < a.cpuUsPerRequest ? b : a
const levels = ['off', 'None', 'Metadata', 'Request', 'RequestResponse'] as const
const results: Record<string, { get?: Figures; create?: Figures; logBytesPerRequest?: number }> = {}
for (let round = 0; round < ROUNDS; round++) {
  for (const level of levels) {
    const f = await front(level, round)
    const get = await run(f.url, 'get', level)
    const create = await run(f.url, 'create', `${level}-${round}`)
    await f.close()
    const r = results[level] ??= {}
    r.get = best(r.get, get)
    r.create = best(r.create, create)
    r.logBytesPerRequest = Math.round(f.logBytes() / (2 * REQUESTS))
  }
}

await api.close()
await registry.stop()
await store.close()
rmSync(dir, { recursive: true, force: true })
const out = { bench: 'audit', requests: REQUESTS, rounds: ROUNDS, concurrency: CONCURRENCY, objectBytes: OBJECT_BYTES, results }
console.log(JSON.stringify(out))
const file = resolve(dirname(fileURLToPath(import.meta.url)), 'results/audit.json')
mkdirSync(dirname(file), { recursive: true })
writeFileSync(file, JSON.stringify(out, null, 2) + '\n')
