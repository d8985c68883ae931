// Over HTTP: a ResourceQuota of one pod refuses the second pod with 403 Forbidden and Kubernetes' message.

import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pino } from 'pino'
import { openLmdbStore } from '../apiserver/storage/lmdb/index.js'
import { createRegistry, type OrchRegistry } from '../apiserver/registry/registry.js'
import { createApiServer } from '../apiserver/server.js'
import { buildAdmission } from '../apiserver/admission/build.js'
import { parseAdmissionFlags } from '../apiserver/cli/admission-flags.js'

t.test('a quota of 1 pod refuses the second pod with 403 exceeded quota', async t => {
  const dir = mkdtempSync(join(tmpdir(), 'orch-adm-'))
  const silent = pino({ level: 'silent' })
  const store = await openLmdbStore({ path: dir })
  let registry: OrchRegistry | undefined
  const options = await parseAdmissionFlags({ 'disable-admission-plugins': 'ServiceAccount' })
  const built = buildAdmission({ registry: () => registry!, options })
  registry = createRegistry({ store, logger: silent, mutatingAdmission: built.mutating, admission: built.validating, ...built.registryOptions })
  await registry.start()
  const server = createApiServer({ registry, logger: silent })
  const { port } = await server.listen({ port: 0 })
  t.teardown(async () => {
    await server.close()
    await registry!.stop()
    await store.close()
    rmSync(dir, { recursive: true, force: true })
  })
  const post = async (path: string, obj: unknown): Promise<Response> => await fetch(`http://127.0.0.1:${port}${path}`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(obj)
  })
  const quota = await post('/api/v1/namespaces/default/resourcequotas', { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'one-pod' }, spec: { hard: { pods: '1' } } })
  t.equal(quota.status, 201)
  const pod = (name: string): unknown => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'busybox' }] } })
  t.equal((await post('/api/v1/namespaces/default/pods', pod('first'))).status, 201)
  const second = await post('/api/v1/namespaces/default/pods', pod('second'))
  t.equal(second.status, 403)
  const status = await second.json() as Record<string, any>
  t.equal(status.kind, 'Status')
  t.equal(status.reason, 'Forbidden')
  t.equal(status.message, 'pods "second" is forbidden: exceeded quota: one-pod, requested: pods=1, used: pods=1, limited: pods=1')
})
