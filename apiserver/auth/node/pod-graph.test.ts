import t from 'tap'
import { PodGraph, podReferences } from './pod-graph.js'

const pod = (name: string, nodeName: string | undefined, spec: Record<string, unknown> = {}) =>
  ({ metadata: { name, namespace: 'ns' }, spec: { nodeName, containers: [], ...spec } })

t.test('a pod references its volumes, env, envFrom, pull secrets, projected sources and service account', async t => {
  const refs = podReferences(pod('p', 'n', {
    imagePullSecrets: [{ name: 'pull' }],
    volumes: [{ name: 'eph', ephemeral: {} }, { name: 'csi', csi: { nodePublishSecretRef: { name: 'csi-secret' } } }],
    initContainers: [{ name: 'i', envFrom: [{ configMapRef: { name: 'init-cm' } }] }]
  }))
  t.same(refs, [
    { kind: 'serviceaccount', name: 'default' }, { kind: 'secret', name: 'pull' }, { kind: 'persistentvolumeclaim', name: 'p-eph' },
    { kind: 'secret', name: 'csi-secret' }, { kind: 'configmap', name: 'init-cm' }
  ])
})

t.test('edges follow binding, rebinding and removal, counted across pods', async t => {
  const g = new PodGraph()
  const withSecret = (name: string, node: string | undefined) => pod(name, node, { volumes: [{ name: 'v', secret: { secretName: 's' } }] })
  g.setPod(withSecret('a', undefined))
  t.notOk(g.has('n1', 'secret', 'ns', 's'), 'an unbound pod gives no node anything')
  g.setPod(withSecret('a', 'n1'))
  g.setPod(withSecret('b', 'n1'))
  t.ok(g.has('n1', 'secret', 'ns', 's'))
  t.notOk(g.has('n1', 'secret', 'other', 's'))
  g.deletePod('ns/a')
  t.ok(g.has('n1', 'secret', 'ns', 's'), 'still referenced by b')
  g.setPod(withSecret('b', 'n2'))
  t.notOk(g.has('n1', 'secret', 'ns', 's'))
  t.ok(g.has('n2', 'secret', 'ns', 's'))
  t.equal(g.nodeOf('ns', 'b'), 'n2')
})
