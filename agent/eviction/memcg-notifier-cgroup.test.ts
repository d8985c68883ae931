// The kernel's memcg threshold notification for real (cgroup v1, as root): a test memory cgroup, a child process
// allocating inside it, the python3 helper's notification, re-arming, the eviction manager's round, no helper left.
import t, { type Test } from 'tap'
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, rmdirSync } from 'node:fs'
import { join } from 'node:path'
import { createMemcgNotifier, DEFAULT_PYTHON, helperScriptPath, spawnHelper, type HelperProcess, type MemcgNotifier } from './memcg-notifier.js'
import { createMemoryNotifier } from './memory-threshold-notifier.js'
import { memcgUsage } from './signals.js'
import { configuredThresholds } from './thresholds.js'
import { createNodeEviction } from './node-eviction.js'
import { createEventRecorder } from '../events/recorder.js'
import { loadOrchletConfig } from '../config/load.js'

const MEMORY = '/sys/fs/cgroup/memory'
const Mi = 1024 * 1024

function unavailable (): string | undefined {
  if (process.getuid?.() !== 0) return 'not root: a memory cgroup cannot be created'
  if (!existsSync(join(MEMORY, 'cgroup.event_control'))) return `no cgroup v1 memory controller at ${MEMORY}`
  const py = spawnSync(DEFAULT_PYTHON, ['-c', 'import os; os.eventfd'], { encoding: 'utf8' })
  if (py.status !== 0) return `${DEFAULT_PYTHON} without os.eventfd: ${py.error?.message ?? py.stderr.trim()}`
  return undefined
}

function usage (dir: string): number { return Number(readFileSync(join(dir, 'memory.usage_in_bytes'), 'utf8').trim()) }

function alive (pid: number): boolean {
  try { process.kill(pid, 0); return true } catch { return false }
}

async function until (what: string, fn: () => boolean, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!fn()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise(resolve => setTimeout(resolve, 20))
  }
}

/** A test memory cgroup, removed (its processes killed first) when the test ends. */
function testCgroup (t: Test, name: string): string {
  const dir = join(MEMORY, `orch-memcg-test-${process.pid}-${name}`)
  mkdirSync(dir)
  t.teardown(async () => {
    for (let i = 0; i < 100; i++) {
      for (const pid of readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean)) {
        try { process.kill(Number(pid), 'SIGKILL') } catch {}
      }
      try { rmdirSync(dir); return } catch { await new Promise(resolve => setTimeout(resolve, 50)) }
    }
    rmdirSync(dir)
  })
  return dir
}

/** A node process that joins `dir` and allocates (and touches) `mib` MiB per line read on its stdin. */
function allocator (t: Test, dir: string): { child: ChildProcess, allocate(mib: number): void } {
  const child = spawn(process.execPath, ['-e', `
    require('fs').writeFileSync(${JSON.stringify(join(dir, 'cgroup.procs'))}, String(process.pid))
    const held = []
    process.stdin.setEncoding('utf8')
    process.stdin.on('data', d => { for (const l of d.split('\\n').filter(Boolean)) held.push(Buffer.alloc(Number(l) * 1048576, 1)); process.stdout.write('ok\\n') })
    process.stdout.write('joined\\n')
  `], { stdio: ['pipe', 'pipe', 'inherit'] })
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL')
      await new Promise(resolve => child.once('exit', resolve))
    }
  })
  return { child, allocate: mib => { child.stdin!.write(`${mib}\n`) } }
}

async function lineFrom (child: ChildProcess, want: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    let seen = ''
    child.stdout!.setEncoding('utf8')
    const onData = (d: string): void => { seen += d; if (seen.includes(`${want}\n`)) { child.stdout!.off('data', onData); resolve() } }
    child.stdout!.on('data', onData)
    child.once('exit', code => reject(new Error(`allocator exited (${code}) before "${want}"`)))
  })
}

