// The memory threshold notifiers on fake memcg notifiers: the kubelet's threshold arithmetic, which cgroup, fallback and its log.
import t from 'tap'
import { configuredThresholds } from './thresholds.js'
import type { MemcgNotifier, MemcgNotifierDeps } from './memcg-notifier.js'
import { createMemoryNotifier, describeThreshold, memcgThreshold, type MemcgFigures, type MemoryNotifierDeps } from './memory-threshold-notifier.js'

const Mi = 1024 * 1024

interface Fake extends MemcgNotifier { deps: MemcgNotifierDeps, sets: number[], stopped: boolean, confirm(): void }

function fakeNotifier (deps: MemcgNotifierDeps): Fake {
  let armedAt: number | undefined
  const f: Fake = {
    deps,
    sets: [],
    stopped: false,
    set (b) { f.sets.push(b) },
    threshold: () => f.sets.at(-1),
    armed: () => !f.stopped && armedAt !== undefined && armedAt === f.sets.at(-1),
    pid: () => 99,
    async stop () { f.stopped = true },
    confirm () { armedAt = f.sets.at(-1); deps.onArmed?.(armedAt!) }
  }
  return f
}

function rig (over: Partial<MemoryNotifierDeps> & { hard?: string[], soft?: string[] } = {}): { fakes: Fake[], logs: Array<[string, string, object]>, crossed: string[], notifier: ReturnType<typeof createMemoryNotifier>, figures: { node?: MemcgFigures, pods?: MemcgFigures } } {
  const fakes: Fake[] = []
  const logs: Array<[string, string, object]> = []
  const crossed: string[] = []
  const figures: { node?: MemcgFigures, pods?: MemcgFigures } = {
    node: { capacity: 1024 * Mi, usage: 700 * Mi, workingSet: 600 * Mi },
    pods: { capacity: 512 * Mi, usage: 300 * Mi, workingSet: 250 * Mi }
  }
  const parse = (s: string): { signal: 'memory.available' | 'allocatableMemory.available' | 'nodefs.available', value: { quantity: number } | { percent: number } } => {
    const [signal, v] = s.split('<') as ['memory.available', string]
    return { signal, value: v.endsWith('%') ? { percent: Number(v.slice(0, -1)) } : { quantity: Number(v) * Mi } }
  }
  const thresholds = configuredThresholds({
    evictionHard: (over.hard ?? ['memory.available<100']).map(parse),
    evictionSoft: (over.soft ?? []).map(parse),
    evictionSoftGracePeriod: { 'memory.available': 60_000 },
    evictionMinimumReclaim: {}
  })
  const notifier = createMemoryNotifier({
    thresholds,
    rootMemcgDir: '/sys/fs/cgroup/memory',
    podsMemcgDir: '/sys/fs/cgroup/memory/kubepods',
    nodeFigures: () => figures.node,
    podsFigures: () => figures.pods,
    create: d => { const f = fakeNotifier(d); fakes.push(f); return f },
    logger: { info: (o, m) => logs.push(['info', m ?? '', o]), warn: (o, m) => logs.push(['warn', m ?? '', o]) },
    ...over
  })
  notifier.start(m => crossed.push(m))
  return { fakes, logs, crossed, notifier, figures }
}

t.test('the usage threshold is capacity less the eviction threshold plus the inactive file pages', async t => {
  const [hard, pct] = configuredThresholds({ evictionHard: [{ signal: 'memory.available', value: { quantity: 100 * Mi } }], evictionSoft: [{ signal: 'memory.available', value: { percent: 10 } }], evictionSoftGracePeriod: { 'memory.available': 1000 }, evictionMinimumReclaim: {} })
  const f = { capacity: 1000 * Mi, usage: 700 * Mi, workingSet: 600 * Mi }
  t.equal(memcgThreshold(hard!, f), 1000 * Mi - 100 * Mi + 100 * Mi)
  t.equal(memcgThreshold(pct!, f), 1000 * Mi - 100 * Mi + 100 * Mi, 'a percent of capacity')
  t.equal(memcgThreshold(hard!, { ...f, workingSet: 800 * Mi }), 900 * Mi, 'a working set above usage adds nothing')
  t.equal(describeThreshold(hard!), 'hard memory eviction threshold')
  t.equal(describeThreshold(pct!), 'soft memory eviction threshold')
  t.equal(describeThreshold({ signal: 'allocatableMemory.available', value: { quantity: 1 }, gracePeriodMs: 0 }), 'hard allocatable memory eviction threshold')
})

