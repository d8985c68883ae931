// Benchmark: label-selected watchers, indexed against scanned, in one run. An in-process API server registry on a
// real LMDB store; WATCHERS watchers each select their own label value (`app=w<i>`, which the watch hub indexes) or
// the same objects through a selector it cannot index (`app in (w<i>,none)`); EVENTS ConfigMap creates spread over
// the values, so each event is for one watcher. Measures the process CPU per create (store write, the hub's offer to
// watchers, encoding and delivery to the one that matches) and checks that every watcher received its events.
// Run: npx tsx benchmarks/watch-selectors.ts   (WATCHERS=1000, EVENTS=4000, ROUNDS=3)
// Prints one JSON line and writes benchmarks/results/watch-selectors.json.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { pino } from 'pino'
import { openLmdbStore } from '../apiserver/storage/lmdb/index.js'
import { createRegistry } from '../apiserver/registry/registry.js'
import type { RequestContext, WatchEncoder, WatchSink } from '../apiserver/registry/types.js'

const WATCHERS = Number(process.env.WATCHERS ?? 1000)
const EVENTS = Number(process.env.EVENTS ?? 4000)
const ROUNDS = Number(process.env.ROUNDS ?? 3)
const CONCURRENCY = 32
const logger = pino({ level: 'silent' })
const ctx = (): RequestContext => ({ user: { username: 'bench', groups: ['system:masters'] }, dryRun: false, fieldValidation: 'Strict', warnings: [] })
const encoder: WatchEncoder = { key: 'json', encode: ev => Buffer.concat([Buffer.from(`{"type":"${ev.type}","object":`), ev.raw, Buffer.from('}\n')]) }

type Mode = 'indexed' | 'scanned'

/** CPU microseconds per create with WATCHERS watchers of `mode`, and whether each watcher got exactly its events. */
async function measure (mode: Mode): Promise<{ cpuMicrosPerEvent: number, perSecond: number, delivered: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'orch-bench-watchsel-'))
  const store = await openLmdbStore({ path: dir })
  const registry = createRegistry({ store, logger })
  await registry.start()
  const cms = registry.handler('', 'v1', 'configmaps')!
  const counts = new Array<number>(WATCHERS).fill(0)
  const subs = []
  const from = String(store.currentRevision())
  for (let i = 0; i < WATCHERS; i++) {
    const sink: WatchSink = { write: chunks => { counts[i] += chunks.length }, end: () => {} }
    const labelSelector = mode === 'indexed' ? `app=w${i}` : `app in (w${i},none)`
    subs.push(await cms.watch(ctx(), 'default', { resourceVersion: from, labelSelector }, encoder, sink))
  }
  let next = 0
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < EVENTS) {
      const i = next++
      await cms.create(ctx(), 'default', { duplicateFields: [], object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}`, labels: { app: `w${i % WATCHERS}` } }, data: { k: 'v' } } })
    }
  }))
  const want = (i: number): number => Math.floor(EVENTS / WATCHERS) + (i < EVENTS % WATCHERS ? 1 : 0)
  const deadline = Date.now() + 10_000
  while (counts.some((c, i) => c < want(i)) && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 5))
  const wall = performance.now() - t0
  const cpu = process.cpuUsage(cpu0)
  const wrong = counts.filter((c, i) => c !== want(i)).length
  if (wrong > 0) throw new Error(`${mode}: ${wrong} watchers did not receive exactly their events`)
  for (const s of subs) s.stop()
  await registry.stop()
  await store.close()
  rmSync(dir, { recursive: true, force: true })
  return { cpuMicrosPerEvent: Math.round((cpu.user + cpu.system) / EVENTS), perSecond: Math.round(EVENTS / wall * 1000), delivered: counts.reduce((a, b) => a + b, 0) }
}

await measure('indexed') // warm-up, not reported
const rounds: Array<Record<Mode, Awaited<ReturnType<typeof measure>>>> = []
for (let r = 0; r < ROUNDS; r++) rounds.push({ indexed: await measure('indexed'), scanned: await measure('scanned') })
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const summary = (m: Mode): Record<string, number> => ({
  cpuMicrosPerEvent: median(rounds.map(r => r[m].cpuMicrosPerEvent)), minCpuMicrosPerEvent: Math.min(...rounds.map(r => r[m].cpuMicrosPerEvent)),
  perSecond: median(rounds.map(r => r[m].perSecond))
})
const indexed = summary('indexed')
const scanned = summary('scanned')
const result = {
  benchmark: 'watch-selectors', watchers: WATCHERS, events: EVENTS, rounds: ROUNDS, indexed, scanned,
  /** CPU per event of the scanned watchers over the indexed ones (each round against its own). */
  cpuRatioByRound: rounds.map(r => +(r.scanned.cpuMicrosPerEvent / r.indexed.cpuMicrosPerEvent).toFixed(2))
}
console.log(JSON.stringify(result))
const out = resolve(dirname(fileURLToPath(import.meta.url)), 'results', 'watch-selectors.json')
mkdirSync(dirname(out), { recursive: true })
writeFileSync(out, JSON.stringify(result, null, 2) + '\n')
process.exit(0)
