// Protobuf vs JSON for one Pod and a 1,000-item PodList: encode and decode time and bytes, in this process.
// Run: npx tsx benchmarks/protobuf.ts   (settings: ITEMS, ROUNDS)
// Prints one JSON line and writes benchmarks/results/protobuf.json.

import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { decodeEnvelope } from '../apiserver/endpoints/protobuf/decode.js'
import { encodeEnvelope } from '../apiserver/endpoints/protobuf/encode.js'
import { Messages } from '../apiserver/endpoints/protobuf/messages.js'
import { benchContainer } from './deployment-fixture.js'

const ITEMS = Number(process.env.ITEMS ?? 1000)
const ROUNDS = Number(process.env.ROUNDS ?? 20)
const root = join(dirname(fileURLToPath(import.meta.url)), '..')

/** A Pod as the server stores it once scheduled and running: metadata with managed fields, a spec, a status. */
function pod (i: number): Record<string, unknown> {
  const time = '2026-11-27T03:00:00Z'
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `web-7d9f8b6c4-${i.toString(36).padStart(5, '0')}`, generateName: 'web-7d9f8b6c4-', namespace: 'default',
      uid: `5b1c6f3e-0000-4000-8000-${String(i).padStart(12, '0')}`, resourceVersion: String(1000 + i), creationTimestamp: time,
      labels: { app: 'web', 'pod-template-hash': '7d9f8b6c4' },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-7d9f8b6c4', uid: '9a0e4c55-1111-4222-8333-444455556666', controller: true, blockOwnerDeletion: true }],
      managedFields: [{ manager: 'orch-controller-manager', operation: 'Update', apiVersion: 'v1', time, fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } }, 'f:spec': { 'f:containers': {} } } }]
    },
    spec: {
      containers: [benchContainer('app', 'registry.example.com/web:1.4.2', 6), benchContainer('sidecar', 'registry.example.com/proxy:2.0', 2)],
      volumes: [{ name: 'config', configMap: { name: 'web-config', defaultMode: 420 } }, { name: 'data', emptyDir: {} }],
      restartPolicy: 'Always', terminationGracePeriodSeconds: 30, dnsPolicy: 'ClusterFirst', serviceAccountName: 'default',
      nodeName: 'node-3', schedulerName: 'default-scheduler', priority: 0, enableServiceLinks: true, preemptionPolicy: 'PreemptLowerPriority',
      tolerations: [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }]
    },
    status: {
      phase: 'Running', hostIP: '10.0.0.3', podIP: `10.244.3.${i % 250}`, podIPs: [{ ip: `10.244.3.${i % 250}` }], startTime: time, qosClass: 'Burstable',
      conditions: ['Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map(type => ({ type, status: 'True', lastTransitionTime: time })),
      containerStatuses: ['app', 'sidecar'].map(name => ({ name, ready: true, restartCount: 0, image: `registry.example.com/${name}`, imageID: `sha256:${'ab'.repeat(32)}`, containerID: `containerd://${'cd'.repeat(32)}`, started: true, state: { running: { startedAt: time } } }))
    }
  }
}

/** Median milliseconds of one `fn` over ROUNDS rounds of `repeat` calls (after a warm-up round). */
function time (fn: () => unknown, repeat: number): number {
  for (let i = 0; i < repeat; i++) fn()
  const runs: number[] = []
  for (let r = 0; r < ROUNDS; r++) {
    const t0 = process.hrtime.bigint()
    for (let i = 0; i < repeat; i++) fn()
    runs.push(Number(process.hrtime.bigint() - t0) / 1e6 / repeat)
  }
  runs.sort((a, b) => a - b)
  return Number(runs[Math.floor(runs.length / 2)]!.toFixed(4))
}

function compare (object: Record<string, unknown>, messages: Messages, repeat: number): Record<string, number> {
  const json = Buffer.from(JSON.stringify(object))
  const pb = encodeEnvelope(object, messages)
  return {
    jsonBytes: json.length,
    protobufBytes: pb.length,
    jsonEncodeMs: time(() => Buffer.from(JSON.stringify(object)), repeat),
    protobufEncodeMs: time(() => encodeEnvelope(object, messages), repeat),
    jsonDecodeMs: time(() => JSON.parse(json.toString('utf8')), repeat),
    protobufDecodeMs: time(() => decodeEnvelope(pb, messages), repeat)
  }
}

const messages = new Messages()
const one = pod(0)
const list = { apiVersion: 'v1', kind: 'PodList', metadata: { resourceVersion: '5000', continue: '' }, items: Array.from({ length: ITEMS }, (_, i) => pod(i)) }
const result = {
  benchmark: 'protobuf',
  pod: compare(one, messages, 500),
  list: { items: ITEMS, ...compare(list, messages, 1) },
  rounds: ROUNDS,
  node: process.version,
  date: new Date().toISOString()
}
console.log(JSON.stringify(result))
mkdirSync(join(root, 'benchmarks/results'), { recursive: true })
writeFileSync(join(root, 'benchmarks/results/protobuf.json'), JSON.stringify(result, null, 2) + '\n')
