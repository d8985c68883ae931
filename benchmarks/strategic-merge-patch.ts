// Benchmark: strategic merge patch on a Deployment-sized object (~4 KB) with the built-in schema, in process:
// applying kubectl-style patches (set image with $setElementOrder; a 3-way apply patch), and creating the
// two-way and three-way patches kubectl computes. Also a long merging list (2,000 env entries).
// Run: npx tsx benchmarks/strategic-merge-patch.ts   (BENCH_ITERATIONS=5000 by default)
// Prints one JSON line and writes benchmarks/results/strategic-merge-patch.json.

import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { builtinDefinitions } from '../apiserver/schema/builtin/catalog.js'
import { patchSchemaOf } from '../apiserver/registry/patch/smp-schema.js'
import { createThreeWayMergePatch, createTwoWayMergePatch } from '../apiserver/registry/patch/smp-diff.js'
import { strategicMergePatch } from '../apiserver/registry/patch/strategic-merge-patch.js'
import type { JsonMap } from '../apiserver/registry/patch/smp-values.js'
import { benchContainer } from './deployment-fixture.js'

const iterations = Number(process.env.BENCH_ITERATIONS ?? 5000)
const def = builtinDefinitions().find(d => d.kind === 'Deployment')
if (def === undefined) throw new Error('no Deployment definition')
const schema = patchSchemaOf(def)

function deployment (image: string, envCount = 40): JsonMap {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'default', labels: { app: 'web', tier: 'frontend' }, annotations: { owner: 'team-a' } },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: 'web' } },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } },
      template: {
        metadata: { labels: { app: 'web', tier: 'frontend' } },
        spec: {
          containers: [benchContainer('web', image, envCount), benchContainer('sidecar', 'proxy:1', 5)],
          volumes: [{ name: 'config', configMap: { name: 'web-config' } }, { name: 'data', emptyDir: {} }]
        }
      }
    }
  }
}

function measure (fn: () => unknown): { perSecond: number; p50Us: number; p99Us: number } {
  for (let i = 0; i < Math.min(500, iterations); i++) fn()
  const samples: number[] = []
  for (let i = 0; i < iterations; i++) {
    const t0 = performance.now()
    fn()
    samples.push(performance.now() - t0)
  }
  const sorted = samples.slice().sort((a, b) => a - b)
  const total = samples.reduce((a, b) => a + b, 0)
  const q = (p: number): number => Math.round(sorted[Math.floor(p * (sorted.length - 1))] * 10000) / 10
  return { perSecond: Math.round(iterations / total * 1000), p50Us: q(0.5), p99Us: q(0.99) }
}

const live = deployment('web:1')
const lastApplied = deployment('web:1')
const wanted = deployment('web:2')
const setImage: JsonMap = {
  spec: { template: { spec: { '$setElementOrder/containers': [{ name: 'web' }, { name: 'sidecar' }], containers: [{ name: 'web', image: 'web:2' }] } } }
}
const applyPatch = createThreeWayMergePatch(lastApplied, wanted, live, schema, true)
const longLive = deployment('web:1', 2000)
const longPatch: JsonMap = { spec: { template: { spec: { containers: [{ name: 'web', env: [{ name: 'SETTING_7', value: 'changed' }] }] } } } }

const result = {
  benchmark: 'strategic-merge-patch',
  node: process.version,
  iterations,
  objectBytes: JSON.stringify(live).length,
  applySetImage: measure(() => strategicMergePatch(live, setImage, schema)),
  applyThreeWayPatch: measure(() => strategicMergePatch(live, applyPatch, schema)),
  createTwoWay: measure(() => createTwoWayMergePatch(live, wanted, schema)),
  createThreeWay: measure(() => createThreeWayMergePatch(lastApplied, wanted, live, schema, false)),
  applyToLongList: { envEntries: 2000, objectBytes: JSON.stringify(longLive).length, ...measure(() => strategicMergePatch(longLive, longPatch, schema)) }
}

const line = JSON.stringify(result)
console.log(line)
const out = resolve(dirname(fileURLToPath(import.meta.url)), 'results/strategic-merge-patch.json')
mkdirSync(dirname(out), { recursive: true })
writeFileSync(out, JSON.stringify(result, null, 2) + '\n')
