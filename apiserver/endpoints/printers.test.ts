import t from 'tap'
import { COLUMN_PRINTERS as P } from './printers.js'

const pod = (status: object, extra: object = {}) => ({ metadata: { name: 'p' }, spec: { containers: [{ name: 'a' }, { name: 'b' }], initContainers: [{ name: 'i' }] }, status, ...extra })

t.test('pod READY counts ready containers over all containers', async t => {
  t.equal(P.podReady!(pod({ containerStatuses: [{ ready: true }, { ready: false }] })), '1/2')
  t.equal(P.podReady!(pod({})), '0/2')
})

const statusCases: Array<[string, object, object, string]> = [
  ['the phase when nothing else is known', { phase: 'Pending' }, {}, 'Pending'],
  ['an init container in progress', { phase: 'Pending', initContainerStatuses: [{ state: { running: {} } }] }, {}, 'Init:0/1'],
  ['a failed init container', { phase: 'Pending', initContainerStatuses: [{ state: { terminated: { exitCode: 1, reason: 'Error' } } }] }, {}, 'Init:Error'],
  ['a waiting reason', { phase: 'Running', initContainerStatuses: [{ state: { terminated: { exitCode: 0 } } }], containerStatuses: [{ state: { running: {} }, ready: true }, { state: { waiting: { reason: 'CrashLoopBackOff' } } }] }, {}, 'CrashLoopBackOff'],
  ['a terminated reason', { phase: 'Succeeded', containerStatuses: [{ state: { terminated: { exitCode: 0, reason: 'Completed' } } }] }, {}, 'Completed'],
  ['an exit code without reason', { phase: 'Failed', containerStatuses: [{ state: { terminated: { exitCode: 2 } } }] }, {}, 'ExitCode:2'],
  ['a deleting pod', { phase: 'Running' }, { metadata: { name: 'p', deletionTimestamp: '2026-01-01T00:00:00Z' } }, 'Terminating']
]
for (const [what, status, extra, want] of statusCases) {
  t.test(`pod STATUS shows ${what}`, async t => { t.equal(P.podStatus!(pod(status, extra)), want) })
}

t.test('pod RESTARTS sums the containers\' restart counts', async t => {
  t.equal(P.podRestarts!(pod({ containerStatuses: [{ restartCount: 2 }, { restartCount: 3 }] })), 5)
})

t.test('node STATUS follows the Ready condition and shows SchedulingDisabled', async t => {
  t.equal(P.nodeStatus!({ status: { conditions: [{ type: 'Ready', status: 'True' }] } }), 'Ready')
  t.equal(P.nodeStatus!({ status: { conditions: [{ type: 'Ready', status: 'False' }] }, spec: { unschedulable: true } }), 'NotReady,SchedulingDisabled')
  t.equal(P.nodeStatus!({}), 'Unknown')
})

t.test('service PORT(S) and EXTERNAL-IP read like kubectl\'s', async t => {
  t.equal(P.servicePorts!({ spec: { ports: [{ port: 80, protocol: 'TCP' }, { port: 53, nodePort: 30053, protocol: 'UDP' }] } }), '80/TCP,53:30053/UDP')
  t.equal(P.serviceExternalIP!({ spec: { type: 'ClusterIP' } }), '<none>')
  t.equal(P.serviceExternalIP!({ spec: { type: 'LoadBalancer' } }), '<pending>')
})

t.test('replicas READY and data counts', async t => {
  t.equal(P.replicasReady!({ spec: { replicas: 3 }, status: { readyReplicas: 2 } }), '2/3')
  t.equal(P.dataCount!({ data: { a: '1', b: '2' }, binaryData: { c: '' } }), 3)
})

t.test('event OBJECT and LAST SEEN read like kubectl\'s', async t => {
  t.equal(P.eventObject!({ involvedObject: { kind: 'Pod', name: 'web' } }), 'pod/web')
  t.equal(P.eventLastSeen!({ lastTimestamp: '2026-01-01T00:00:05Z', metadata: { creationTimestamp: '2026-01-01T00:00:00Z' } }), '2026-01-01T00:00:05Z')
  t.equal(P.eventLastSeen!({ metadata: { creationTimestamp: '2026-01-01T00:00:00Z' } }), '2026-01-01T00:00:00Z')
})
