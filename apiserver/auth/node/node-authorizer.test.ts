import t from 'tap'
import type { Test } from 'tap'
import { body, eventually, openFixture, silentLogger } from '../../registry/testing.js'
import { internalContext } from '../../registry/internal-context.js'
import type { RequestContext, ResourceHandler } from '../../registry/types.js'
import { nonResourceAttributes, resourceAttributes, type UserInfo } from '../types.js'
import { createNodeAuthorization, type NodeAuthorization } from './node-authorizer.js'

const admin = internalContext('test-admin')
const n1: UserInfo = { username: 'system:node:n1', groups: ['system:nodes', 'system:authenticated'] }
const asNode = (name: string): RequestContext => ({ user: { username: `system:node:${name}`, groups: ['system:nodes'] }, dryRun: false, fieldValidation: 'Strict', warnings: [] })

function pod (name: string, node: string, spec: Record<string, unknown> = {}, meta: Record<string, unknown> = {}): Record<string, unknown> {
  return { metadata: { name, ...meta }, spec: { nodeName: node, containers: [{ name: 'c', image: 'busybox' }], ...spec } }
}

async function setup (t: Test): Promise<{ node: NodeAuthorization, h: (group: string, plural: string) => ResourceHandler }> {
  let node: NodeAuthorization | undefined
  const f = await openFixture({ admission: [{ admit: async a => { await node?.admission.admit(a) } }] })
  node = createNodeAuthorization({ registry: f.registry, logger: silentLogger })
  const made = node
  t.teardown(async () => { made.stop(); await f.close() })
  await made.ready()
  return { node: made, h: (group, plural) => f.registry.handler(group, 'v1', plural)! }
}

t.test('a node reads only the secrets, configmaps, claims and tokens its pods reference', async t => {
  const { node, h } = await setup(t)
  const pods = h('', 'pods')
  await pods.create(admin, 'default', body(pod('p1', 'n1', {
    serviceAccountName: 'sa1',
    volumes: [{ name: 'v', secret: { secretName: 's1' } }, { name: 'd', persistentVolumeClaim: { claimName: 'claim1' } },
      { name: 'p', projected: { sources: [{ configMap: { name: 'c2' } }] } }],
    containers: [{ name: 'c', image: 'busybox', env: [{ name: 'X', valueFrom: { configMapKeyRef: { name: 'c1', key: 'k' } } }], envFrom: [{ secretRef: { name: 's4' } }] }],
    imagePullSecrets: [{ name: 'pull' }]
  })))
  await pods.create(admin, 'default', body(pod('p2', 'n2', { volumes: [{ name: 'v', secret: { secretName: 's2' } }] })))
  const ask = async (a: Parameters<typeof resourceAttributes>[1]) => await node.authorizer.authorize(resourceAttributes(n1, { namespace: 'default', ...a }))
  for (const name of ['s1', 's4', 'pull']) t.equal((await ask({ verb: 'get', resource: 'secrets', name })).decision, 'allow', `secret ${name}`)
  for (const name of ['c1', 'c2']) t.equal((await ask({ verb: 'get', resource: 'configmaps', name })).decision, 'allow', `configmap ${name}`)
  t.same(await ask({ verb: 'get', resource: 'secrets', name: 's2' }), { decision: 'noOpinion', reason: "no relationship found between node 'n1' and this object" })
  t.same(await ask({ verb: 'list', resource: 'secrets' }), { decision: 'noOpinion', reason: 'No Object name found' })
  t.same(await ask({ verb: 'delete', resource: 'secrets', name: 's1' }), { decision: 'noOpinion', reason: 'can only read resources of this type' })
  t.equal((await ask({ verb: 'get', resource: 'persistentvolumeclaims', name: 'claim1' })).decision, 'allow')
  t.equal((await ask({ verb: 'create', resource: 'serviceaccounts', subresource: 'token', name: 'sa1' })).decision, 'allow')
  t.equal((await ask({ verb: 'create', resource: 'serviceaccounts', subresource: 'token', name: 'default' })).decision, 'noOpinion')
  t.equal((await ask({ verb: 'get', resource: 'secrets', name: 's1', namespace: 'orch-system' })).decision, 'noOpinion', 'same name, other namespace')

  await h('', 'persistentvolumeclaims').create(admin, 'default', body({
    metadata: { name: 'claim1' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, volumeName: 'pv1' }
  }))
  t.equal((await ask({ verb: 'get', resource: 'persistentvolumes', name: 'pv1', namespace: '' })).decision, 'allow', 'the volume bound to a claim of its pod')
  t.equal((await ask({ verb: 'get', resource: 'persistentvolumes', name: 'pv2', namespace: '' })).decision, 'noOpinion')
  t.equal((await ask({ verb: 'list', resource: 'persistentvolumes', namespace: '' })).decision, 'noOpinion')

  await pods.create(admin, 'default', body(pod('p3', 'n1', { volumes: [{ name: 'v', secret: { secretName: 's3' } }] })))
  t.equal((await ask({ verb: 'get', resource: 'secrets', name: 's3' })).decision, 'allow', 'a pod bound a moment ago counts at once')
  await pods.delete(admin, 'default', 'p1', { gracePeriodSeconds: 0 })
  await eventually(async () => (await ask({ verb: 'get', resource: 'secrets', name: 's1' })).decision === 'noOpinion')
})

