// Drives @kubernetes/client-node 1.x against `orch up`: CoreV1Api CRUD on configmaps and a watch.

import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as k8s from '@kubernetes/client-node'
import { startOrch } from './orch-process.js'

const dir = mkdtempSync(join(tmpdir(), 'orch-client-node-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))

t.test('client-node lists, creates, reads and watches configmaps', async t => {
  const orch = await startOrch(join(dir, 'data'))
  t.teardown(() => orch.stop())
  const kc = new k8s.KubeConfig()
  kc.loadFromFile(orch.kubeconfig)
  const core = kc.makeApiClient(k8s.CoreV1Api)

  // Besides the CA bundle the root CA publisher puts in every namespace (kube-root-ca.crt), nothing yet.
  const ours = (items: Array<{ metadata?: { name?: string } }>): string[] => items.map(c => c.metadata?.name ?? '').filter(n => n !== 'kube-root-ca.crt').sort()
  const before = await core.listNamespacedConfigMap({ namespace: 'default' })
  t.same(ours(before.items), [])
  t.type(before.metadata?.resourceVersion, 'string')

  const events: Array<[string, string]> = []
  let sawCreate: () => void = () => {}
  const created = new Promise<void>(resolve => { sawCreate = resolve })
  const watch = new k8s.Watch(kc)
  const ctl = await watch.watch('/api/v1/namespaces/default/configmaps', { resourceVersion: before.metadata?.resourceVersion }, (phase, obj) => {
    if (obj.metadata.name !== 'kube-root-ca.crt') events.push([phase, obj.metadata.name])
    if (phase === 'ADDED' && obj.metadata.name === 'from-client') sawCreate()
  }, () => {})
  t.teardown(() => ctl.abort())

  const made = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'from-client' }, data: { a: '1' } } })
  t.equal(made.metadata?.name, 'from-client')
  t.ok(made.metadata?.uid)
  const read = await core.readNamespacedConfigMap({ name: 'from-client', namespace: 'default' })
  t.same(read.data, { a: '1' })
  await created
  t.same(events, [['ADDED', 'from-client']])

  await t.rejects(core.readNamespacedConfigMap({ name: 'missing', namespace: 'default' }), { code: 404 })
  const list = await core.listNamespacedConfigMap({ namespace: 'default' })
  t.same(ours(list.items), ['from-client'])
})
