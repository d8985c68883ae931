// The memcg notifier against a fake helper process: its arguments, the line protocol, re-arming, failures, stop.
import t from 'tap'
import { EventEmitter } from 'node:events'
import { PassThrough } from 'node:stream'
import { createMemcgNotifier, helperScriptPath, type HelperProcess, type MemcgNotifierDeps } from './memcg-notifier.js'
import { existsSync } from 'node:fs'

class FakeHelper extends EventEmitter implements HelperProcess {
  readonly pid = 4242
  readonly stdin = new PassThrough()
  readonly stdout = new PassThrough()
  readonly stderr = new PassThrough()
  readonly written: string[] = []
  killed: string | undefined
  stdinEnded = false
  constructor (readonly exitOnStdinEnd = true) {
    super()
    this.stdin.setEncoding('utf8')
    this.stdin.on('data', (c: string) => this.written.push(c))
    this.stdin.on('end', () => { this.stdinEnded = true; if (this.exitOnStdinEnd) this.exit(0, null) })
  }

  say (line: string): void { this.stdout.write(`${line}\n`) }
  exit (code: number | null, signal: NodeJS.Signals | null): void { setImmediate(() => this.emit('exit', code, signal)) }
  kill (signal?: NodeJS.Signals): boolean { this.killed = signal ?? 'SIGTERM'; this.exit(null, this.killed as NodeJS.Signals); return true }
}

const tick = async (): Promise<void> => await new Promise(resolve => setTimeout(resolve, 5))

function rig (helper = new FakeHelper()): { helper: FakeHelper, spawned: Array<{ command: string, args: readonly string[] }>, crossed: number[], failed: string[], armed: number[], deps: MemcgNotifierDeps } {
  const r = { helper, spawned: [] as Array<{ command: string, args: readonly string[] }>, crossed: [] as number[], failed: [] as string[], armed: [] as number[] }
  const deps: MemcgNotifierDeps = {
    cgroupDir: '/sys/fs/cgroup/memory',
    python: '/usr/bin/python3',
    script: '/pkg/memcg-notifier.py',
    spawn: (command, args) => { r.spawned.push({ command, args }); return helper },
    onCrossed: () => r.crossed.push(Date.now()),
    onArmed: bytes => r.armed.push(bytes),
    onFailed: reason => r.failed.push(reason)
  }
  return { ...r, deps }
}

t.test('the helper ships beside the module', async t => {
  t.ok(existsSync(helperScriptPath()), helperScriptPath())
})

t.test('the helper is started with the cgroup and threshold; "armed" then "crossed" lines reach the handlers', async t => {
  const r = rig()
  const n = createMemcgNotifier(r.deps)
  t.equal(n.armed(), false)
  t.same(r.spawned, [], 'nothing runs before a threshold is known')
  n.set(1_000_000.7)
  t.same(r.spawned, [{ command: '/usr/bin/python3', args: ['/pkg/memcg-notifier.py', '/sys/fs/cgroup/memory', '1000000'] }])
  t.equal(n.armed(), false, 'not armed until the helper says so')
  r.helper.say('armed 1000000')
  await tick()
  t.equal(n.armed(), true)
  t.same(r.armed, [1_000_000])
  t.equal(n.pid(), 4242)
  r.helper.stdout.write('cross')
  await tick()
  t.equal(r.crossed.length, 0, 'a partial line waits for its end')
  r.helper.stdout.write('ed\ncrossed\n')
  await tick()
  t.equal(r.crossed.length, 2)
  await n.stop()
  t.equal(r.helper.stdinEnded, true, 'stop closes the helper\'s stdin, which ends it')
  t.same(r.failed, [], 'an exit asked for is no failure')
  t.equal(n.armed(), false)
})

t.test('a new threshold re-arms the running helper through its stdin; the same one is not sent again', async t => {
  const r = rig()
  const n = createMemcgNotifier(r.deps)
  n.set(500)
  r.helper.say('armed 500')
  await tick()
  n.set(500)
  await tick()
  t.same(r.helper.written, [], 'unchanged threshold: nothing written')
  n.set(800)
  await tick()
  t.same(r.helper.written, ['800\n'])
  t.equal(r.spawned.length, 1, 'one helper all along')
  t.equal(n.threshold(), 800)
  t.equal(n.armed(), false, 'until the helper confirms the new threshold')
  r.helper.say('armed 800')
  await tick()
  t.equal(n.armed(), true)
  await n.stop()
})

t.test('a helper that exits on its own is a failure with its stderr; nothing is spawned again', async t => {
  const r = rig()
  const n = createMemcgNotifier(r.deps)
  n.set(100)
  r.helper.stderr.write('no cgroup v1 memory controller at /sys/fs/cgroup/memory (no cgroup.event_control)\n')
  await tick()
  r.helper.exit(2, null)
  await tick()
  t.same(r.failed, ['no cgroup v1 memory controller at /sys/fs/cgroup/memory (no cgroup.event_control)'])
  t.equal(n.armed(), false)
  n.set(200)
  t.equal(r.spawned.length, 1, 'a failed notifier stays failed (the caller falls back to polling)')
  await n.stop()
})

t.test('a python3 that cannot be started is a failure', async t => {
  const r = rig()
  const n = createMemcgNotifier(r.deps)
  n.set(100)
  r.helper.emit('error', Object.assign(new Error('spawn /usr/bin/python3 ENOENT'), { code: 'ENOENT' }))
  await tick()
  t.same(r.failed, ['/usr/bin/python3: spawn /usr/bin/python3 ENOENT'])
  await n.stop()
})

t.test('a helper that does not exit when its stdin closes is killed after the grace period', async t => {
  const r = rig(new FakeHelper(false))
  const n = createMemcgNotifier(r.deps)
  n.set(100)
  await n.stop(20)
  t.equal(r.helper.killed, 'SIGKILL')
  t.same(r.failed, [])
})
