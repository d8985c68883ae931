import t from 'tap'
import { COLUMN_PRINTERS as P } from './printers.js'
import { formatEndpoints, selectorString } from './print-format.js'

const NOW = Date.parse('2026-01-01T01:00:00Z')
const ago = (s: number): string => new Date(NOW - s * 1000).toISOString().replace('.000Z', 'Z')
const print = (name: string, o: object): unknown => P[name]!(o, NOW)

const pod = (status: object, extra: object = {}) => ({ metadata: { name: 'p' }, spec: { containers: [{ name: 'a' }, { name: 'b' }], initContainers: [{ name: 'i' }] }, status, ...extra })

t.test('pod READY counts ready containers over all containers', async t => {
  t.equal(print('podReady', pod({ containerStatuses: [{ ready: true, state: { running: {} } }, { ready: false, state: { running: {} } }] })), '1/2')
  t.equal(print('podReady', pod({ containerStatuses: [{ ready: true, state: { terminated: { exitCode: 0 } } }] })), '0/2', 'only running containers count')
  t.equal(print('podReady', pod({})), '0/2')
})

const statusCases: Array<[string, object, object, string]> = [
  ['the phase when nothing else is known', { phase: 'Pending' }, {}, 'Pending'],
  ['an init container in progress', { phase: 'Pending', initContainerStatuses: [{ state: { running: {} } }] }, {}, 'Init:0/1'],
  ['a failed init container', { phase: 'Pending', initContainerStatuses: [{ state: { terminated: { exitCode: 1, reason: 'Error' } } }] }, {}, 'Init:Error'],
  ['a waiting reason', { phase: 'Running', initContainerStatuses: [{ state: { terminated: { exitCode: 0 } } }], containerStatuses: [{ state: { running: {} }, ready: true }, { state: { waiting: { reason: 'CrashLoopBackOff' } } }] }, {}, 'CrashLoopBackOff'],
  ['a terminated reason', { phase: 'Succeeded', containerStatuses: [{ state: { terminated: { exitCode: 0, reason: 'Completed' } } }] }, {}, 'Completed'],
  ['an exit code without reason', { phase: 'Failed', containerStatuses: [{ state: { terminated: { exitCode: 2 } } }] }, {}, 'ExitCode:2'],
  ['a deleting pod', { phase: 'Running' }, { metadata: { name: 'p', deletionTimestamp: '2026-01-01T00:00:00Z' } }, 'Terminating'],
  ['a deleted pod that already finished', { phase: 'Succeeded' }, { metadata: { name: 'p', deletionTimestamp: '2026-01-01T00:00:00Z' } }, 'Succeeded'],
  ['a scheduling-gated pod', { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'SchedulingGated' }] }, {}, 'SchedulingGated']
]
for (const [what, status, extra, want] of statusCases) {
  t.test(`pod STATUS shows ${what}`, async t => { t.equal(print('podStatus', pod(status, extra)), want) })
}

