import t from 'tap'
import { buildNode, buildNodeStatus, microTime, rfc3339 } from './node-object.js'
import { capacityReport, formatBytes, formatCpu, goArch, hardEvictionBytes, type MachineFacts } from './node-info.js'
import { aggregateMessage, nodeImages, runtimeReadyErrors } from './node-images.js'

const facts: MachineFacts = {
  cpuMillis: 4000, memoryBytes: 8 * 1024 ** 3, ephemeralStorageBytes: 100 * 1024 ** 3, machineID: 'm', systemUUID: 'u', bootID: 'b',
  kernelVersion: '6.1.0', osImage: 'Debian GNU/Linux 12 (bookworm)', architecture: 'amd64', hostname: 'box'
}

t.test('the Node carries default labels, --node-labels, taints, providerID and podCIDR', async t => {
  const node = buildNode({ nodeName: 'box', labels: { 'orch.io/role': 'edge', zone: 'a' }, taints: [{ key: 'dedicated', value: 'edge', effect: 'NoSchedule' }], providerID: 'edge://box', podCIDR: '10.1.0.0/24', unschedulable: false }, facts) as any
  t.same(node.metadata.labels, {
    'orch.io/hostname': 'box', 'orch.io/os': 'linux', 'orch.io/arch': 'amd64', 'beta.orch.io/os': 'linux', 'beta.orch.io/arch': 'amd64',
    'kubernetes.io/hostname': 'box', 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64', 'beta.kubernetes.io/os': 'linux', 'beta.kubernetes.io/arch': 'amd64',
    'orch.io/role': 'edge', zone: 'a'
  })
  t.same(node.spec.taints, [{ key: 'dedicated', value: 'edge', effect: 'NoSchedule' }])
  t.equal(node.spec.providerID, 'edge://box')
  t.same(node.spec.podCIDRs, ['10.1.0.0/24'])
  t.notOk('unschedulable' in node.spec)
})

t.test('allocatable is capacity minus orch-reserved, system-reserved and the hard memory threshold', async t => {
  const r = capacityReport(facts, 110, { orchReserved: { cpu: 500, memory: 1024 ** 3 }, systemReserved: { cpu: 250, memory: 512 * 1024 ** 2 }, evictionHardMemoryBytes: 100 * 1024 ** 2 })
  t.same(r.capacity, { cpu: '4', memory: '8Gi', 'ephemeral-storage': '100Gi', pods: '110' })
  t.equal(r.allocatable.cpu, '3250m')
  t.equal(r.allocatable.memory, `${8 * 1024 - 1024 - 512 - 100}Mi`)
  t.equal(r.allocatable.pods, '110')
})

t.test('conditions keep their transition time while their status holds', async t => {
  const input = { facts, capacity: capacityReport(facts, 110, { orchReserved: {}, systemReserved: {}, evictionHardMemoryBytes: 0 }), addresses: [{ type: 'InternalIP', address: '10.0.0.2' }], runtimeVersion: 'wasm://0.1.0', orchletVersion: 'v1.29.0-orch', port: 10250, health: { ready: true, readyMessage: '', memoryPressure: false, diskPressure: false, pidPressure: false } }
  const first = buildNodeStatus(input, Date.parse('2026-01-01T00:00:00Z')) as any
  const second = buildNodeStatus(input, Date.parse('2026-01-01T00:00:10Z'), first.conditions) as any
  const ready = second.conditions.find((c: any) => c.type === 'Ready')
  t.equal(ready.lastHeartbeatTime, '2026-01-01T00:00:10Z')
  t.equal(ready.lastTransitionTime, '2026-01-01T00:00:00Z')
  const down = buildNodeStatus({ ...input, health: { ...input.health, ready: false, readyMessage: 'container runtime is down' } }, Date.parse('2026-01-01T00:00:20Z'), second.conditions) as any
  const notReady = down.conditions.find((c: any) => c.type === 'Ready')
  t.same([notReady.status, notReady.reason, notReady.message, notReady.lastTransitionTime], ['False', 'OrchletNotReady', 'container runtime is down', '2026-01-01T00:00:20Z'])
  t.equal(down.nodeInfo.kubeletVersion, 'v1.29.0-orch')
  t.same(down.daemonEndpoints, { kubeletEndpoint: { Port: 10250 } })
})

t.test('formats quantities and times as Kubernetes prints them', async t => {
  t.equal(formatCpu(1500), '1500m')
  t.equal(formatCpu(2000), '2')
  t.equal(formatBytes(3 * 1024 ** 2), '3Mi')
  t.equal(formatBytes(1000), '1000')
  t.equal(goArch('x64'), 'amd64')
  t.equal(rfc3339(Date.parse('2026-01-01T00:00:00.900Z')), '2026-01-01T00:00:00Z')
  t.equal(microTime(Date.parse('2026-01-01T00:00:00.123Z')), '2026-01-01T00:00:00.123000Z')
})

