// The node's memory figures from a fake /proc and cgroup tree: working set and the usage the memcg threshold is set on.
import t, { type Test } from 'tap'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { memcgUsage, nodeMemory } from './signals.js'

const Mi = 1024 * 1024

function tree (t: Test): { proc: string, cgroup: string } {
  const dir = mkdtempSync(join(tmpdir(), 'orch-signals-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const proc = join(dir, 'proc')
  mkdirSync(proc)
  writeFileSync(join(proc, 'meminfo'), `MemTotal: ${1024 * 1024} kB\nMemFree: ${512 * 1024} kB\nInactive(file): ${128 * 1024} kB\n`)
  writeFileSync(join(proc, 'vmstat'), '')
  return { proc, cgroup: join(dir, 'cgroup') }
}

t.test('cgroup v1: usage and working set of the root memory cgroup; capacity from meminfo', async t => {
  const { proc, cgroup } = tree(t)
  mkdirSync(join(cgroup, 'memory'), { recursive: true })
  writeFileSync(join(cgroup, 'memory', 'memory.usage_in_bytes'), `${600 * Mi}\n`)
  writeFileSync(join(cgroup, 'memory', 'memory.stat'), `cache 1\ntotal_inactive_file ${100 * Mi}\n`)
  t.same(nodeMemory(cgroup, proc), { capacity: 1024 * Mi, usage: 600 * Mi, workingSet: 500 * Mi })
  t.same(memcgUsage(join(cgroup, 'memory')), { usage: 600 * Mi, workingSet: 500 * Mi })
  t.equal(memcgUsage(join(cgroup, 'missing')), undefined)
})

t.test('cgroup v2 and no cgroup figures: usage follows the working set where nothing else is known', async t => {
  const { proc, cgroup } = tree(t)
  mkdirSync(cgroup)
  writeFileSync(join(cgroup, 'memory.current'), `${300 * Mi}\n`)
  writeFileSync(join(cgroup, 'memory.stat'), `inactive_file ${50 * Mi}\n`)
  t.same(nodeMemory(cgroup, proc), { capacity: 1024 * Mi, usage: 300 * Mi, workingSet: 250 * Mi })
  t.same(nodeMemory(join(cgroup, 'none'), proc), { capacity: 1024 * Mi, usage: 384 * Mi, workingSet: 384 * Mi })
})
