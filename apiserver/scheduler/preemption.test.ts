import t from 'tap'
import { findPreemption } from './preemption.js'
import { NodeInfo } from './node-info.js'

const pod = (name: string, priority: number, cpu = '1', extra: Record<string, unknown> = {}): any => ({ // eslint-disable-line @typescript-eslint/no-explicit-any
  metadata: { name, namespace: 'default', uid: name }, spec: { priority, containers: [{ name: 'c', image: 'i', resources: { requests: { cpu } } }], ...extra }
})
const node = (name: string, ...pods: any[]): NodeInfo => { // eslint-disable-line @typescript-eslint/no-explicit-any
  const n = new NodeInfo(name)
  n.setNode({ metadata: { name }, spec: {}, status: { allocatable: { cpu: '2', memory: '4Gi', pods: '10' } } })
  for (const p of pods) n.addPod(`default/${String(p.metadata.name)}`, p)
  return n
}

t.test('the fewest, lowest-priority victims on the best node; important pods are reprieved', async t => {
  const a = node('a', pod('low-1', 1), pod('mid-1', 50))
  const b = node('b', pod('mid-2', 50), pod('mid-3', 50))
  const plan = findPreemption(pod('high', 100), [a, b])
  t.equal(plan?.node, 'a')
  t.same(plan?.victims.map(v => v.metadata.name), ['low-1'], 'only the low pod goes; the mid one is given back')
})

t.test('no preemption for equal priority, PreemptNever, or a node that cannot fit even empty', async t => {
  const a = node('a', pod('same', 100), pod('same-2', 100))
  t.equal(findPreemption(pod('high', 100), [a]), undefined)
  const b = node('b', pod('low', 1), pod('low-2', 1))
  t.equal(findPreemption(pod('high', 100, '1', { preemptionPolicy: 'Never' }), [b]), undefined)
  t.equal(findPreemption(pod('huge', 100, '3'), [b]), undefined)
})
