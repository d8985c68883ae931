// Store churn: a fixed number of objects rewritten (updates, and deletes followed by creates) for minutes, with a
// watcher and periodic lists, measuring the LMDB data file and the bytes in use per window. Shows whether steady
// churn at a fixed object count grows the file without bound (it should level off once history older than the
// retention is compacted and its pages reused).
// Run: npx tsx benchmarks/store-churn.ts   (DURATION_S=120, WINDOW_S=10, OBJECTS=1000, OBJECT_BYTES=4096, WRITERS=16,
//      RETENTION_S=20, DELETE_PERCENT=20; RATE=0 for as fast as it goes, else writes per second)
// Prints one JSON line per window and a summary; writes benchmarks/results/store-churn.json.

import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { openLmdbStore } from '../apiserver/storage/lmdb/index.js'

const DURATION_S = Number(process.env.DURATION_S ?? 120)
const WINDOW_S = Number(process.env.WINDOW_S ?? 10)
const OBJECTS = Number(process.env.OBJECTS ?? 1000)
const OBJECT_BYTES = Number(process.env.OBJECT_BYTES ?? 4096)
const WRITERS = Number(process.env.WRITERS ?? 16)
const RETENTION_S = Number(process.env.RETENTION_S ?? 20)
const DELETE_PERCENT = Number(process.env.DELETE_PERCENT ?? 20)
const RATE = Number(process.env.RATE ?? 0)
const MiB = 1024 * 1024

const mib = (n: number): number => Number((n / MiB).toFixed(2))

async function main (): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'orch-store-churn-'))
  const path = join(dir, 'store')
  const store = await openLmdbStore({ path, retentionMs: RETENTION_S * 1000, compactionIntervalMs: Math.max(1000, RETENTION_S * 100) })
  const value = (i: number) => (rev: number): Buffer => {
    const b = Buffer.alloc(OBJECT_BYTES, 'x')
    b.write(`{"i":${i},"rev":${rev}}`)
    return b
  }
  for (let i = 0; i < OBJECTS; i++) await store.create(`churn/${i}`, value(i))
  let events = 0
  const watch = store.watch('churn/', store.currentRevision(), { onEvents: e => { events += e.length }, onError: () => {} })
  const lister = setInterval(() => { store.list('churn/', { limit: 500 }).catch(() => {}) }, 1000)

  const started = Date.now()
  const end = started + DURATION_S * 1000
  let writes = 0
  let windowWrites = 0
  const windows: Array<Record<string, number>> = []
  const sample = (): void => {
    const s = store.space()
    const row = {
      t: Math.round((Date.now() - started) / 1000),
      writesPerS: Math.round(windowWrites / WINDOW_S),
      fileMiB: mib(statSync(join(path, 'data.mdb')).size),
      inUseMiB: mib(s.inUseBytes),
      revision: store.currentRevision(),
      compacted: store.compactedRevision(),
      watchEvents: events
    }
    windowWrites = 0
    windows.push(row)
    console.log(JSON.stringify(row))
  }
  const timer = setInterval(sample, WINDOW_S * 1000)

  const busy = new Set<number>()
  const interval = RATE > 0 ? WRITERS * 1000 / RATE : 0
  await Promise.all(Array.from({ length: WRITERS }, async () => {
    while (Date.now() < end) {
      let i = Math.floor(Math.random() * OBJECTS)
      while (busy.has(i)) i = (i + 1) % OBJECTS
      busy.add(i)
      const key = `churn/${i}`
      const t0 = Date.now()
      try {
        if (Math.random() * 100 < DELETE_PERCENT) {
          await store.delete(key)
          await store.create(key, value(i))
          writes += 2
          windowWrites += 2
        } else {
          await store.update(key, value(i))
          writes++
          windowWrites++
        }
      } finally {
        busy.delete(i)
      }
      if (interval > 0) await new Promise(resolve => setTimeout(resolve, Math.max(0, interval - (Date.now() - t0))))
    }
  }))
  clearInterval(timer)
  clearInterval(lister)
  sample()
  watch.stop()
  await store.close()

  // growth once the first retention period (plus a compaction interval) is over: should be about zero
  const steady = windows.filter(w => w.t >= RETENTION_S * 2)
  const summary = {
    settings: { DURATION_S, WINDOW_S, OBJECTS, OBJECT_BYTES, WRITERS, RETENTION_S, DELETE_PERCENT, RATE },
    writes,
    writesPerS: Math.round(writes / DURATION_S),
    liveDataMiB: mib(OBJECTS * OBJECT_BYTES),
    fileMiBAtSteadyStart: steady[0]?.fileMiB,
    fileMiBAtEnd: windows[windows.length - 1]?.fileMiB,
    maxFileMiB: Math.max(...windows.map(w => w.fileMiB)),
    inUseMiBRange: steady.length > 0 ? [Math.min(...steady.map(w => w.inUseMiB)), Math.max(...steady.map(w => w.inUseMiB))] : [],
    windows
  }
  console.log(JSON.stringify({ ...summary, windows: undefined }))
  const results = join(dirname(fileURLToPath(import.meta.url)), 'results')
  mkdirSync(results, { recursive: true })
  writeFileSync(join(results, 'store-churn.json'), JSON.stringify(summary, null, 2) + '\n')
  rmSync(dir, { recursive: true, force: true })
}

await main()