t.test('a node reaches its own lease, what system:node grants, and nothing for other users', async t => {
  const { node } = await setup(t)
  const ask = async (user: UserInfo, a: Parameters<typeof resourceAttributes>[1]) => await node.authorizer.authorize(resourceAttributes(user, a))
  t.equal((await ask(n1, { verb: 'update', apiGroup: 'coordination.k8s.io', resource: 'leases', namespace: 'kube-node-lease', name: 'n1' })).decision, 'allow')
  t.equal((await ask(n1, { verb: 'get', apiGroup: 'coordination.orch.io', resource: 'leases', namespace: 'orch-node-lease', name: 'n1' })).decision, 'allow')
  t.same(await ask(n1, { verb: 'update', apiGroup: 'coordination.k8s.io', resource: 'leases', namespace: 'kube-node-lease', name: 'n2' }),
    { decision: 'noOpinion', reason: 'can only access node lease with the same name as the requesting node' })
  t.equal((await ask(n1, { verb: 'get', resource: 'leases', apiGroup: 'coordination.k8s.io', namespace: 'default', name: 'n1' })).decision, 'noOpinion')
  t.equal((await ask(n1, { verb: 'patch', resource: 'nodes', subresource: 'status', name: 'n1' })).decision, 'allow')
  t.equal((await ask(n1, { verb: 'create', resource: 'events', namespace: 'default' })).decision, 'allow')
  t.equal((await ask(n1, { verb: 'watch', resource: 'pods' })).decision, 'allow')
  t.equal((await ask(n1, { verb: 'delete', resource: 'nodes', name: 'n1' })).decision, 'noOpinion')
  t.equal((await ask(n1, { verb: 'list', apiGroup: 'apps', resource: 'deployments' })).decision, 'noOpinion')
  t.equal((await node.authorizer.authorize(nonResourceAttributes(n1, 'get', '/metrics'))).decision, 'noOpinion')
  const alice = { username: 'alice', groups: ['system:authenticated'] }
  t.same(await ask(alice, { verb: 'get', resource: 'nodes' }), { decision: 'noOpinion', reason: '' })
  t.same(await ask({ username: 'system:node:', groups: ['system:nodes'] }, { verb: 'get', resource: 'nodes' }), { decision: 'noOpinion', reason: 'unknown node' })
  t.same(await ask({ username: 'system:node:n1', groups: [] }, { verb: 'get', resource: 'nodes' }), { decision: 'noOpinion', reason: '' }, 'not in system:nodes')
})

