// Benchmark: the etcd store on a private 3-member etcd cluster (.ci/etcd.sh, loopback) next to the LMDB store and next
// to etcd's own figure for the same writes (plain Puts through the same gRPC client, no orch bookkeeping):
// creates/s (independent compare-and-swap Txns, in flight together), a full LIST of every object (from etcd,
// from the watch cache as a consistent LIST with ConsistentListFromCache, and from LMDB), and watch fan-out (events
// delivered/s to W watchers of one prefix).
// Run: npx tsx benchmarks/etcd-store.ts   (CREATES=2000, VALUE_BYTES=1024, CONCURRENCY=32, WATCHERS=50, FANOUT_WRITES=500)
// Prints one JSON line and writes benchmarks/results/etcd-store.json.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { openLmdbStore } from '../apiserver/storage/lmdb/index.js'
import { EtcdStore } from '../apiserver/storage/etcd/index.js'
import { EtcdClient } from '../apiserver/storage/etcd/etcd-client.js'
import { startTestEtcd } from '../apiserver/storage/etcd/etcd-for-tests.js'
import { CachedStore } from '../apiserver/storage/cacher/cached-store.js'
import type { Store } from '../apiserver/storage/store.js'

const CREATES = Number(process.env.CREATES ?? 2000)
const VALUE_BYTES = Number(process.env.VALUE_BYTES ?? 1024)
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 32)
const WATCHERS = Number(process.env.WATCHERS ?? 50)
const FANOUT_WRITES = Number(process.env.FANOUT_WRITES ?? 500)

const padding = 'x'.repeat(VALUE_BYTES)
const seconds = (start: bigint): number => Number(process.hrtime.bigint() - start) / 1e9

async function pool (n: number, op: (i: number) => Promise<unknown>): Promise<number> {
  let next = 0
  const start = process.hrtime.bigint()
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => { while (next < n) await op(next++) }))
  return Math.round(n / seconds(start))
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

/** Median of 5 full LISTs, each right after one update of a listed object (so a cache has one event to catch up on). */
async function listMs (store: Store, reader: Store = store): Promise<number> {
  const runs: number[] = []
  for (let i = 0; i < 5; i++) {
    await store.update('bench/obj-0', rev => Buffer.from(`{"metadata":{"resourceVersion":"${rev}"},"p":"${padding}"}`))
    const start = process.hrtime.bigint()
    const listed = await reader.list('bench/')
    runs.push(seconds(start) * 1000)
    if (listed.items.length !== CREATES) throw new Error(`listed ${listed.items.length} of ${CREATES}`)
  }
  return Number(median(runs).toFixed(1))
}

async function measure (store: Store): Promise<Record<string, number>> {
  const createsPerS = await pool(CREATES, i => store.create(`bench/obj-${i}`, rev => Buffer.from(`{"metadata":{"resourceVersion":"${rev}"},"p":"${padding}"}`)))
  const listMsOf = await listMs(store)
  let start: bigint
  // Fan-out: every watcher must receive every write.
  let delivered = 0
  const target = WATCHERS * FANOUT_WRITES
  let done!: () => void
  const all = new Promise<void>(resolve => { done = resolve })
  const from = store.currentRevision()
  const handles = Array.from({ length: WATCHERS }, () => store.watch('fan/', from, {
    onEvents: evs => { delivered += evs.length; if (delivered >= target) done() },
    onError: err => { throw err }
  }))
  start = process.hrtime.bigint()
  await pool(FANOUT_WRITES, i => store.create(`fan/${i}`, rev => Buffer.from(`{"metadata":{"resourceVersion":"${rev}"}}`)))
  await all
  const fanoutEventsPerS = Math.round(target / seconds(start))
  for (const h of handles) h.stop()
  return { createsPerS, listMs: listMsOf, fanoutEventsPerS }
}

/** etcd's own figure: the same number of Puts of the same size, concurrently, with nothing but the Put. */
async function etcdPuts (endpoints: string[]): Promise<number> {
  const client = new EtcdClient({ endpoints })
  try {
    return await pool(CREATES, i => client.call('KV', 'Put', { key: Buffer.from(`/raw/obj-${i}`), value: Buffer.from(`{"p":"${padding}"}`) }))
  } finally { client.close() }
}

async function main (): Promise<void> {
  const cluster = startTestEtcd(3)
  if ('skip' in cluster) throw new Error(cluster.skip)
  const dir = mkdtempSync(join(tmpdir(), 'orch-bench-etcd-'))
  try {
    const etcdPutsPerS = await etcdPuts(cluster.endpoints)
    const etcd = await EtcdStore.open({ endpoints: cluster.endpoints, prefix: '/bench' })
    const onEtcd = await measure(etcd)
    const writes = etcd.writeStats
    // A consistent LIST from the watch cache (gate on): etcd's latest revision, the cache caught up, the snapshot.
    const cached = new CachedStore(etcd, { consistentListFromCache: true, resourceOf: p => p.startsWith('bench/') ? 'bench/' : undefined })
    await cached.list('bench/')
    const cacheListMs = await listMs(etcd, cached)
    if (cached.stats.fallbacks > 0) throw new Error(`${cached.stats.fallbacks} LISTs fell back to etcd`)
    await cached.close()

    const lmdb = await openLmdbStore({ path: join(dir, 'store') })
    const onLmdb = await measure(lmdb)
    await lmdb.close()
    const result = {
      creates: CREATES, valueBytes: VALUE_BYTES, concurrency: CONCURRENCY, watchers: WATCHERS, fanoutWrites: FANOUT_WRITES,
      etcdPutsPerS,
      etcd: { ...onEtcd, cacheListMs, txns: writes.txns, lost: writes.lost },
      createsVsPuts: Number((onEtcd.createsPerS / etcdPutsPerS).toFixed(2)),
      lmdb: onLmdb
    }
    const line = JSON.stringify(result)
    console.log(line)
    const out = join(dirname(fileURLToPath(import.meta.url)), 'results')
    mkdirSync(out, { recursive: true })
    writeFileSync(join(out, 'etcd-store.json'), line + '\n')
  } finally {
    cluster.stop()
    rmSync(dir, { recursive: true, force: true })
  }
}

await main()
