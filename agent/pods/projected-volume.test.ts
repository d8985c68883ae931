import t from 'tap'
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createApiClient } from '../../apiserver/client/rest-client.js'
import { startTestApiServer } from '../../test/api-server-fixture.js'
import { downwardFiles } from './projected-volume.js'
import { prepareVolumes, VolumeError } from './volumes.js'
import type { Pod } from './pod-types.js'

const { url } = await startTestApiServer(t)
const client = createApiClient({ connection: { server: url, insecureSkipTlsVerify: false }, qps: 0, burst: 0, contentType: 'application/json', userAgent: 'test' })
t.teardown(() => client.close())
const root = mkdtempSync(join(tmpdir(), 'orch-projected-'))
t.teardown(() => rmSync(root, { recursive: true, force: true }))

const pod = (volumes: unknown[]): Pod => ({
  apiVersion: 'v1', kind: 'Pod',
  metadata: { name: 'web', namespace: 'default', uid: `uid-${Math.random()}`, labels: { b: '2', a: 'one "quoted"' }, annotations: { note: 'x' } },
  spec: { containers: [{ name: 'main', image: 'i', resources: { limits: { memory: '64Mi', cpu: '250m' } } }], volumes }
} as unknown as Pod)

t.test('downward API files: labels and annotations as sorted key="value" lines, single fields, resources with a divisor', async t => {
  const files = downwardFiles(pod([]), [
    { path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } },
    { path: 'one', fieldRef: { fieldPath: "metadata.labels['b']" } },
    { path: 'ns', fieldRef: { fieldPath: 'metadata.namespace' } },
    { path: 'mem', resourceFieldRef: { containerName: 'main', resource: 'limits.memory', divisor: '1Mi' } },
    { path: 'cpu', resourceFieldRef: { containerName: 'main', resource: 'limits.cpu', divisor: '1m' } }
  ])
  t.same(Object.fromEntries(files.map(f => [f.path, f.data.toString()])), { labels: 'a="one \\"quoted\\""\nb="2"', one: '2', ns: 'default', mem: '64', cpu: '250' })
  t.throws(() => downwardFiles(pod([]), [{ path: 'x', fieldRef: { fieldPath: 'spec.nodeName' } }]), /unsupported fieldRef fieldPath "spec.nodeName"/)
})

t.test('a projected volume gathers configMap, secret and downward API sources with modes', async t => {
  await client.create('/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'root-ca' }, data: { 'ca.crt': 'PEM' } })
  await client.create('/api/v1/namespaces/default/secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'creds' }, data: { pw: Buffer.from('hunter2').toString('base64') } })
  const p = pod([{ name: 'all', projected: { defaultMode: 0o440, sources: [
    { configMap: { name: 'root-ca', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
    { secret: { name: 'creds', items: [{ key: 'pw', path: 'secret/pw', mode: 0o400 }] } },
    { secret: { name: 'absent', optional: true } },
    { downwardAPI: { items: [{ path: 'namespace', fieldRef: { fieldPath: 'metadata.namespace' } }] } }
  ] } }])
  const prepared = await prepareVolumes(p, { rootDir: root, client })
  const dir = prepared.paths.get('all')!
  t.equal(readFileSync(join(dir, 'ca.crt'), 'utf8'), 'PEM')
  t.equal(readFileSync(join(dir, 'secret/pw'), 'utf8'), 'hunter2')
  t.equal(readFileSync(join(dir, 'namespace'), 'utf8'), 'default')
  t.equal(statSync(join(dir, 'ca.crt')).mode & 0o777, 0o440, 'defaultMode')
  t.equal(statSync(join(dir, 'secret/pw')).mode & 0o777, 0o400, 'item mode')
  t.equal(prepared.refreshAtMs, undefined, 'nothing to refresh without a token')
})

t.test('a missing source that is not optional fails the mount with its name', async t => {
  const err = await prepareVolumes(pod([{ name: 'p', projected: { sources: [{ configMap: { name: 'nope' } }] } }]), { rootDir: root, client }).catch(e => e)
  t.ok(err instanceof VolumeError)
  t.equal(err.message, 'volume "p": configmap "nope" not found')
})
