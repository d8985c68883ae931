// The shutdown's bands, grace periods and order, on a fake clock; the pods' killing is recorded, not run (no runtime here).
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { FakeClock } from '../../apiserver/controllers/clock.js'
import { nodeShutdownStatus, planShutdown, runShutdown, shutdownBands, shutdownPods, SYSTEM_CRITICAL_PRIORITY, type ShutdownTarget } from './node-shutdown.js'
import type { Pod, PodStatus } from './pod-types.js'

const quiet = { info () {}, warn () {} }

function pod (name: string, spec: Partial<Pod['spec']> = {}): Pod {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default', uid: randomUUID() }, spec: { containers: [{ name: 'main', image: 'img' }], ...spec } }
}

/** Lets every settled promise run its continuations. */
async function settle (): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve()
  await new Promise(resolve => setImmediate(resolve))
}

t.test('the two periods become two bands in whole seconds, as the kubelet migrates them; 0 turns the shutdown off', async t => {
  t.same(shutdownBands({ shutdownGracePeriod: 30_000, shutdownGracePeriodCriticalPods: 10_000, shutdownGracePeriodByPodPriority: [] }),
    [{ priority: 0, shutdownGracePeriodSeconds: 20 }, { priority: SYSTEM_CRITICAL_PRIORITY, shutdownGracePeriodSeconds: 10 }])
  t.same(shutdownBands({ shutdownGracePeriod: 5_500, shutdownGracePeriodCriticalPods: 0, shutdownGracePeriodByPodPriority: [] }),
    [{ priority: 0, shutdownGracePeriodSeconds: 5 }, { priority: SYSTEM_CRITICAL_PRIORITY, shutdownGracePeriodSeconds: 0 }])
  t.same(shutdownBands({ shutdownGracePeriod: 0, shutdownGracePeriodCriticalPods: 0, shutdownGracePeriodByPodPriority: [] }), [])
  t.same(shutdownBands({ shutdownGracePeriod: 0, shutdownGracePeriodCriticalPods: 0, shutdownGracePeriodByPodPriority: [{ priority: 100, shutdownGracePeriodSeconds: 5 }, { priority: 0, shutdownGracePeriodSeconds: 9 }] }),
    [{ priority: 0, shutdownGracePeriodSeconds: 9 }, { priority: 100, shutdownGracePeriodSeconds: 5 }], 'by priority: sorted lowest first')
})

t.test('regular pods go first with min(terminationGracePeriodSeconds, total - critical); critical pods last', async t => {
  const bands = shutdownBands({ shutdownGracePeriod: 30_000, shutdownGracePeriodCriticalPods: 10_000, shutdownGracePeriodByPodPriority: [] })
  const long = pod('long', { terminationGracePeriodSeconds: 3600 })
  const short = pod('short', { terminationGracePeriodSeconds: 5 })
  const unset = pod('unset')
  const byClass = pod('by-class', { priorityClassName: 'system-node-critical', terminationGracePeriodSeconds: 60 })
  const byValue = pod('by-value', { priority: 2_000_000_000, terminationGracePeriodSeconds: 3 })
  const lowish = pod('lowish', { priority: 1_999_999_999, terminationGracePeriodSeconds: 60 })
  const negative = pod('negative', { priority: -5, terminationGracePeriodSeconds: 60 })
  const steps = planShutdown(bands, [byClass, long, short, unset, byValue, lowish, negative])
  t.same(steps.map(s => s.kills.map(k => [k.pod.metadata.name, k.gracePeriodSeconds])), [
    [['long', 20], ['short', 5], ['unset', 20], ['lowish', 20], ['negative', 20]],
    [['by-class', 10], ['by-value', 3]]
  ])
  t.same(steps.map(s => s.waitMs), [20_000, 10_000], 'each band is waited for at most its grace period')
})

t.test('by pod priority: each pod goes to the highest band it reaches; empty bands are skipped', async t => {
  const bands = [{ priority: 0, shutdownGracePeriodSeconds: 10 }, { priority: 1000, shutdownGracePeriodSeconds: 20 }, { priority: 5000, shutdownGracePeriodSeconds: 30 }]
  const steps = planShutdown(bands, [pod('p1000', { priority: 1000 }), pod('p999', { priority: 999 }), pod('p9999', { priority: 9999, terminationGracePeriodSeconds: 45 })])
  t.same(steps.map(s => [s.priority, s.kills.map(k => [k.pod.metadata.name, k.gracePeriodSeconds])]), [
    [0, [['p999', 10]]],
    [1000, [['p1000', 20]]],
    [5000, [['p9999', 30]]]
  ])
  t.same(planShutdown(bands, [pod('only', { priority: 1 })]).map(s => s.priority), [0])
})

