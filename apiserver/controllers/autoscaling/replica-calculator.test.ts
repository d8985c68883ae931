// The replica calculator and the behaviour rules answer as Kubernetes' HPA does for the same inputs.
import t from 'tap'
import { resourceReplicas, type PodSample } from './replica-calculator.js'
import { behaviorOf, decide, recordScale, type History } from './behavior.js'

const NOW = Date.parse('2026-01-01T12:00:00Z')
const settings = { tolerance: 0.1, cpuInitializationPeriodMs: 300_000, initialReadinessDelayMs: 30_000 }
const iso = (ms: number): string => new Date(ms).toISOString()

function pod (name: string, cpuRequest = '500m', o: { phase?: string; ready?: boolean; startedAgoMs?: number; readyAgoMs?: number } = {}): Record<string, unknown> {
  const started = NOW - (o.startedAgoMs ?? 3_600_000)
  return {
    metadata: { name },
    spec: { containers: [{ name: 'main', resources: { requests: { cpu: cpuRequest, memory: '100Mi' } } }] },
    status: {
      phase: o.phase ?? 'Running', startTime: iso(started),
      conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True', lastTransitionTime: iso(NOW - (o.readyAgoMs ?? 3_500_000)) }]
    }
  }
}
const sample = (value: number): PodSample => ({ value, timestampMs: NOW - 1000, windowMs: 10_000 })

t.test('cpu utilization above target scales up in proportion', async t => {
  const pods = [pod('a'), pod('b')]
  const r = resourceReplicas(2, { resource: 'cpu', averageUtilization: 50 }, pods, new Map([['a', sample(500)], ['b', sample(500)]]), settings, NOW)
  t.equal(r.averageUtilization, 100)
  t.equal(r.replicas, 4)
  t.equal(r.averageValue, 500)
})

t.test('a ratio within the tolerance keeps the count', async t => {
  const r = resourceReplicas(2, { resource: 'cpu', averageUtilization: 50 }, [pod('a'), pod('b')], new Map([['a', sample(270)], ['b', sample(270)]]), settings, NOW)
  t.equal(r.averageUtilization, 54)
  t.equal(r.replicas, 2)
})

t.test('an average value target divides the average usage by the target', async t => {
  const r = resourceReplicas(3, { resource: 'memory', averageValue: 100 * 2 ** 20 }, [pod('a'), pod('b'), pod('c')],
    new Map([['a', sample(50 * 2 ** 20)], ['b', sample(50 * 2 ** 20)], ['c', sample(50 * 2 ** 20)]]), settings, NOW)
  t.equal(r.replicas, 2)
})

t.test('missing pods dampen a scale-down and unready pods a scale-up', async t => {
  // Two measured pods at 10% of a 50% target would ask for 1 of 3; the missing one counts as 100%: (10+10+100)/3 = 40%.
  const down = resourceReplicas(3, { resource: 'cpu', averageUtilization: 50 }, [pod('a'), pod('b'), pod('c')], new Map([['a', sample(50)], ['b', sample(50)]]), settings, NOW)
  t.equal(down.replicas, 3, 'ceil(0.8 * 3) = 3')
  // One ready pod at 200% and one pod that just started (not ready yet): the unready one counts as 0.
  const fresh = pod('b', '500m', { ready: false, startedAgoMs: 10_000, readyAgoMs: 10_000 })
  const up = resourceReplicas(2, { resource: 'cpu', averageUtilization: 50 }, [pod('a'), fresh], new Map([['a', sample(1000)], ['b', sample(1000)]]), settings, NOW)
  t.equal(up.replicas, 4, '(200% + 0%) / 2 = 100% of 50%: 4 pods')
})

t.test('pending and deleted pods are ignored; no samples or no requests are errors', async t => {
  const pods = [pod('a'), pod('p', '500m', { phase: 'Pending' })]
  t.equal(resourceReplicas(2, { resource: 'cpu', averageUtilization: 50 }, pods, new Map([['a', sample(250)], ['p', sample(5000)]]), settings, NOW).replicas, 2)
  t.throws(() => resourceReplicas(1, { resource: 'cpu', averageUtilization: 50 }, [pod('a')], new Map(), settings, NOW), /did not receive metrics for targeted pods/)
  const noRequest = { ...pod('a'), spec: { containers: [{ name: 'main' }] } }
  t.throws(() => resourceReplicas(1, { resource: 'cpu', averageUtilization: 50 }, [noRequest], new Map([['a', sample(1)]]), settings, NOW), /missing request for cpu in container main of Pod a/)
  t.throws(() => resourceReplicas(1, { resource: 'cpu', averageUtilization: 50 }, [], new Map(), settings, NOW), /no pods returned by selector/)
})

t.test('behaviour: the default scale-up policy allows max(4 pods, 100%) per 15 s, capped by maxReplicas', async t => {
  const b = behaviorOf(undefined, 300_000)
  const h: History = { recommendations: [], up: [], down: [] }
  const d = decide(b, h, 2, 20, 1, 10, NOW)
  t.equal(d.replicas, 6, '2 + 4 pods beats 2 * 2')
  t.match(d.limited, { status: 'True', reason: 'ScaleUpLimit' })
  recordScale(b, h, 2, 6, NOW)
  const again = decide(b, h, 6, 20, 1, 10, NOW + 5000)
  t.equal(again.replicas, 6, 'within the same period the start count is still 2')
  const later = decide(b, h, 6, 20, 1, 10, NOW + 20_000)
  t.equal(later.replicas, 10)
  t.match(later.limited, { reason: 'TooManyReplicas' })
})

t.test('behaviour: the scale-down stabilization window keeps the highest recent recommendation', async t => {
  const b = behaviorOf({ scaleDown: { stabilizationWindowSeconds: 60 } }, 300_000)
  t.equal(b.scaleDown.stabilizationWindowSeconds, 60)
  const h: History = { recommendations: [], up: [], down: [] }
  t.equal(decide(b, h, 5, 5, 1, 10, NOW).replicas, 5)
  const d = decide(b, h, 5, 1, 1, 10, NOW + 30_000)
  t.equal(d.replicas, 5, 'the recommendation of 5 is still in the window')
  t.equal(d.stabilized.reason, 'ScaleDownStabilized')
  const after = decide(b, h, 5, 1, 1, 10, NOW + 61_000)
  t.equal(after.replicas, 1, 'once it left the window the count drops')
  t.equal(after.limited.reason, 'DesiredWithinRange')
  const slow = behaviorOf({ scaleDown: { stabilizationWindowSeconds: 0, policies: [{ type: 'Pods', value: 1, periodSeconds: 60 }] } }, 300_000)
  t.equal(decide(slow, { recommendations: [], up: [], down: [] }, 5, 1, 1, 10, NOW).replicas, 4, 'one pod per minute')
  t.equal(decide(behaviorOf({ scaleDown: { selectPolicy: 'Disabled' } }, 0), { recommendations: [], up: [], down: [] }, 5, 1, 1, 10, NOW).replicas, 5, 'scale-down disabled')
})