// [printer, object, expected cell]: what kubectl shows for each computed column.
const cells: Array<[string, string, object, unknown]> = [
  ['restarts without a last termination', 'podRestarts', pod({ containerStatuses: [{ restartCount: 2 }, { restartCount: 3 }] }), '5'],
  ['restarts with when the last one ended', 'podRestarts', pod({ initContainerStatuses: [{ name: 'i', state: { terminated: { exitCode: 0 } } }], containerStatuses: [{ restartCount: 1, lastState: { terminated: { finishedAt: ago(600) } } }, { restartCount: 2, lastState: { terminated: { finishedAt: ago(300) } } }] }), '3 (5m ago)'],
  ['restarts of a pod that has not restarted', 'podRestarts', pod({}), '0'],
  ['an unset pod IP', 'podIP', pod({}), '<none>'],
  ['READY counting a started sidecar init container', 'podReady', { spec: { initContainers: [{ name: 's', restartPolicy: 'Always' }], containers: [{ name: 'a' }] }, status: { initContainerStatuses: [{ name: 's', started: true, ready: true }], containerStatuses: [{ ready: true, state: { running: {} } }] } }, '2/2'],
  ['an empty workload selector', 'templateSelector', { spec: { selector: {} } }, '<none>'],
  ['the first of podIPs', 'podIP', pod({ podIP: '10.0.0.1', podIPs: [{ ip: '10.0.0.1' }, { ip: 'fd00::1' }] }), '10.0.0.1'],
  ['an unscheduled pod\'s node', 'podNode', pod({}), '<none>'],
  ['no nominated node', 'podNominatedNode', pod({}), '<none>'],
  ['no readiness gates', 'podReadinessGates', pod({}), '<none>'],
  ['readiness gates met over all', 'podReadinessGates', { spec: { readinessGates: [{ conditionType: 'a' }, { conditionType: 'b' }] }, status: { conditions: [{ type: 'a', status: 'True' }, { type: 'b', status: 'False' }] } }, '1/2'],
  ['a node\'s internal IP', 'nodeInternalIP', { status: { addresses: [{ type: 'Hostname', address: 'h' }, { type: 'InternalIP', address: '192.168.1.2' }] } }, '192.168.1.2'],
  ['a missing external IP', 'nodeExternalIP', { status: { addresses: [{ type: 'InternalIP', address: '192.168.1.2' }] } }, '<none>'],
  ['an unknown OS image', 'nodeOSImage', { status: { nodeInfo: {} } }, '<unknown>'],
  ['a kernel version', 'nodeKernelVersion', { status: { nodeInfo: { kernelVersion: '6.1.0' } } }, '6.1.0'],
  ['a service without selector', 'serviceSelector', { spec: {} }, '<none>'],
  ['a service selector, sorted', 'serviceSelector', { spec: { selector: { z: '1', app: 'web' } } }, 'app=web,z=1'],
  ['a headless service\'s cluster IP', 'serviceClusterIP', { spec: { clusterIP: 'None', clusterIPs: ['None'] } }, 'None'],
  ['an ExternalName service', 'serviceExternalIP', { spec: { type: 'ExternalName', externalName: 'db.example.com' } }, 'db.example.com'],
  ['a load balancer ingress then external IPs', 'serviceExternalIP', { spec: { type: 'LoadBalancer', externalIPs: ['1.1.1.1'] }, status: { loadBalancer: { ingress: [{ ip: '2.2.2.2' }] } } }, '2.2.2.2,1.1.1.1'],
  ['a service account\'s secrets', 'serviceAccountSecrets', { secrets: [{ name: 'a' }] }, 1],
  ['a service account without secrets', 'serviceAccountSecrets', {}, 0],
  ['endpoints without subsets', 'endpoints', {}, '<none>'],
  ['a PV claim', 'pvClaim', { spec: { claimRef: { namespace: 'ns', name: 'c' } } }, 'ns/c'],
  ['PV access modes in Kubernetes\' order', 'pvAccessModes', { spec: { accessModes: ['ReadWriteMany', 'ReadWriteOnce'] } }, 'RWO,RWX'],
  ['a PV without capacity', 'pvCapacity', { spec: {} }, '0'],
  ['a deleting PV', 'pvStatus', { metadata: { deletionTimestamp: ago(1) }, status: { phase: 'Bound' } }, 'Terminating'],
  ['an unset volume mode', 'volumeMode', { spec: {} }, '<unset>'],
  ['an unset volume attributes class', 'pvVolumeAttributesClass', { spec: {} }, '<unset>'],
  ['an unbound PVC\'s capacity', 'pvcCapacity', { spec: {}, status: { capacity: { storage: '1Gi' } } }, ''],
  ['a bound PVC\'s capacity and modes', 'pvcAccessModes', { spec: { volumeName: 'pv1' }, status: { accessModes: ['ReadWriteOnce'] } }, 'RWO'],
  ['deployment READY', 'replicasReady', { spec: { replicas: 3 }, status: { readyReplicas: 2 } }, '2/3'],
  ['template containers', 'templateContainers', { spec: { template: { spec: { containers: [{ name: 'a', image: 'x' }, { name: 'b', image: 'y' }] } } } }, 'a,b'],
  ['template images', 'templateImages', { spec: { template: { spec: { containers: [{ name: 'a', image: 'x' }, { name: 'b', image: 'y' }] } } } }, 'x,y'],
  ['a cron job\'s template images', 'templateImages', { spec: { jobTemplate: { spec: { template: { spec: { containers: [{ name: 'a', image: 'busybox' }] } } } } } }, 'busybox'],
  ['a selector string', 'templateSelector', { spec: { selector: { matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['b', 'a'] }, { key: 'x', operator: 'DoesNotExist' }] } } }, 'app=web,tier in (a,b),!x'],
  ['a daemon set without node selector', 'daemonSetNodeSelector', { spec: { template: { spec: {} } } }, '<none>'],
  ['job completions', 'jobCompletions', { spec: { completions: 3, parallelism: 1 }, status: { succeeded: 1 } }, '1/3'],
  ['job completions of a parallel job', 'jobCompletions', { spec: { parallelism: 2 }, status: {} }, '0/1 of 2'],
  ['job completions of a single pod job', 'jobCompletions', { spec: { parallelism: 1 }, status: { succeeded: 1 } }, '1/1'],
  ['a job that has not started', 'jobDuration', { status: {} }, ''],
  ['a running job\'s duration', 'jobDuration', { status: { startTime: ago(45) } }, '45s'],
  ['a finished job\'s duration', 'jobDuration', { status: { startTime: ago(600), completionTime: ago(400) } }, '3m20s'],
  ['a cron job without time zone', 'cronJobTimeZone', { spec: {} }, '<none>'],
  ['a cron job\'s suspend', 'cronJobSuspend', { spec: { suspend: false } }, 'False'],
  ['a cron job\'s active jobs', 'cronJobActive', { status: {} }, 0],
  ['a cron job never scheduled', 'cronJobLastSchedule', { status: {} }, '<none>'],
  ['a cron job\'s last schedule', 'cronJobLastSchedule', { status: { lastScheduleTime: ago(120) } }, '2m'],
  ['data counts', 'dataCount', { data: { a: '1', b: '2' }, binaryData: { c: '' } }, 3],
  ['an event\'s object', 'eventObject', { involvedObject: { kind: 'Pod', name: 'web' } }, 'pod/web'],
  ['an event\'s last seen', 'eventLastSeen', { lastTimestamp: ago(5), firstTimestamp: ago(60) }, '5s'],
  ['an event\'s last seen from its first time', 'eventLastSeen', { firstTimestamp: ago(60) }, '60s'],
  ['an event series\' last seen', 'eventLastSeen', { eventTime: ago(100), series: { lastObservedTime: ago(10), count: 4 } }, '10s'],
  ['an event without times', 'eventLastSeen', {}, '<unknown>'],
  ['a singleton event\'s count', 'eventCount', {}, 1],
  ['an event series\' count', 'eventCount', { count: 2, series: { count: 4 } }, 4],
  ['an event\'s source', 'eventSource', { source: { component: 'orchlet', host: 'n1' } }, 'orchlet, n1'],
  ['scale DESIRED', 'scaleDesired', { spec: { replicas: 3 } }, 3],
  ['scale AVAILABLE of a scale without status', 'scaleAvailable', { spec: {} }, 0],
  ['node roles under both label spellings', 'nodeRoles', { metadata: { labels: { 'node-role.kubernetes.io/control-plane': '', 'node-role.orch.io/edge': '', 'kubernetes.io/role': 'gpu' } } }, 'control-plane,edge,gpu'],
  ['an HPA\'s reference', 'hpaReference', { spec: { scaleTargetRef: { kind: 'Deployment', name: 'web' } } }, 'Deployment/web'],
  ['an HPA\'s targets before metrics come', 'hpaTargets', { spec: { metrics: [
    { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 75 } } },
    { type: 'Pods', pods: { metric: { name: 'qps' }, target: { type: 'AverageValue', averageValue: '10' } } }] } }, 'cpu: <unknown>/75%, <unknown>/10 (avg)'],
  ['an HPA\'s targets with current values', 'hpaTargets', { spec: { metrics: [{ type: 'Resource', resource: { name: 'memory', target: { type: 'Utilization', averageUtilization: 80 } } }] },
    status: { currentMetrics: [{ type: 'Resource', resource: { name: 'memory', current: { averageUtilization: 41 } } }] } }, 'memory: 41%/80%'],
  ['an autoscaling/v1 HPA\'s target', 'hpaTargets', { spec: { targetCPUUtilizationPercentage: 60 }, status: { currentCPUUtilizationPercentage: 12 } }, 'cpu: 12%/60%'],
  ['an HPA without metrics', 'hpaTargets', { spec: {} }, '<none>'],
  ['an HPA without minReplicas', 'hpaMinPods', { spec: {} }, '<unset>'],
  ['an ingress without class or hosts', 'ingressHosts', { spec: { rules: [{ http: {} }] } }, '*'],
  ['an ingress\'s class', 'ingressClass', { spec: {} }, '<none>'],
  ['an ingress with TLS', 'ingressPorts', { spec: { tls: [{ hosts: ['a'] }] } }, '80, 443'],
  ['a network policy selecting all pods', 'networkPolicySelector', { spec: { podSelector: {} } }, '<none>']
]
for (const [what, printer, object, want] of cells) {
  t.test(`prints ${what}`, async t => { t.same(print(printer, object), want) })
}

