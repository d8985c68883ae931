import t from 'tap'
import { filterNode, fitErrorMessage } from './filters.js'
import { NodeInfo } from './node-info.js'

const node = (name: string, extra: Record<string, any> = {}): NodeInfo => { // eslint-disable-line @typescript-eslint/no-explicit-any
  const n = new NodeInfo(name)
  n.setNode({ metadata: { name, labels: { 'kubernetes.io/hostname': name, ...(extra.labels ?? {}) } }, spec: extra.spec ?? {}, status: { allocatable: { cpu: '2', memory: '4Gi', pods: '3' } } })
  return n
}
const pod = (spec: Record<string, unknown> = {}, labels: Record<string, string> = {}): any => ({ metadata: { name: 'p', namespace: 'default', labels }, spec: { containers: [{ name: 'c', image: 'i' }], ...spec } }) // eslint-disable-line @typescript-eslint/no-explicit-any

t.test('resources: requests against allocatable, pod count, every shortfall reported', async t => {
  const n = node('a')
  const big = pod({ containers: [{ name: 'c', image: 'i', resources: { requests: { cpu: '3', memory: '8Gi' } } }] })
  t.same(filterNode(big, n, { nodes: [n] }), ['Insufficient cpu', 'Insufficient memory'])
  for (let i = 0; i < 3; i++) n.addPod(`default/x${i}`, pod())
  t.same(filterNode(pod(), n, { nodes: [n] }), ['Too many pods'])
  n.removePod('default/x0')
  t.same(filterNode(pod(), n, { nodes: [n] }), [])
})

t.test('cordon, taints and tolerations, node selectors and affinity', async t => {
  const cordoned = node('a', { spec: { unschedulable: true } })
  t.same(filterNode(pod(), cordoned, { nodes: [cordoned] }), ['node(s) were unschedulable'])
  const tainted = node('b', { spec: { taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }] } })
  t.same(filterNode(pod(), tainted, { nodes: [tainted] }), ['node(s) had untolerated taint {dedicated: gpu}'])
  t.same(filterNode(pod({ tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' }] }), tainted, { nodes: [tainted] }), [])
  const labelled = node('c', { labels: { disk: 'ssd' } })
  t.same(filterNode(pod({ nodeSelector: { disk: 'hdd' } }), labelled, { nodes: [labelled] }), ["node(s) didn't match Pod's node affinity/selector"])
  const affinity = { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'disk', operator: 'In', values: ['ssd'] }] }] } } }
  t.same(filterNode(pod({ affinity }), labelled, { nodes: [labelled] }), [])
})

t.test('host ports and pod anti-affinity', async t => {
  const n = node('a')
  const withPort = pod({ containers: [{ name: 'c', image: 'i', ports: [{ containerPort: 80, hostPort: 8080 }] }] })
  n.addPod('default/other', withPort)
  t.same(filterNode(withPort, n, { nodes: [n] }), ["node(s) didn't have free ports for the requested pod ports"])
  const m = node('b')
  m.addPod('default/web-1', pod({}, { app: 'web' }))
  const anti = { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { app: 'web' } } }] } }
  t.same(filterNode(pod({ affinity: anti }, { app: 'web' }), m, { nodes: [m] }), ["node(s) didn't match pod anti-affinity rules"])
})

t.test('the failure message counts reasons over nodes, sorted as kube-scheduler sorts them', async t => {
  t.equal(fitErrorMessage(1, new Map([['Insufficient cpu', 1]])), '0/1 nodes are available: 1 Insufficient cpu.')
  t.equal(fitErrorMessage(3, new Map([['node(s) were unschedulable', 2], ['Insufficient cpu', 1]])),
    '0/3 nodes are available: 1 Insufficient cpu, 2 node(s) were unschedulable.')
})