t.test('a band waits for its pods, or its grace period, before the next band starts', async t => {
  const clock = new FakeClock()
  const killed: Array<[string, number, number]> = []
  const pending = new Map<string, () => void>()
  const bands = shutdownBands({ shutdownGracePeriod: 30_000, shutdownGracePeriodCriticalPods: 10_000, shutdownGracePeriodByPodPriority: [] })
  const steps = planShutdown(bands, [pod('slow', { terminationGracePeriodSeconds: 3600 }), pod('quick'), pod('critical', { priority: SYSTEM_CRITICAL_PRIORITY })])
  let finished = false
  void runShutdown(steps, {
    clock,
    logger: quiet,
    kill: async (p, grace) => {
      killed.push([p.metadata.name, grace, clock.now()])
      await new Promise<void>(resolve => pending.set(p.metadata.name, resolve))
    }
  }).then(() => { finished = true })
  await settle()
  const start = clock.now()
  t.same(killed.map(k => k[0]), ['slow', 'quick'], 'regular pods are killed together; critical ones wait')
  pending.get('quick')!()
  clock.advance(19_999)
  await settle()
  t.same(killed.map(k => k[0]), ['slow', 'quick'], 'the band waits for its slowest pod up to its grace period')
  clock.advance(1)
  await settle()
  t.same(killed.map(k => [k[0], k[1], k[2] - start]), [['slow', 20, 0], ['quick', 20, 0], ['critical', 10, 20_000]], 'cut at 20 s, the critical band starts')
  t.equal(finished, false)
  pending.get('critical')!()
  await settle()
  t.equal(finished, true, 'a band whose pods all stopped ends before its grace period')
  t.equal(clock.pending(), 0, 'no timer is left behind')
  pending.get('slow')!()
})

t.test('a kill that fails is logged and does not hold up the shutdown', async t => {
  const clock = new FakeClock()
  const warned: string[] = []
  const steps = planShutdown([{ priority: 0, shutdownGracePeriodSeconds: 5 }], [pod('broken')])
  await runShutdown(steps, { clock, logger: { info () {}, warn: (o: object, m?: string) => warned.push(`${m}: ${(o as { err: string }).err}`) }, kill: async () => { throw new Error('runtime gone') } })
  t.same(warned, ['shutdown manager failed killing pod: runtime gone'])
})

/** A pod manager stand-in recording what the shutdown asks of it. */
function target (pods: Pod[]): ShutdownTarget & { calls: string[] } {
  const calls: string[] = []
  return {
    calls,
    close: () => { calls.push('close') },
    active: () => pods,
    shutdownPod: async (uid, grace) => { calls.push(`shutdown ${pods.find(p => p.metadata.uid === uid)!.metadata.name} ${grace}`) },
    detach: uid => { calls.push(`detach ${pods.find(p => p.metadata.uid === uid)!.metadata.name}`) },
    idle: async () => { calls.push('idle') }
  }
}

t.test('with the shutdown off, only pods that die with the process are stopped, with their own grace period; others keep running', async t => {
  const wasm = pod('wasm', { terminationGracePeriodSeconds: 7 })
  const deleting = pod('wasm-deleting', { terminationGracePeriodSeconds: 7 })
  deleting.metadata.deletionGracePeriodSeconds = 2
  const cri = pod('cri', { terminationGracePeriodSeconds: 7 })
  const tg = target([wasm, deleting, cri])
  await shutdownPods(tg, { bands: [], diesWithProcess: p => p !== cri, clock: new FakeClock(), logger: quiet })
  t.same(tg.calls, ['close', 'detach cri', 'shutdown wasm 7', 'shutdown wasm-deleting 2', 'idle'])
})

t.test('with the shutdown on, every pod is stopped, whatever its runtime', async t => {
  const tg = target([pod('critical', { priority: SYSTEM_CRITICAL_PRIORITY, terminationGracePeriodSeconds: 30 }), pod('cri', { terminationGracePeriodSeconds: 600 })])
  await shutdownPods(tg, { bands: shutdownBands({ shutdownGracePeriod: 6_000, shutdownGracePeriodCriticalPods: 2_000, shutdownGracePeriodByPodPriority: [] }), diesWithProcess: () => false, clock: new FakeClock(), logger: quiet })
  t.same(tg.calls, ['close', 'shutdown cri 4', 'shutdown critical 2', 'idle'])
})

t.test('a stopped pod is Failed with the kubelet\'s reason, message and DisruptionTarget condition; a Succeeded one stays Succeeded', async t => {
  const running: PodStatus = {
    phase: 'Running',
    podIP: '10.0.0.5',
    conditions: [
      { type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: '2026-01-01T00:00:00Z' },
      { type: 'Ready', status: 'True', lastProbeTime: null, lastTransitionTime: '2026-01-01T00:00:00Z' }
    ]
  }
  const st = nodeShutdownStatus(running, '2026-01-01T01:00:00Z')
  t.equal(st.phase, 'Failed')
  t.equal(st.reason, 'Terminated')
  t.equal(st.message, 'Pod was terminated in response to imminent node shutdown.')
  t.equal(st.podIP, '10.0.0.5', 'the rest of the status is kept')
  t.same(st.conditions!.map(c => [c.type, c.status, c.reason]), [
    ['PodScheduled', 'True', undefined], ['DisruptionTarget', 'True', 'TerminationByKubelet'], ['Ready', 'False', 'PodFailed'], ['ContainersReady', 'False', 'PodFailed']
  ])
  t.equal(st.conditions!.find(c => c.type === 'DisruptionTarget')?.message, 'Pod was terminated in response to imminent node shutdown.')
  t.equal(nodeShutdownStatus({ phase: 'Succeeded' }, '2026-01-01T01:00:00Z').phase, 'Succeeded')
  t.equal(nodeShutdownStatus(undefined, '2026-01-01T01:00:00Z').phase, 'Failed', 'a pod that never reported a status')
})
