// Benchmark: scheduler throughput and Deployment start-up, in process on a real LMDB store.
//  1. pods bound per second: PODS pods (100m cpu, 128Mi each) over NODES simulated Ready nodes, from the first
//     pod created to the last binding seen;
//  2. a REPLICAS-replica Deployment: time from its creation to every pod bound (deployment, replicaset and
//     scheduler at work together), with the process RSS.
// The harness keeps the nodes' Lease and Ready heartbeat fresh, as orchlets would. kube-scheduler's published figure
// is about 100-300 pods/s (its scheduling_throughput in the density tests).
// Run: npx tsx benchmarks/scheduler.ts   (NODES=100, PODS=1000, REPLICAS=100). Writes benchmarks/results/scheduler.json.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { pino } from 'pino'
import { openLmdbStore } from '../apiserver/storage/lmdb/index.js'
import { createRegistry } from '../apiserver/registry/registry.js'
import { inProcessClient } from '../apiserver/controllers/client/in-process.js'
import { RESOURCES, type Obj } from '../apiserver/controllers/client/types.js'
import { startControllerManager } from '../apiserver/controllers/manager.js'
import { startScheduler } from '../apiserver/scheduler/run.js'

const NODES = Number(process.env.NODES ?? 100)
const PODS = Number(process.env.PODS ?? 1000)
const REPLICAS = Number(process.env.REPLICAS ?? 100)
const logger = pino({ level: 'warn' })
const rfc3339 = (): string => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z')

const dir = mkdtempSync(join(tmpdir(), 'orch-bench-sched-'))
const store = await openLmdbStore({ path: dir })
const registry = createRegistry({ store, logger })
await registry.start()
const client = inProcessClient(registry, 'bench')
const pods = client.resource(RESOURCES.pods)

async function readyNodes (): Promise<void> {
  for (let i = 0; i < NODES; i++) {
    const name = `node-${i}`
    await client.resource(RESOURCES.nodes).create('', {
      apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { 'kubernetes.io/hostname': name } },
      status: {}
    })
    await client.resource(RESOURCES.nodes).patch('', name, { status: {
      allocatable: { cpu: '16', memory: '64Gi', pods: '110' }, capacity: { cpu: '16', memory: '64Gi', pods: '110' },
      conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', lastHeartbeatTime: rfc3339(), lastTransitionTime: rfc3339() }]
    } }, 'status')
  }
}

/** Resolves once `count` pods matching `label` are bound; returns the wall time it took from `since`. */
function boundCount (selector: string, count: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const seen = new Set<string>()
    let done = false
    void (async () => {
      const list = await pods.list('default', { labelSelector: selector })
      const w = await pods.watch('default', { resourceVersion: list.resourceVersion, labelSelector: selector }, {
        event: (type, p: Obj) => {
          if (type === 'ERROR' || type === 'BOOKMARK' || (p.spec?.nodeName ?? '') === '') return
          seen.add(String(p.metadata.name))
          if (seen.size >= count && !done) { done = true; w.stop(); resolve(performance.now()) }
        },
        end: err => { if (!done && err !== undefined) reject(err) }
      })
    })()
  })
}

await readyNodes()
const cm = startControllerManager({ client, logger, controllers: ['deployment', 'replicaset'] })
const sched = startScheduler({ client, logger, informers: cm.informers })
await cm.informers.waitForSync()

// 1. Throughput of the scheduler alone.
const pod = (i: number): Obj => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name: `p-${i}`, namespace: 'default', labels: { bench: 'throughput' } },
  spec: { containers: [{ name: 'c', image: 'img:1', resources: { requests: { cpu: '100m', memory: '128Mi' } } }] }
})
const allBound = boundCount('bench=throughput', PODS)
const t0 = performance.now()
for (let i = 0; i < PODS; i += 50) await Promise.all(Array.from({ length: Math.min(50, PODS - i) }, async (_, k) => await pods.create('default', pod(i + k))))
const created = performance.now()
const t1 = await allBound
const podsPerSecond = PODS / ((t1 - t0) / 1000)

// 2. A Deployment from creation to every replica bound.
const deployBound = boundCount('app=bench-web', REPLICAS)
const d0 = performance.now()
await client.resource(RESOURCES.deployments).create('default', {
  apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'bench-web', namespace: 'default' },
  spec: { replicas: REPLICAS, selector: { matchLabels: { app: 'bench-web' } },
    template: { metadata: { labels: { app: 'bench-web' } }, spec: { containers: [{ name: 'c', image: 'img:1', resources: { requests: { cpu: '100m' } } }] } } }
})
const d1 = await deployBound
const rssMiB = Math.round(process.memoryUsage().rss / 2 ** 20)

const result = {
  nodes: NODES,
  pods: PODS,
  podsPerSecond: Math.round(podsPerSecond),
  createSeconds: Number(((created - t0) / 1000).toFixed(2)),
  bindSeconds: Number(((t1 - t0) / 1000).toFixed(2)),
  deploymentReplicas: REPLICAS,
  deploymentToAllBoundSeconds: Number(((d1 - d0) / 1000).toFixed(2)),
  rssMiB,
  peer: { kubeScheduler: 'about 100-300 pods/s published', ratioToUpper: Number((podsPerSecond / 300).toFixed(2)) }
}
console.log(JSON.stringify(result))
const out = resolve(dirname(fileURLToPath(import.meta.url)), 'results', 'scheduler.json')
mkdirSync(dirname(out), { recursive: true })
writeFileSync(out, JSON.stringify(result, null, 2) + '\n')
sched.stop()
cm.stop()
await registry.stop()
await store.close()
rmSync(dir, { recursive: true, force: true })
process.exit(0)
