import t from 'tap'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { bootTimeMs, cpuUsageNanoSeconds, fsUsage, memoryUsage, processLimits } from './machine-stats.js'

function fakeProc (): string {
  const dir = mkdtempSync(join(tmpdir(), 'orch-proc-'))
  writeFileSync(join(dir, 'stat'), 'cpu  100 20 30 5000 7 1 2 3 0 0\ncpu0 50 10 15 2500 3 0 1 1 0 0\nbtime 1767225600\n')
  writeFileSync(join(dir, 'meminfo'), 'MemTotal:        1000 kB\nMemFree:          200 kB\nMemAvailable:     600 kB\nInactive(file):   100 kB\nAnonPages:        300 kB\n')
  writeFileSync(join(dir, 'vmstat'), 'pgfault 42\npgmajfault 3\n')
  writeFileSync(join(dir, 'loadavg'), '0.10 0.20 0.30 2/345 6789\n')
  mkdirSync(join(dir, 'sys', 'kernel'), { recursive: true })
  writeFileSync(join(dir, 'sys', 'kernel', 'pid_max'), '4194304\n')
  writeFileSync(join(dir, 'sys', 'kernel', 'threads-max'), '95000\n')
  return dir
}

t.test('reads CPU time, boot time, memory and process limits from /proc', async t => {
  const proc = fakeProc()
  t.teardown(() => rmSync(proc, { recursive: true, force: true }))
  t.equal(cpuUsageNanoSeconds(proc), (100 + 20 + 30 + 1 + 2 + 3) * 10_000_000, 'busy ticks at 100 Hz, idle and iowait left out')
  t.equal(bootTimeMs(proc), Date.parse('2026-01-01T00:00:00Z'))
  t.same(memoryUsage(proc), { usageBytes: 800 * 1024, workingSetBytes: 700 * 1024, availableBytes: 300 * 1024, rssBytes: 300 * 1024, pageFaults: 42, majorPageFaults: 3 })
  t.same(processLimits(proc), { maxpid: 95000, curproc: 345 }, 'the lower of pid_max and threads-max; all tasks from loadavg')
})

t.test('missing /proc files give undefined rather than an error', async t => {
  const empty = mkdtempSync(join(tmpdir(), 'orch-proc-'))
  t.teardown(() => rmSync(empty, { recursive: true, force: true }))
  t.equal(cpuUsageNanoSeconds(empty), undefined)
  t.equal(memoryUsage(empty), undefined)
  t.same(processLimits(empty), {})
})

t.test('the filesystem usage adds up', async t => {
  const fs = fsUsage(tmpdir())!
  t.ok(fs.capacityBytes > 0)
  t.ok(fs.availableBytes <= fs.capacityBytes - fs.usedBytes + 1, 'available excludes the reserved blocks')
  t.equal(fs.inodesUsed, fs.inodes - fs.inodesFree)
  t.equal(fsUsage('/nonexistent/orch'), undefined)
})