const why = unavailable()
if (why !== undefined) {
  t.comment(`skipping the real memcg notification tests: ${why}`)
} else {
  t.test('usage crossing the threshold in a test memory cgroup is notified; a new threshold re-arms the helper', async t => {
    const dir = testCgroup(t, 'notify')
    let crossed = 0
    const failed: string[] = []
    const n = createMemcgNotifier({ cgroupDir: dir, onCrossed: () => { crossed++ }, onFailed: r => failed.push(r) })
    t.teardown(async () => { await n.stop() })
    const a = allocator(t, dir)
    await lineFrom(a.child, 'joined')
    n.set(usage(dir) + 16 * Mi)
    await until('the helper armed', () => n.armed())
    const pid = n.pid()!
    t.ok(alive(pid), `helper running (pid ${pid})`)
    t.equal(crossed, 0, 'nothing before the threshold is crossed')

    a.allocate(48)
    await until('the notification', () => crossed > 0)
    t.ok(usage(dir) >= n.threshold()!, `notified at ${Math.round(usage(dir) / Mi)} MiB in the cgroup, threshold ${Math.round(n.threshold()! / Mi)} MiB`)

    const before = crossed
    n.set(usage(dir) + 16 * Mi)
    await until('the new threshold armed', () => n.armed())
    t.equal(n.pid(), pid, 'the same helper, re-armed through its stdin')
    a.allocate(48)
    await until('the notification at the new threshold', () => crossed > before)
    t.same(failed, [])

    await n.stop()
    t.notOk(alive(pid), 'the helper is gone after stop')
    t.equal(n.pid(), undefined)
  })

  t.test('the helper exits when its stdin closes (the orchlet died), and fails clearly on a cgroup without event_control', async t => {
    const dir = testCgroup(t, 'orphan')
    const p: HelperProcess = spawnHelper(DEFAULT_PYTHON, [helperScriptPath(), dir, String(1 << 30)])
    const exited = new Promise<number | null>(resolve => p.on('exit', code => resolve(code)))
    let out = ''
    p.stdout!.setEncoding('utf8')
    p.stdout!.on('data', d => { out += d })
    await until('armed', () => out.includes('armed'))
    p.stdin!.end()
    t.equal(await exited, 0)

    const failures: string[] = []
    const bad = createMemcgNotifier({ cgroupDir: join(dir, 'missing'), onCrossed () {}, onFailed: r => failures.push(r) })
    bad.set(1)
    await until('the failure', () => failures.length > 0)
    t.match(failures[0], /no cgroup v1 memory controller at .*missing/)
    await bad.stop()
  })

  t.test('the orchlet\'s eviction manager with kernelMemcgNotification: a notification starts a round; stop leaves no helper', async t => {
    const dir = testCgroup(t, 'eviction')
    const a = allocator(t, dir)
    await lineFrom(a.child, 'joined')
    const allocatable = 1024 * Mi
    // The allocatable threshold put 16 MiB above what the test cgroup (standing in for the pods cgroup) uses now.
    const threshold = allocatable - (usage(dir) + 16 * Mi)
    const config = await loadOrchletConfig(['--kernel-memcg-notification', '--eviction-hard', `memory.available<1,allocatableMemory.available<${threshold}`], {}, { logger: { warn () {} } })
    const helpers: HelperProcess[] = []
    const armed: string[] = []
    const logs: string[] = []
    let rounds = 0
    const eviction = createNodeEviction({
      config, allocatableMemoryBytes: allocatable, now: Date.now, podsMemcgDir: dir,
      statsSummary: async () => { rounds++; return { pods: [] } },
      pods: { active: () => [], evict: async () => false },
      recorder: createEventRecorder({ component: 'orchlet', host: 'node-a', qps: 0, burst: 0, logger: { info () {}, warn () {} } }),
      logger: { info: (_o, m) => { if (m !== undefined) logs.push(m) }, warn: (_o, m) => { if (m !== undefined) logs.push(m) } },
      spawn: (command, args) => {
        const p = spawnHelper(command, args)
        helpers.push(p)
        p.stdout!.on('data', (d: Buffer | string) => { if (String(d).includes('armed')) armed.push(args[1]!) })
        return p
      }
    })
    t.teardown(async () => { await eviction.stop() })
    eviction.start(3_600_000, 3_600_000)
    await eviction.synchronize()
    t.equal(helpers.length, 2, 'one helper for memory.available (root memcg), one for allocatableMemory.available (pods cgroup)')
    await until('both armed', () => armed.length >= 2)
    t.ok(logs.some(m => /memory thresholds are watched by the kernel's memcg notification/.test(m)), 'which mode is in use is logged')
    const roundsBefore = rounds
    a.allocate(48)
    await until('a round started by the notification', () => logs.includes('eviction manager: hard allocatable memory eviction threshold crossed') && rounds > roundsBefore)
    t.ok(rounds > roundsBefore, 'the kernel\'s notification started a round between periods (the periods are an hour)')
    const pids = helpers.map(h => h.pid!)
    await eviction.stop()
    t.same(pids.filter(alive), [], 'no helper process left after stop')
  })

  t.test('a helper killed (as by the OOM killer) is started again at the next refresh and notifies again', async t => {
    const dir = testCgroup(t, 'restart')
    const a = allocator(t, dir)
    await lineFrom(a.child, 'joined')
    const allocatable = 1024 * Mi
    const made: MemcgNotifier[] = []
    const crossed: string[] = []
    const notifier = createMemoryNotifier({
      thresholds: configuredThresholds({ evictionHard: [{ signal: 'allocatableMemory.available', value: { quantity: allocatable - (usage(dir) + 16 * Mi) } }], evictionSoft: [], evictionSoftGracePeriod: {}, evictionMinimumReclaim: {} }),
      rootMemcgDir: MEMORY,
      podsMemcgDir: dir,
      nodeFigures: () => undefined,
      podsFigures: () => ({ capacity: allocatable, ...memcgUsage(dir)! }),
      create: n => { const m = createMemcgNotifier(n); made.push(m); return m },
      logger: { info () {}, warn () {} }
    })
    t.teardown(async () => { await notifier.stop() })
    notifier.start(m => crossed.push(m))
    notifier.refresh()
    await until('armed', () => made[0]?.armed() === true)
    const first = made[0]!.pid()!
    process.kill(first, 'SIGKILL')
    await until('the failure seen', () => made[0]!.pid() === undefined)
    notifier.refresh()
    t.equal(made.length, 2, 'a new helper')
    await until('the new helper armed', () => made[1]!.armed())
    a.allocate(48)
    await until('the notification', () => crossed.length > 0)
    t.same(crossed.slice(0, 1), ['eviction manager: hard allocatable memory eviction threshold crossed'])
    const second = made[1]!.pid()!
    await notifier.stop()
    t.same([first, second].filter(alive), [], 'no helper left')
  })
}
