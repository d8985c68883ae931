// Benchmark: server-side apply of a Deployment-sized object (~4 KB, two managers) through the registry on a real
// LMDB store (durable group commit), in process: changing applies/s, no-op applies/s, and creates/s with managed
// fields tracking against the same creates with tracking switched off (the figure before field management).
// Run: npx tsx benchmarks/apply.ts   (OBJECTS=200, APPLIES=4000, CREATES=3000, CONCURRENCY=64, ROUNDS=3, PHASES=registry,engine,creates)
// Changing applies (registry and engine) and creates run ROUNDS rounds each: the best round is the figure.
// Prints one JSON line and writes benchmarks/results/apply.json.

import { performance } from 'node:perf_hooks'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { pino } from 'pino'
import { openLmdbStore } from '../apiserver/storage/lmdb/index.js'
import { createRegistry } from '../apiserver/registry/registry.js'
import type { GenericStore } from '../apiserver/registry/generic-store.js'
import type { RequestContext } from '../apiserver/registry/types.js'
import { benchContainer } from './deployment-fixture.js'

const OBJECTS = Number(process.env.OBJECTS ?? 200)
const APPLIES = Number(process.env.APPLIES ?? 4000)
const CREATES = Number(process.env.CREATES ?? 3000)
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 64)
const ROUNDS = Number(process.env.ROUNDS ?? 3)
/** Which parts to run (for profiling one of them): registry, engine, creates. */
const PHASES = new Set((process.env.PHASES ?? 'registry,engine,creates').split(','))

function deployment (name: string, image: string): Record<string, unknown> {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: 'default', labels: { app: name, tier: 'frontend' }, annotations: { owner: 'team-a' } },
    spec: {
      selector: { matchLabels: { app: name } },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } },
      template: {
        metadata: { labels: { app: name, tier: 'frontend' } },
        spec: {
          containers: [benchContainer('web', image, 36), benchContainer('sidecar', 'proxy:1', 6)],
          volumes: [{ name: 'config', configMap: { name: 'web-config' } }, { name: 'data', emptyDir: {} }]
        }
      }
    }
  }
}

const scaleConfig = (name: string, replicas: number): Record<string, unknown> =>
  ({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name, namespace: 'default' }, spec: { replicas } })

const ctx = (fieldManager: string): RequestContext =>
  ({ user: { username: 'bench', groups: [] }, dryRun: false, fieldManager, fieldValidation: 'Strict', warnings: [] })

async function run (n: number, op: (i: number) => Promise<unknown>): Promise<number> {
  let next = 0
  const start = process.hrtime.bigint()
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < n) await op(next++)
  }))
  return n / (Number(process.hrtime.bigint() - start) / 1e9)
}

