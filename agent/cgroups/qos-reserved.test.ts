// --qos-reserved: the computation of the tiers' memory limits, and the limits written on a cgroup v2 test tree as pods come and go.
import t, { type Test } from 'tap'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomUUID } from 'node:crypto'
import { loadOrchletConfig } from '../config/load.js'
import type { Pod } from '../pods/pod-types.js'
import { CgroupError, createCgroupfsV1, createCgroupfsV2, isCgroupV2, type CgroupDriver } from './driver.js'
import { createPodCgroups } from './pod-cgroups.js'
import { setUpNodeCgroups } from './node-cgroups.js'
import { qosMemoryRequests, qosReservedMemoryLimits } from './qos-reserved.js'

const quiet = { info () {}, warn () {} }
const Mi = 1024 * 1024
const Gi = 1024 * Mi

type Res = Record<string, Record<string, string>>
function pod (name: string, ...containers: Res[]): Pod {
  return {
    apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default', uid: randomUUID() },
    spec: { containers: containers.map((resources, i) => ({ name: `c${i}`, image: 'img', resources })) }
  }
}
const guaranteed = (mem: string): Pod => pod('g', { requests: { cpu: '1', memory: mem }, limits: { cpu: '1', memory: mem } })
const burstable = (mem: string): Pod => pod('b', { requests: { memory: mem } })

t.test('the requests are summed per QoS class; BestEffort pods count nothing; a limit alone is the request', async t => {
  const initHeavy = burstable('100Mi')
  initHeavy.spec.initContainers = [{ name: 'init', image: 'img', resources: { requests: { memory: '300Mi' } } }]
  const limitOnly = pod('lim', { limits: { memory: '64Mi' } }, { requests: { cpu: '100m' } })
  t.same(qosMemoryRequests([guaranteed('1Gi'), guaranteed('512Mi'), burstable('256Mi'), initHeavy, limitOnly, pod('be', {})]),
    { Guaranteed: 1536 * Mi, Burstable: (256 + 300 + 64) * Mi }, 'the larger of the containers\' sum and an init container\'s')
})

t.test('burstable = allocatable − guaranteed × pct; besteffort = burstable − burstable × pct', async t => {
  t.same(qosReservedMemoryLimits({ Guaranteed: 2 * Gi, Burstable: 1 * Gi }, 8 * Gi, 50), { burstable: 7 * Gi, bestEffort: 6.5 * Gi })
  t.same(qosReservedMemoryLimits({ Guaranteed: 2 * Gi, Burstable: 1 * Gi }, 8 * Gi, 100), { burstable: 6 * Gi, bestEffort: 5 * Gi })
  t.same(qosReservedMemoryLimits({ Guaranteed: 2 * Gi, Burstable: 1 * Gi }, 8 * Gi, 0), { burstable: 8 * Gi, bestEffort: 8 * Gi }, '0% reserves nothing')
  t.same(qosReservedMemoryLimits({ Guaranteed: 3, Burstable: 0 }, 100, 50), { burstable: 99, bestEffort: 99 }, 'whole bytes, truncated')
  t.same(qosReservedMemoryLimits({ Guaranteed: 10 * Gi, Burstable: 0 }, 8 * Gi, 100), { burstable: 0, bestEffort: 0 }, 'never below zero')
})

function tree (t: Test): string {
  const root = mkdtempSync(join(tmpdir(), 'cgv2-qos-'))
  t.teardown(() => rmSync(root, { recursive: true, force: true }))
  writeFileSync(join(root, 'cgroup.controllers'), 'cpu memory pids\n')
  writeFileSync(join(root, 'cgroup.subtree_control'), '')
  return root
}

async function config (argv: string[]): Promise<Awaited<ReturnType<typeof loadOrchletConfig>>> {
  return await loadOrchletConfig(argv, {}, { logger: { warn () {} } })
}

