// The cgroup drivers: cgroupfs for real on this machine's cgroup v1, v2 on a test tree laid out as the unified hierarchy.
import t from 'tap'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomUUID } from 'node:crypto'
import { createCgroupfsV1, createCgroupfsV2, createSystemdDriver, isCgroupV2, sharesToWeight, systemdSlices, CgroupError } from './driver.js'

const V1 = '/sys/fs/cgroup'
const v1Writable = existsSync(join(V1, 'memory', 'memory.limit_in_bytes')) && !isCgroupV2(V1) && process.getuid?.() === 0

t.test('cgroupfs v1: a cgroup is made in the memory, cpu and pids trees with its limits, and removed', { skip: v1Writable ? false : 'no writable cgroup v1 here' }, async t => {
  const driver = createCgroupfsV1(V1)
  const name = [`orch-test-${randomUUID().slice(0, 8)}`, 'pod1']
  t.teardown(() => { driver.remove(name); driver.remove(name.slice(0, 1)) })
  driver.ensure(name, { cpuShares: 512, cpuPeriodUs: 100_000, cpuQuotaUs: 50_000, memoryLimitBytes: 64 * 1024 * 1024, pidsMax: 100 })
  t.ok(driver.exists(name))
  t.equal(readFileSync(join(V1, 'memory', ...name, 'memory.limit_in_bytes'), 'utf8').trim(), String(64 * 1024 * 1024), 'the kernel holds the memory limit')
  t.same(driver.read(name), { cpuShares: 512, cpuQuotaUs: 50_000, cpuPeriodUs: 100_000, memoryLimitBytes: 64 * 1024 * 1024, pidsMax: 100 })
  driver.update(name, { cpuQuotaUs: -1, pidsMax: -1 })
  t.equal(driver.read(name).cpuQuotaUs, -1)
  t.equal(driver.read(name).pidsMax, -1, 'pids.max reads max')
  t.equal(driver.runtimeName(name), '/' + name.join('/'))
  driver.remove(name)
  t.notOk(driver.exists(name))
  t.doesNotThrow(() => driver.remove(name), 'removing an absent cgroup is no error')
})

t.test('cgroupfs v2: the unified layout, controllers enabled down the tree, weight and cpu.max', async t => {
  const root = mkdtempSync(join(tmpdir(), 'cgv2-'))
  t.teardown(() => rmSync(root, { recursive: true, force: true }))
  writeFileSync(join(root, 'cgroup.controllers'), 'cpuset cpu io memory hugetlb pids rdma misc\n')
  writeFileSync(join(root, 'cgroup.subtree_control'), '')
  t.ok(isCgroupV2(root))
  const driver = createCgroupfsV2(root)
  driver.ensure(['kubepods', 'burstable', 'podx'], { cpuShares: 1024, cpuPeriodUs: 100_000, cpuQuotaUs: 25_000, memoryLimitBytes: 1 << 20, pidsMax: 42 })
  t.equal(readFileSync(join(root, 'cgroup.subtree_control'), 'utf8'), '+cpu +memory +pids')
  t.equal(readFileSync(join(root, 'kubepods', 'burstable', 'cgroup.subtree_control'), 'utf8'), '+cpu +memory +pids')
  const pod = join(root, 'kubepods', 'burstable', 'podx')
  t.equal(readFileSync(join(pod, 'cpu.max'), 'utf8'), '25000 100000')
  t.equal(readFileSync(join(pod, 'cpu.weight'), 'utf8'), String(sharesToWeight(1024)))
  t.equal(readFileSync(join(pod, 'memory.max'), 'utf8'), String(1 << 20))
  t.equal(readFileSync(join(pod, 'pids.max'), 'utf8'), '42')
  driver.update(['kubepods', 'burstable', 'podx'], { cpuQuotaUs: -1, memoryLimitBytes: -1 })
  t.equal(readFileSync(join(pod, 'cpu.max'), 'utf8'), 'max 100000', 'the period is kept when only the quota changes')
  t.equal(readFileSync(join(pod, 'memory.max'), 'utf8'), 'max')
  t.equal(sharesToWeight(2), 1)
  t.equal(sharesToWeight(262144), 10000)
  t.equal(sharesToWeight(1024), 39, 'runc\'s mapping')
  mkdirSync(join(root, 'empty'))
  driver.remove(['empty'])
  t.notOk(existsSync(join(root, 'empty')))
})

t.test('systemd: slice names, and a clear error where systemd does not run', async t => {
  t.same(systemdSlices(['kubepods', 'burstable', 'pod12-34']), ['kubepods.slice', 'kubepods-burstable.slice', 'kubepods-burstable-pod12_34.slice'])
  t.throws(() => createSystemdDriver(join(tmpdir(), 'no-systemd-here')), new CgroupError(`--cgroup-driver=systemd: systemd is not running on this machine (no ${join(tmpdir(), 'no-systemd-here')}); use --cgroup-driver=cgroupfs`))
})
