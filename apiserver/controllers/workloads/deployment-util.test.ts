import t from 'tap'
import { equalIgnoringHash, newReplicaSet, surgeAndUnavailable, templateHash } from './deployment-util.js'

const deployment = (strategy: Record<string, unknown> = {}, replicas = 4): any => ({ // eslint-disable-line @typescript-eslint/no-explicit-any
  metadata: { name: 'web', namespace: 'default', uid: 'u1', annotations: { note: 'x', 'deployment.kubernetes.io/revision': '7' } },
  spec: { replicas, selector: { matchLabels: { app: 'web' } }, strategy, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'i:1' }] } } }
})

t.test('maxSurge rounds up and maxUnavailable down; both zero reads as one unavailable', async t => {
  t.same(surgeAndUnavailable(deployment({}, 10)), [3, 2], 'the 25% defaults')
  t.same(surgeAndUnavailable(deployment({ rollingUpdate: { maxSurge: 0, maxUnavailable: 0 } })), [0, 1])
  t.same(surgeAndUnavailable(deployment({ rollingUpdate: { maxSurge: '50%', maxUnavailable: '50%' } }, 3)), [2, 1])
  t.same(surgeAndUnavailable(deployment({ type: 'Recreate' })), [0, 0])
})

t.test('template identity ignores the hash label, key order, nulls and empty values', async t => {
  const a = { metadata: { labels: { app: 'web', 'pod-template-hash': 'abc' } }, spec: { containers: [{ name: 'c', image: 'i', resources: {} }] } }
  const b = { metadata: { creationTimestamp: null, labels: { app: 'web' } }, spec: { containers: [{ image: 'i', name: 'c' }] } }
  t.ok(equalIgnoringHash(a, b))
  t.equal(templateHash(b), templateHash({ spec: { containers: [{ name: 'c', image: 'i' }] }, metadata: { labels: { app: 'web' } } }))
  t.not(templateHash(b), templateHash(b, 1), 'a collision count changes the hash')
  t.match(templateHash(b), /^[bcdfghjklmnpqrstvwxz2456789]+$/)
  t.notOk(equalIgnoringHash(a, { ...b, spec: { containers: [{ name: 'c', image: 'j' }] } }))
})

t.test('a new ReplicaSet carries the hash, the revision and the Deployment annotations it may copy', async t => {
  const rs = newReplicaSet(deployment(), 'h1', 8, 2)
  t.equal(rs.metadata.name, 'web-h1')
  t.equal(rs.spec.selector.matchLabels['pod-template-hash'], 'h1')
  t.equal(rs.spec.template.metadata.labels['pod-template-hash'], 'h1')
  t.same(rs.metadata.annotations, { note: 'x', 'deployment.kubernetes.io/revision': '8', 'deployment.kubernetes.io/desired-replicas': '4', 'deployment.kubernetes.io/max-replicas': '5' })
  t.same(rs.metadata.ownerReferences[0], { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'u1', controller: true, blockOwnerDeletion: true })
})
