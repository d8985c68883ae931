// Long run: mixed load on `orch apiserver` for minutes, reported per window: writes/s, p50/p99 per verb, watch events
// delivered, the server's RSS and V8 heap. Shows whether memory or latency drift as the data set grows.
// Run: npx tsx benchmarks/long-run.ts   (DURATION_S=120, WINDOW_S=15, WRITERS=16, WATCHERS=100, OBJECT_BYTES=1024,
//      LIST_EVERY_MS=2000, MAX_OBJECTS=20000: writers create until then, then update existing objects)
// Prints one JSON line per window and a summary; writes benchmarks/results/long-run.json.

import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Pool } from 'undici'

const DURATION_S = Number(process.env.DURATION_S ?? 120)
const WINDOW_S = Number(process.env.WINDOW_S ?? 15)
const WRITERS = Number(process.env.WRITERS ?? 16)
const WATCHERS = Number(process.env.WATCHERS ?? 100)
const OBJECT_BYTES = Number(process.env.OBJECT_BYTES ?? 1024)
const LIST_EVERY_MS = Number(process.env.LIST_EVERY_MS ?? 2000)
const MAX_OBJECTS = Number(process.env.MAX_OBJECTS ?? 20000)
const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const heapProbe = join(dirname(fileURLToPath(import.meta.url)), 'heap-probe.mjs')

function rssMiB (pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return m ? Math.round(Number(m[1]) / 1024) : 0
}

/** RSS split: anonymous memory (heap, native allocations) and file-backed pages (the store's memory map). */
function rssSplitMiB (pid: number): { anonMiB: number, fileMiB: number } {
  const text = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8')
  const kb = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0)
  const anon = kb('Anonymous')
  return { anonMiB: Math.round(anon / 1024), fileMiB: Math.round((kb('Rss') - anon) / 1024) }
}

/** Bytes of the store's files (the LMDB data file grows with retained history until compaction reuses its pages). */
function storeMiB (dir: string): number {
  let total = 0
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name)
      if (e.isDirectory()) walk(p)
      else total += statSync(p).size
    }
  }
  walk(join(dir, 'store'))
  return Math.round(total / 1048576)
}

function percentile (values: number[], p: number): number {
  if (values.length === 0) return 0
  const sorted = [...values].sort((a, b) => a - b)
  return Number(sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))].toFixed(1))
}

interface Window { writes: number[]; lists: number[]; events: number }

async function main (): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'orch-long-run-'))
  const server = spawn(process.execPath, ['--import', heapProbe, join(root, 'bin/orch.js'), 'apiserver', '--data-dir', dataDir, '--port', '0', '--log-level', 'warn'],
    { stdio: ['ignore', 'ignore', 'pipe'] })
  let heap = { used: 0, total: 0, external: 0 }
  server.stderr.on('data', (d: Buffer) => {
    const m = /HEAP (\d+) TOTAL (\d+) EXTERNAL (\d+)/.exec(d.toString())
    if (m !== null) heap = { used: Number(m[1]), total: Number(m[2]), external: Number(m[3]) }
  })
  const kubeconfig = join(dataDir, 'kubeconfig')
  try {
    for (let i = 0; !existsSync(kubeconfig); i++) {
      if (i > 600) throw new Error('the server did not start')
      await new Promise(resolve => setTimeout(resolve, 50))
    }
    const url = /server: (\S+)/.exec(readFileSync(kubeconfig, 'utf8'))?.[1] ?? ''
    const pool = new Pool(url, { connections: WATCHERS + WRITERS + 4, bodyTimeout: 0, headersTimeout: 0 })
    const base = '/api/v1/namespaces/default/configmaps'
    let win: Window = { writes: [], lists: [], events: 0 }
    const aborts: AbortController[] = []
    for (let i = 0; i < WATCHERS; i++) {
      const abort = new AbortController()
      aborts.push(abort)
      const res = await pool.request({ method: 'GET', path: `${base}?watch=true&allowWatchBookmarks=true`, signal: abort.signal })
      res.body.on('data', (chunk: Buffer) => { for (const b of chunk) if (b === 10) win.events++ })
      res.body.on('error', () => {})
    }
    const deadline = Date.now() + DURATION_S * 1000
    const payload = 'x'.repeat(OBJECT_BYTES)
    let created = 0
    let failures = 0
    const writer = async (): Promise<void> => {
      while (Date.now() < deadline) {
        const creating = created < MAX_OBJECTS
        const n = creating ? created++ : Math.floor(Math.random() * MAX_OBJECTS)
        const body = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `c${n}` }, data: { v: payload, t: String(Date.now()) } })
        const t0 = performance.now()
        const res = await pool.request(creating
          ? { method: 'POST', path: base, body, headers: { 'content-type': 'application/json' } }
          : { method: 'PUT', path: `${base}/c${n}`, body, headers: { 'content-type': 'application/json' } })
        await res.body.dump()
        if (res.statusCode >= 300) failures++
        win.writes.push(performance.now() - t0)
      }
    }
    const lister = async (): Promise<void> => {
      while (Date.now() < deadline) {
        const t0 = performance.now()
        const res = await pool.request({ method: 'GET', path: `${base}?limit=500` })
        await res.body.dump()
        win.lists.push(performance.now() - t0)
        await new Promise(resolve => setTimeout(resolve, LIST_EVERY_MS))
      }
    }
    const windows: Array<Record<string, number>> = []
    const reporter = async (): Promise<void> => {
      const started = Date.now()
      while (Date.now() < deadline) {
        await new Promise(resolve => setTimeout(resolve, WINDOW_S * 1000))
        server.kill('SIGUSR2')
        await new Promise(resolve => setTimeout(resolve, 100))
        const w = win
        win = { writes: [], lists: [], events: 0 }
        const row = {
          t: Math.round((Date.now() - started) / 1000),
          objects: Math.min(created, MAX_OBJECTS),
          writesPerSec: Math.round(w.writes.length / WINDOW_S),
          writeP50ms: percentile(w.writes, 0.5),
          writeP99ms: percentile(w.writes, 0.99),
          listP99ms: percentile(w.lists, 0.99),
          eventsPerSec: Math.round(w.events / WINDOW_S),
          rssMiB: rssMiB(server.pid ?? 0),
          ...rssSplitMiB(server.pid ?? 0),
          storeMiB: storeMiB(dataDir),
          heapUsedMiB: heap.used,
          heapTotalMiB: heap.total,
          externalMiB: heap.external
        }
        windows.push(row)
        console.log(JSON.stringify(row))
      }
    }
    await Promise.all([...Array.from({ length: WRITERS }, writer), lister(), reporter()])
    for (const a of aborts) a.abort()
    await pool.close().catch(() => {})
    const result = { benchmark: 'long-run', durationS: DURATION_S, writers: WRITERS, watchers: WATCHERS, objectBytes: OBJECT_BYTES, maxObjects: MAX_OBJECTS, failures, windows }
    const out = join(root, 'benchmarks/results/long-run.json')
    mkdirSync(dirname(out), { recursive: true })
    writeFileSync(out, JSON.stringify(result, null, 2) + '\n')
  } finally {
    server.kill('SIGTERM')
    await new Promise(resolve => server.once('exit', resolve))
    rmSync(dataDir, { recursive: true, force: true })
  }
}

await main()