t.test('on a cgroup v2 tree the tiers\' memory.max follows the pods as they come and go', async t => {
  const root = tree(t)
  const c = await config(['--qos-reserved', 'memory=50%', '--feature-gates', 'QOSReserved=true', '--system-reserved', 'memory=1Gi'])
  const active: Pod[] = []
  const cg = setUpNodeCgroups({ config: c, capacity: { cpuMillis: 4000, memoryBytes: 9 * Gi }, logger: quiet, driver: createCgroupfsV2(root), activePods: () => active })!
  const max = (...tierPath: string[]): string => readFileSync(join(root, 'kubepods', ...tierPath, 'memory.max'), 'utf8')
  t.equal(max('burstable'), String(8 * Gi), 'no pods: both tiers get allocatable (capacity less the 1Gi reserved)')
  t.equal(max('besteffort'), String(8 * Gi))
  const g = guaranteed('2Gi')
  active.push(g)
  cg.ensurePod(g)
  t.equal(max('burstable'), String(7 * Gi), 'half the Guaranteed pod\'s 2Gi kept from the burstable tier')
  t.equal(max('besteffort'), String(7 * Gi))
  const b = burstable('1Gi')
  active.push(b)
  cg.ensurePod(b)
  t.equal(max('burstable'), String(7 * Gi))
  t.equal(max('besteffort'), String(6.5 * Gi), 'and half the Burstable pod\'s 1Gi from the besteffort tier')
  active.splice(0, 1)
  cg.removePod(g)
  t.equal(max('burstable'), String(8 * Gi), 'the Guaranteed pod gone: its reservation is released')
  t.equal(max('besteffort'), String(7.5 * Gi))
  t.equal(max(), String(8 * Gi), 'the pods cgroup itself keeps node allocatable (--enforce-node-allocatable=pods)')
})

t.test('without --qos-reserved the tiers get no memory limit', async t => {
  const root = tree(t)
  setUpNodeCgroups({ config: await config([]), capacity: { cpuMillis: 4000, memoryBytes: 8 * Gi }, logger: quiet, driver: createCgroupfsV2(root), activePods: () => [guaranteed('1Gi')] })
  t.notOk(existsSync(join(root, 'kubepods', 'burstable', 'memory.max')))
  t.notOk(existsSync(join(root, 'kubepods', 'besteffort', 'memory.max')))
})

t.test('a tier already above its new limit is held at its usage where the kernel refuses the lower limit', async t => {
  const root = tree(t)
  const fs = createCgroupfsV2(root)
  const usage = new Map<string, number>([['kubepods/besteffort', 7 * Gi]])
  // cgroup v1's behaviour: a memory limit below the current usage is refused (EBUSY).
  const driver: CgroupDriver = {
    ...fs,
    update (name, r) {
      const used = usage.get(name.join('/'))
      if (r.memoryLimitBytes !== undefined && used !== undefined && r.memoryLimitBytes < used) throw new CgroupError(`writing ${r.memoryLimitBytes}: device or resource busy`)
      fs.update(name, r)
    },
    memoryUsage: name => usage.get(name.join('/'))
  }
  const warnings: string[] = []
  const c = await config(['--qos-reserved', 'memory=100%', '--feature-gates', 'QOSReserved=true', '--enforce-node-allocatable', 'none'])
  setUpNodeCgroups({ config: c, capacity: { cpuMillis: 4000, memoryBytes: 8 * Gi }, logger: { info () {}, warn: (_o: object, m?: string) => { warnings.push(m ?? '') } }, driver, activePods: () => [guaranteed('2Gi')] })
  t.equal(readFileSync(join(root, 'kubepods', 'burstable', 'memory.max'), 'utf8'), String(6 * Gi))
  t.equal(readFileSync(join(root, 'kubepods', 'besteffort', 'memory.max'), 'utf8'), String(7 * Gi), 'held at its 7Gi usage instead of 6Gi')
  t.match(warnings, [/holding it at its usage/])
})

const V1 = '/sys/fs/cgroup'
const v1Writable = existsSync(join(V1, 'memory', 'memory.limit_in_bytes')) && !isCgroupV2(V1) && process.getuid?.() === 0

t.test('on this machine\'s cgroup v1 the kernel holds the tiers\' reserved limits', { skip: v1Writable ? false : 'no writable cgroup v1 here' }, async t => {
  const top = `orch-test-${randomUUID().slice(0, 8)}`
  const driver = createCgroupfsV1(V1)
  const active = [guaranteed('2Gi'), burstable('1Gi')]
  const cg = createPodCgroups({ driver, root: [top], cpuCfsQuota: true, cpuCfsQuotaPeriodUs: 100_000, podPidsLimit: 0, qosReserved: { memoryPercent: 50, allocatableMemoryBytes: 8 * Gi }, activePods: () => active, logger: quiet })
  t.teardown(() => { for (const d of [['kubepods', 'burstable'], ['kubepods', 'besteffort'], ['kubepods'], []]) driver.remove([top, ...d]) })
  cg.setUp()
  const limit = (tierName: string): string => readFileSync(join(V1, 'memory', top, 'kubepods', tierName, 'memory.limit_in_bytes'), 'utf8').trim()
  t.equal(limit('burstable'), String(7 * Gi))
  t.equal(limit('besteffort'), String(6.5 * Gi))
  active.splice(0, 2)
  cg.updateTiers()
  t.equal(limit('burstable'), String(8 * Gi), 'the pods gone, the periodic update gives the tiers allocatable again')
  t.equal(limit('besteffort'), String(8 * Gi))
})