t.test('node STATUS follows the Ready condition and shows SchedulingDisabled', async t => {
  t.equal(print('nodeStatus', { status: { conditions: [{ type: 'Ready', status: 'True' }] } }), 'Ready')
  t.equal(print('nodeStatus', { status: { conditions: [{ type: 'Ready', status: 'False' }] }, spec: { unschedulable: true } }), 'NotReady,SchedulingDisabled')
  t.equal(print('nodeStatus', {}), 'Unknown')
})

t.test('service PORT(S) and EXTERNAL-IP read like kubectl\'s', async t => {
  t.equal(print('servicePorts', { spec: { ports: [{ port: 80, protocol: 'TCP' }, { port: 53, nodePort: 30053, protocol: 'UDP' }] } }), '80/TCP,53:30053/UDP')
  t.equal(print('serviceExternalIP', { spec: { type: 'ClusterIP' } }), '<none>')
  t.equal(print('serviceExternalIP', { spec: { type: 'LoadBalancer' } }), '<pending>')
})

t.test('endpoints show three addresses, then how many more', async t => {
  const ep = { subsets: [{ addresses: [{ ip: '10.0.0.1' }, { ip: '10.0.0.2' }], ports: [{ port: 80 }, { port: 443 }] }] }
  t.equal(formatEndpoints(ep), '10.0.0.1:80,10.0.0.2:80,10.0.0.1:443 + 1 more...')
  t.equal(formatEndpoints({ subsets: [{ addresses: [{ ip: '10.0.0.1' }] }] }), '10.0.0.1')
})

t.test('an empty or absent label selector prints as an empty string', async t => {
  t.equal(selectorString({}), '')
  t.equal(selectorString(undefined), '')
  t.equal(selectorString({ matchExpressions: [{ key: 'k', operator: 'Exists' }, { key: 'a', operator: 'NotIn', values: ['x'] }] }), 'a notin (x),k')
})

t.test('bindings print Role as kind/name and their users, groups and namespace/name service accounts', async t => {
  const b = {
    roleRef: { kind: 'ClusterRole', name: 'view' },
    subjects: [{ kind: 'User', name: 'alice' }, { kind: 'Group', name: 'devs' }, { kind: 'User', name: 'bob' },
      { kind: 'ServiceAccount', name: 'ci', namespace: 'build' }]
  }
  t.equal(P.bindingRole!(b, 0), 'ClusterRole/view')
  t.equal(P.bindingUsers!(b, 0), 'alice, bob')
  t.equal(P.bindingGroups!(b, 0), 'devs')
  t.equal(P.bindingServiceAccounts!(b, 0), 'build/ci')
  t.equal(P.bindingUsers!({ roleRef: {} }, 0), '')
})
