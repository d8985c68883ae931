import t from 'tap'
import { conditionEvents } from './node-manager.js'

const conds = (ready: string, memory = 'False') => [
  { type: 'MemoryPressure', status: memory }, { type: 'DiskPressure', status: 'False' }, { type: 'PIDPressure', status: 'False' }, { type: 'Ready', status: ready }
]

t.test('a newly registered node records every condition, as the kubelet does', async t => {
  t.same(conditionEvents('n1', [], conds('True')).map(e => e.message), [
    'Node n1 status is now: NodeHasSufficientMemory',
    'Node n1 status is now: NodeHasNoDiskPressure',
    'Node n1 status is now: NodeHasSufficientPID',
    'Node n1 status is now: NodeReady'
  ])
})

t.test('only transitions are recorded afterwards', async t => {
  t.same(conditionEvents('n1', conds('True'), conds('True')), [])
  t.same(conditionEvents('n1', conds('True'), conds('False', 'True')).map(e => e.reason), ['NodeHasInsufficientMemory', 'NodeNotReady'])
  t.same(conditionEvents('n1', conds('Unknown'), conds('True')).map(e => [e.type, e.reason]), [['Normal', 'NodeReady']])
})