t.test('allocatable ephemeral-storage leaves out the nodefs.available hard threshold, percentages truncated', async t => {
  const thresholds = [{ signal: 'memory.available', value: { quantity: 100 * 1024 ** 2 } }, { signal: 'nodefs.available', value: { percent: 10 } }]
  const eph = hardEvictionBytes(thresholds, 'nodefs.available', facts.ephemeralStorageBytes)
  t.equal(eph, Math.floor(100 * 1024 ** 3 / 10))
  t.equal(hardEvictionBytes(thresholds, 'nodefs.available', 1001), 100, 'int64 truncation of 100.1')
  t.equal(hardEvictionBytes(thresholds, 'imagefs.available', 1000), 0, 'no threshold: nothing reserved')
  const r = capacityReport(facts, 110, { orchReserved: { 'ephemeral-storage': 1024 ** 3 }, systemReserved: {}, evictionHardMemoryBytes: 0, evictionHardEphemeralStorageBytes: 10 * 1024 ** 3 })
  t.equal(r.capacity['ephemeral-storage'], '100Gi')
  t.equal(r.allocatable['ephemeral-storage'], '89Gi')
})

t.test('--enable-controller-attach-detach puts the attach/detach annotation on the Node', async t => {
  const spec = { nodeName: 'box', labels: {}, taints: [], unschedulable: false }
  t.same((buildNode({ ...spec, controllerManagedAttachDetach: true }, facts) as any).metadata.annotations, { 'volumes.orch.io/controller-managed-attach-detach': 'true' })
  t.notOk('annotations' in (buildNode({ ...spec, controllerManagedAttachDetach: false }, facts) as any).metadata)
})

t.test('status.images lists the largest images first, digests then tags, at most five names, cut to the maximum', async t => {
  const img = (id: string, size: number, tags: string[], digests: string[] = []) => ({ id, size, repoTags: tags, repoDigests: digests })
  const images = [
    img('sha256:a', 10, ['small:1']),
    img('sha256:b', 300, ['big:1', 'big:2', 'big:3', 'big:4', 'big:latest'], ['big@sha256:1']),
    img('sha256:c', 200, ['mid:1'], ['mid@sha256:2'])
  ]
  t.same(nodeImages(images, -1), [
    { names: ['big@sha256:1', 'big:1', 'big:2', 'big:3', 'big:4'], sizeBytes: 300 },
    { names: ['mid@sha256:2', 'mid:1'], sizeBytes: 200 },
    { names: ['small:1'], sizeBytes: 10 }
  ])
  t.same(nodeImages(images, 1).map(i => i.sizeBytes), [300], '--node-status-max-images cuts the list')
  t.same(nodeImages(images, 0), [])
  const input = { facts, capacity: capacityReport(facts, 110, { orchReserved: {}, systemReserved: {}, evictionHardMemoryBytes: 0 }), addresses: [], runtimeVersion: 'wasm://0.1.0', orchletVersion: 'v', port: 1, health: { ready: true, readyMessage: '', memoryPressure: false, diskPressure: false, pidPressure: false } }
  t.same((buildNodeStatus({ ...input, images: nodeImages(images, 1) }, 0) as any).images, [{ names: ['big@sha256:1', 'big:1', 'big:2', 'big:3', 'big:4'], sizeBytes: 300 }])
  t.notOk('images' in buildNodeStatus({ ...input, images: [] }, 0), 'an empty list is left out, as Go omits a nil slice')
})

t.test('the Ready message names the runtime\'s failing conditions in the kubelet\'s words', async t => {
  const ok = { type: 'RuntimeReady', status: true, reason: '', message: '' }
  const net = { type: 'NetworkReady', status: false, reason: 'NetworkPluginNotReady', message: 'Network plugin returns error: cni plugin not initialized' }
  t.same(runtimeReadyErrors({ conditions: [ok, { ...net, status: true }] }), [])
  t.equal(aggregateMessage(runtimeReadyErrors({ conditions: [ok, net] })), 'container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized')
  t.equal(aggregateMessage(runtimeReadyErrors({ conditions: [{ ...ok, status: false, reason: 'Down', message: 'x' }, net] })),
    '[container runtime not ready: RuntimeReady=false reason:Down message:x, container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized]')
  t.equal(aggregateMessage(runtimeReadyErrors({ conditions: [ok] })), 'container runtime network not ready: <nil>', 'a runtime that does not report NetworkReady')
  t.equal(aggregateMessage(runtimeReadyErrors(undefined)), 'container runtime is down')
})