async function withRegistry<T> (fn: (deploys: GenericStore) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'orch-bench-apply-'))
  const store = await openLmdbStore({ path: dir })
  const registry = createRegistry({ store, logger: pino({ level: 'silent' }) })
  await registry.start()
  try {
    return await fn(registry.handler('apps', 'v1', 'deployments') as GenericStore)
  } finally {
    await registry.stop()
    await store.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

function median (xs: number[]): number {
  const sorted = [...xs].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

const names = Array.from({ length: OBJECTS }, (_, i) => `web-${i}`)

const applyFigures = !PHASES.has('registry') ? {} : await withRegistry(async deploys => {
  for (const name of names) {
    await deploys.apply(ctx('deployer'), 'default', name, deployment(name, 'app:0'), false)
    await deploys.apply(ctx('autoscaler'), 'default', name, scaleConfig(name, 3), true)
  }
  const bytes = (await deploys.get(ctx('x'), 'default', names[0], {}) as { bytes: Buffer }).bytes.length
  // ROUNDS rounds of changing applies, each to new images; the best round counts (as for creates below: the machine
  // is shared), the median and the slowest are reported beside it.
  const perRound = Math.ceil(APPLIES / OBJECTS)
  const image = (round: number, i: number): string => `app:${1 + round * perRound + Math.floor(i / OBJECTS)}`
  const rounds: number[] = []
  for (let round = 0; round < ROUNDS; round++) {
    const elu0 = performance.eventLoopUtilization()
    const cpu0 = process.cpuUsage()
    rounds.push(await run(APPLIES, async i => {
      const name = names[i % OBJECTS]
      await deploys.apply(ctx('deployer'), 'default', name, deployment(name, image(round, i)), false)
    }))
    const cpu1 = process.cpuUsage(cpu0)
    const elu1 = performance.eventLoopUtilization(elu0)
    console.error(JSON.stringify({ round, changingAppliesPerSec: Math.round(rounds[round]), mainThreadMicrosPerChangingApply: Math.round(elu1.active * 1000 / APPLIES), processCpuMicrosPerChangingApply: Math.round((cpu1.user + cpu1.system) / APPLIES), utilization: elu1.utilization.toFixed(2) }))
  }
  const last = image(ROUNDS - 1, APPLIES - 1)
  for (const name of names) await deploys.apply(ctx('deployer'), 'default', name, deployment(name, last), false)
  const noop = await run(APPLIES * 2, async i => {
    const name = names[i % OBJECTS]
    await deploys.apply(ctx('deployer'), 'default', name, deployment(name, last), false)
  })
  const configBytes = JSON.stringify(deployment(names[0], 'app:0')).length
  return {
    configBytes,
    storedBytes: bytes,
    changingAppliesPerSec: Math.round(Math.max(...rounds)),
    changingAppliesPerSecMedian: Math.round(median(rounds)),
    changingAppliesPerSecMin: Math.round(Math.min(...rounds)),
    noopAppliesPerSec: Math.round(noop)
  }
})

// The field manager alone (merge, ownership, managedFields encoding) on parsed objects, without the write path.
const engineFigures = !PHASES.has('engine') ? {} : await withRegistry(async deploys => {
  const fm = deploys.core.fieldManager
  let live = fm.apply(undefined, deployment('e', 'app:0'), 'deployer', false) as Record<string, unknown>
  live = fm.apply(live, scaleConfig('e', 3), 'autoscaler', true) as Record<string, unknown>
  const n = APPLIES * 2
  // Rounds as for the registry: the best counts, the median is reported beside it.
  const rounds: number[] = []
  let applied = 0
  let start = process.hrtime.bigint()
  for (let round = 0; round < ROUNDS; round++) {
    start = process.hrtime.bigint()
    for (let i = 0; i < n; i++) live = fm.apply(live, deployment('e', `app:${++applied}`), 'deployer', false) as Record<string, unknown>
    rounds.push(n / (Number(process.hrtime.bigint() - start) / 1e9))
  }
  const same = deployment('e', `app:${applied}`)
  start = process.hrtime.bigint()
  for (let i = 0; i < n; i++) if (fm.apply(live, same, 'deployer', false) !== undefined) throw new Error('not a no-op')
  const noop = n / (Number(process.hrtime.bigint() - start) / 1e9)
  return {
    engineChangingAppliesPerSec: Math.round(Math.max(...rounds)),
    engineChangingAppliesPerSecMedian: Math.round(median(rounds)),
    engineNoopAppliesPerSec: Math.round(noop)
  }
})

// Tracked and untracked creates alternate for ROUNDS rounds; the best round of each counts (the machine is shared:
// the best round is the one least disturbed by other work).
const createRounds = { tracked: [] as number[], untracked: [] as number[] }
for (let round = 0; PHASES.has('creates') && round < ROUNDS; round++) {
  createRounds.tracked.push(await withRegistry(async deploys =>
    await run(CREATES, async i => await deploys.create(ctx('kubectl-create'), 'default', { object: deployment(`c-${i}`, 'app:1'), duplicateFields: [] }))))
  createRounds.untracked.push(await withRegistry(async deploys => {
    // The peer: the same creates with field tracking switched off, as before managed fields existed.
    deploys.core.fieldManager.update = () => {}
    return await run(CREATES, async i => await deploys.create(ctx('kubectl-create'), 'default', { object: deployment(`c-${i}`, 'app:1'), duplicateFields: [] }))
  }))
}
const createsTracked = Math.max(0, ...createRounds.tracked)
const createsUntracked = Math.max(1, ...createRounds.untracked)

const result = {
  benchmark: 'apply',
  objects: OBJECTS,
  concurrency: CONCURRENCY,
  ...applyFigures,
  ...engineFigures,
  createsPerSecTracked: Math.round(createsTracked),
  createsPerSecUntracked: Math.round(createsUntracked),
  createRatio: Number((createsTracked / createsUntracked).toFixed(2))
}
console.log(JSON.stringify(result))
const out = resolve(dirname(fileURLToPath(import.meta.url)), 'results/apply.json')
mkdirSync(dirname(out), { recursive: true })
writeFileSync(out, JSON.stringify(result, null, 2) + '\n')
