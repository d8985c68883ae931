// @kubernetes/client-node 1.x patches against `orch up`: KubernetesObjectApi.patch (strategic merge by default)
// and the typed API with an explicit strategic-merge Content-Type; server-side apply with conflicts and force.

import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as k8s from '@kubernetes/client-node'
import { startOrch } from './orch-process.js'

const dir = mkdtempSync(join(tmpdir(), 'orch-client-node-patch-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))

const deployment = (): k8s.V1Deployment => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'default' },
  spec: {
    replicas: 0,
    selector: { matchLabels: { app: 'web' } },
    template: {
      metadata: { labels: { app: 'web' } },
      spec: {
        containers: [
          { name: 'web', image: 'busybox:1', env: [{ name: 'A', value: '1' }] },
          { name: 'log', image: 'busybox:1' }
        ]
      }
    }
  }
})

t.test('client-node patches a deployment with strategic merge patch', async t => {
  const orch = await startOrch(join(dir, 'data'))
  t.teardown(() => orch.stop())
  const kc = new k8s.KubeConfig()
  kc.loadFromFile(orch.kubeconfig)
  const objects = k8s.KubernetesObjectApi.makeApiClient(kc)
  const apps = kc.makeApiClient(k8s.AppsV1Api)
  await apps.createNamespacedDeployment({ namespace: 'default', body: deployment() })

  await t.test('KubernetesObjectApi.patch defaults to strategic merge: containers merge by name', async t => {
    const patched = await objects.patch({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: 'default' },
      spec: { template: { spec: { containers: [{ name: 'web', image: 'busybox:2' }] } } }
    } as k8s.KubernetesObject) as k8s.V1Deployment
    const containers = patched.spec?.template.spec?.containers ?? []
    t.same(containers.map(c => `${c.name}=${c.image}`), ['web=busybox:2', 'log=busybox:1'])
    t.same(containers[0].env, [{ name: 'A', value: '1' }])
  })

  await t.test('AppsV1Api with the strategic-merge Content-Type deletes a container by merge key', async t => {
    const patched = await apps.patchNamespacedDeployment({
      name: 'web',
      namespace: 'default',
      body: { spec: { template: { spec: { containers: [{ name: 'log', $patch: 'delete' }] } } } }
    }, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.StrategicMergePatch))
    t.same(patched.spec?.template.spec?.containers.map(c => c.name), ['web'])
    const read = await apps.readNamespacedDeployment({ name: 'web', namespace: 'default' })
    t.same(read.spec?.template.spec?.containers.map(c => c.name), ['web'])
  })

  await t.test('server-side apply: create, a conflict with another manager (409 with causes), then force', async t => {
    const cm = (value: string): k8s.KubernetesObject & { data: Record<string, string> } =>
      ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: 'default' }, data: { mode: value } })
    const first = await objects.patch(cm('a'), undefined, undefined, 'deployer', false, k8s.PatchStrategy.ServerSideApply)
    t.match(first.metadata?.managedFields, [{ manager: 'deployer', operation: 'Apply', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { 'f:mode': {} } } }])
    try {
      await objects.patch(cm('b'), undefined, undefined, 'tuner', false, k8s.PatchStrategy.ServerSideApply)
      t.fail('a conflicting apply should fail')
    } catch (err) {
      const e = err as { code?: number, body?: string }
      t.equal(e.code, 409)
      const status = JSON.parse(e.body ?? '{}')
      t.equal(status.message, 'Apply failed with 1 conflict: conflict with "deployer": .data.mode')
      t.same(status.details.causes, [{ reason: 'FieldManagerConflict', message: 'conflict with "deployer"', field: '.data.mode' }])
    }
    const forced = await objects.patch(cm('b'), undefined, undefined, 'tuner', true, k8s.PatchStrategy.ServerSideApply) as typeof first & { data: Record<string, string> }
    t.equal(forced.data.mode, 'b')
    t.same(forced.metadata?.managedFields?.map(e => e.manager), ['tuner'], 'deployer lost its only field')
  })
})