t.test('one notifier per memory threshold: memory.available on the root memcg, allocatable on the pods cgroup', async t => {
  const r = rig({ hard: ['memory.available<100', 'allocatableMemory.available<50', 'nodefs.available<10'], soft: ['memory.available<200'] })
  t.same(r.fakes.map(f => f.deps.cgroupDir), ['/sys/fs/cgroup/memory', '/sys/fs/cgroup/memory/kubepods', '/sys/fs/cgroup/memory'], 'disk thresholds have none')
  t.same(r.fakes.map(f => f.sets), [[], [], []], 'armed only once figures are read (the first round)')
  r.notifier.refresh()
  t.same(r.fakes.map(f => f.sets), [[1024 * Mi - 100 * Mi + 100 * Mi], [512 * Mi - 50 * Mi + 50 * Mi], [1024 * Mi - 200 * Mi + 100 * Mi]])
  r.fakes[1]!.deps.onCrossed()
  t.same(r.crossed, ['eviction manager: hard allocatable memory eviction threshold crossed'])
  await r.notifier.stop()
  t.ok(r.fakes.every(f => f.stopped))
})

t.test('watching once every memory.available notifier is armed, logged once; a failure falls back to polling with a warning', async t => {
  const r = rig({ hard: ['memory.available<100', 'allocatableMemory.available<50'], soft: ['memory.available<200'] })
  r.notifier.refresh()
  t.equal(r.notifier.watching(), false)
  r.fakes[0]!.confirm()
  t.equal(r.notifier.watching(), false, 'the soft threshold is not armed yet')
  r.fakes[2]!.confirm()
  t.equal(r.notifier.watching(), true, 'the allocatable notifier does not decide whether memory.available is polled')
  r.fakes[1]!.confirm()
  r.figures.node = { ...r.figures.node!, usage: 710 * Mi }
  r.notifier.refresh()
  t.equal(r.fakes[0]!.threshold(), 1024 * Mi + 10 * Mi, 're-armed with the new figures')
  t.equal(r.notifier.watching(), false, 'until the helper confirms the new threshold')
  r.fakes[0]!.confirm()
  t.equal(r.logs.filter(l => /watched by the kernel/.test(l[1])).length, 1, 'the mode is logged once')
  r.fakes[2]!.deps.onFailed('helper exited (code 2)')
  t.equal(r.notifier.watching(), false)
  t.match(r.logs.at(-1), ['warn', /polled every second: the kernel's memcg notification stopped/, { reason: 'helper exited (code 2)' }])
  const sets = r.fakes[2]!.sets.length
  r.notifier.refresh()
  t.equal(r.fakes[2]!.sets.length, sets, 'the failed helper is not set again')
  t.equal(r.fakes.length, 4, 'a notifier that had worked is started anew at the next refresh, as the kubelet makes its notifiers anew')
  t.same(r.fakes[3]!.sets, [1024 * Mi - 200 * Mi + 110 * Mi])
  r.fakes[3]!.confirm()
  t.equal(r.notifier.watching(), true)
  t.equal(r.logs.filter(l => /watched by the kernel/.test(l[1])).length, 2, 'the return to notifications is logged')
  await r.notifier.stop()
  t.ok(r.fakes[3]!.stopped)
})

t.test('without a cgroup v1 memory controller nothing is started and polling is logged once', async t => {
  const r = rig({ rootMemcgDir: undefined })
  r.notifier.refresh()
  t.same(r.fakes, [])
  t.equal(r.notifier.watching(), false)
  t.match(r.logs, [['info', /polled every second: the kernel's memcg notification is not available here/, { reason: /cgroup v2/ }]])
  await r.notifier.stop()
})

t.test('a helper failing at start (no python3, no os.eventfd) is logged as polling', async t => {
  const r = rig()
  r.notifier.refresh()
  r.fakes[0]!.deps.onFailed('/usr/bin/python3: spawn /usr/bin/python3 ENOENT')
  t.match(r.logs, [['info', /polled every second: the kernel's memcg notification is not available here/, { reason: /ENOENT/ }]])
  t.equal(r.notifier.watching(), false)
  r.notifier.refresh()
  t.equal(r.fakes.length, 1, 'one that never worked is not tried again')
  t.equal(r.logs.length, 1)
})

t.test('no memory threshold, no notifier', async t => {
  const r = rig({ hard: ['nodefs.available<10'] })
  r.notifier.refresh()
  t.same(r.fakes, [])
  t.same(r.logs, [])
})