t.test('NodeRestriction: a node writes only mirror pods, status and deletions of its pods, its own Node and lease', async t => {
  const { h } = await setup(t)
  const pods = h('', 'pods')
  const nodes = h('', 'nodes')
  await t.rejects(pods.create(asNode('n1'), 'default', body(pod('plain', 'n1'))),
    { code: 403, message: 'pods "plain" is forbidden: pod does not have "orch.io/config.mirror" annotation, node "n1" can only create mirror pods' })
  const mirror = { annotations: { 'kubernetes.io/config.mirror': 'hash' } }
  await t.rejects(pods.create(asNode('n1'), 'default', body(pod('m0', 'n2', {}, mirror))),
    { code: 403, message: 'pods "m0" is forbidden: node "n1" can only create pods with spec.nodeName set to itself' })
  await t.rejects(pods.create(asNode('n1'), 'default', body(pod('m1', 'n1', { volumes: [{ name: 'v', secret: { secretName: 's' } }] }, mirror))),
    { code: 403, message: 'pods "m1" is forbidden: node "n1" can not create pods that reference secrets' })
  await pods.create(asNode('n1'), 'default', body(pod('m2', 'n1', {}, mirror)))
  await pods.create(admin, 'default', body(pod('other', 'n2')))
  const status = async (name: string, user: string): Promise<unknown> =>
    await pods.patch(asNode(user), 'default', name, cur => ({ ...cur, status: { phase: 'Running' } }), 'status')
  await status('m2', 'n1')
  await t.rejects(status('other', 'n1'), { code: 403, message: 'pods "other" is forbidden: node "n1" can only update pod status for pods with spec.nodeName set to itself' })
  await t.rejects(pods.patch(asNode('n1'), 'default', 'm2', cur => ({ ...cur, metadata: { ...(cur.metadata as object), labels: { a: 'b' } } })),
    { code: 403, message: 'pods "m2" is forbidden: unexpected operation "UPDATE", node "n1" can only create and delete mirror pods' })
  await t.rejects(pods.delete(asNode('n1'), 'default', 'other', {}), { code: 403, message: 'pods "other" is forbidden: node "n1" can only delete pods with spec.nodeName set to itself' })
  await pods.delete(asNode('n1'), 'default', 'm2', { gracePeriodSeconds: 0 })

  await t.rejects(nodes.create(asNode('n1'), '', body({ metadata: { name: 'n2' } })), { code: 403, message: 'nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2"' })
  await t.rejects(nodes.create(asNode('n1'), '', body({ metadata: { name: 'n1', labels: { 'node-restriction.kubernetes.io/team': 'a' } } })),
    { code: 403, message: 'nodes "n1" is forbidden: node "n1" is not allowed to set the following labels: node-restriction.kubernetes.io/team' })
  await nodes.create(asNode('n1'), '', body({ metadata: { name: 'n1', labels: { 'topology.kubernetes.io/zone': 'z' } } }))
  await t.rejects(nodes.patch(asNode('n1'), '', 'n1', cur => ({ ...cur, metadata: { ...(cur.metadata as object), labels: { 'node-restriction.kubernetes.io/x': 'y' } } })),
    { code: 403, message: 'nodes "n1" is forbidden: node "n1" is not allowed to modify labels: node-restriction.kubernetes.io/x' })
  await t.rejects(nodes.patch(asNode('n1'), '', 'n1', cur => ({ ...cur, spec: { taints: [{ key: 'k', effect: 'NoSchedule' }] } })),
    { code: 403, message: 'nodes "n1" is forbidden: node "n1" is not allowed to modify taints' })
  await nodes.patch(admin, '', 'n1', cur => ({ ...cur, metadata: { ...(cur.metadata as object), labels: { 'node-restriction.kubernetes.io/x': 'y' } } }))

  const leases = h('coordination.k8s.io', 'leases')
  await leases.create(asNode('n1'), 'kube-node-lease', body({ metadata: { name: 'n1' }, spec: { holderIdentity: 'n1' } }))
  await t.rejects(leases.create(asNode('n1'), 'kube-node-lease', body({ metadata: { name: 'n2' }, spec: { holderIdentity: 'n1' } })),
    { code: 403, message: 'leases.coordination.k8s.io "n2" is forbidden: can only access node lease with the same name as the requesting node' })
})
