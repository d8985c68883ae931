import t, { type Test } from 'tap'
import { pino } from 'pino'
import { request } from 'undici'
import { createApiServer } from '../server.js'
import { openFixture } from '../registry/testing.js'

interface Reply { status: number; json: any }

const SMP = 'application/strategic-merge-patch+json'
const DEPLOYS = '/apis/apps/v1/namespaces/default/deployments'

async function start (t: Test): Promise<(method: string, path: string, body?: unknown, contentType?: string) => Promise<Reply>> {
  const fx = await openFixture()
  const server = createApiServer({ registry: fx.registry, logger: pino({ level: 'silent' }), requestTimeoutMs: 5000 })
  const { port } = await server.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(async () => { await server.close(); await fx.close() })
  return async (method, path, body, contentType = 'application/json') => {
    const text = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body)
    const r = await request(`http://127.0.0.1:${port}${path}`, {
      method: method as 'GET', body: text, headers: text === undefined ? {} : { 'content-type': contentType }
    })
    const raw = await r.body.text()
    let json: any
    try { json = JSON.parse(raw) } catch {}
    return { status: r.statusCode, json }
  }
}

const deployment = (name: string): unknown => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, finalizers: ['example.com/a', 'example.com/b'] },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: name } },
    template: {
      metadata: { labels: { app: name } },
      spec: {
        containers: [
          { name: 'web', image: 'nginx:1', env: [{ name: 'A', value: '1' }, { name: 'B', value: '2' }], ports: [{ containerPort: 80 }] },
          { name: 'sidecar', image: 'busybox' }
        ]
      }
    }
  }
})

async function withDeployment (t: Test): Promise<(body: unknown) => Promise<Reply>> {
  const call = await start(t)
  const created = await call('POST', DEPLOYS, deployment('d'))
  t.equal(created.status, 201)
  return async body => await call('PATCH', `${DEPLOYS}/d`, body, SMP)
}

t.test('containers and env merge by name: a changed image keeps the other containers and env entries', async t => {
  const patch = await withDeployment(t)
  const r = await patch({ spec: { template: { spec: { containers: [{ name: 'web', image: 'nginx:2', env: [{ name: 'C', value: '3' }] }] } } } })
  t.equal(r.status, 200)
  const containers = r.json.spec.template.spec.containers
  t.same(containers.map((c: any) => `${c.name}=${c.image}`), ['web=nginx:2', 'sidecar=busybox'])
  // Without $setElementOrder Kubernetes puts the patch's new items before the server-only ones.
  t.same(containers[0].env, [{ name: 'C', value: '3' }, { name: 'A', value: '1' }, { name: 'B', value: '2' }])
  t.same(containers[0].ports, [{ containerPort: 80, protocol: 'TCP' }])
})

t.test('$patch: delete removes one item, $setElementOrder orders the list, null removes a field', async t => {
  const patch = await withDeployment(t)
  let r = await patch({ spec: { template: { spec: { containers: [{ name: 'web', env: [{ name: 'A', $patch: 'delete' }], ports: null }] } } } })
  t.equal(r.status, 200)
  t.same(r.json.spec.template.spec.containers[0].env, [{ name: 'B', value: '2' }])
  t.notOk('ports' in r.json.spec.template.spec.containers[0])
  r = await patch({ spec: { template: { spec: { '$setElementOrder/containers': [{ name: 'sidecar' }, { name: 'web' }] } } } })
  t.equal(r.status, 200)
  t.same(r.json.spec.template.spec.containers.map((c: any) => c.name), ['sidecar', 'web'])
})

t.test('$deleteFromPrimitiveList removes finalizers; a merging scalar list adds without duplicates', async t => {
  const patch = await withDeployment(t)
  let r = await patch({ metadata: { '$deleteFromPrimitiveList/finalizers': ['example.com/a'] } })
  t.equal(r.status, 200)
  t.same(r.json.metadata.finalizers, ['example.com/b'])
  r = await patch({ metadata: { finalizers: ['example.com/b', 'example.com/c'] } })
  t.same(r.json.metadata.finalizers, ['example.com/b', 'example.com/c'])
})

t.test('$retainKeys on the deployment strategy (from the schema) clears rollingUpdate when switching to Recreate', async t => {
  const patch = await withDeployment(t)
  const r = await patch({ spec: { strategy: { $retainKeys: ['type'], type: 'Recreate' } } })
  t.equal(r.status, 200, JSON.stringify(r.json))
  t.same(r.json.spec.strategy, { type: 'Recreate' })
})

t.test('$patch: replace replaces a whole list', async t => {
  const patch = await withDeployment(t)
  const r = await patch({ spec: { template: { spec: { containers: [{ name: 'only', image: 'x' }, { $patch: 'replace' }] } } } })
  t.equal(r.status, 200)
  t.same(r.json.spec.template.spec.containers.map((c: any) => c.name), ['only'])
})

t.test('malformed directives and bodies answer as kube-apiserver does', async t => {
  const patch = await withDeployment(t)
  let r = await patch({ spec: { template: { spec: { containers: [{ image: 'no-name' }] } } } })
  t.equal(r.status, 500)
  t.equal(r.json.reason, '')
  t.equal(r.json.message, 'map: map[image:no-name] does not contain declared merge key: name')
  r = await patch({ spec: { strategy: { $retainKeys: 'type', type: 'Recreate' } } })
  t.equal(r.status, 400)
  t.equal(r.json.message, 'invalid patch format of retainKeys')
  r = await patch({ metadata: { $deleteFromPrimitiveListfinalizers: ['x'] } })
  t.equal(r.status, 400)
  t.equal(r.json.message, 'invalid patch format of primitive list')
  r = await patch({ spec: { template: { spec: { containers: [{ name: 'web' }, { $patch: 'merge' }] } } } })
  t.equal(r.status, 500)
  t.equal(r.json.message, 'merging lists cannot yet be specified in the patch')
  r = await patch([{ op: 'add' }])
  t.equal(r.status, 400)
  t.equal(r.json.message, 'json: cannot unmarshal array into Go value of type map[string]interface {}')
  r = await patch('{"spec":')
  t.equal(r.status, 400)
})

t.test('a null patch changes nothing and keeps the resourceVersion', async t => {
  const call = await start(t)
  const created = await call('POST', DEPLOYS, deployment('d'))
  const r = await call('PATCH', `${DEPLOYS}/d`, 'null', SMP)
  t.equal(r.status, 200)
  t.equal(r.json.metadata.resourceVersion, created.json.metadata.resourceVersion)
})

t.test('a strategic merge patch on /scale sets the replicas', async t => {
  const call = await start(t)
  await call('POST', DEPLOYS, deployment('d'))
  const r = await call('PATCH', `${DEPLOYS}/d/scale`, { spec: { replicas: 4 } }, SMP)
  t.equal(r.status, 200)
  t.equal(r.json.kind, 'Scale')
  t.equal((await call('GET', `${DEPLOYS}/d`)).json.spec.replicas, 4)
})

t.test('a strategic merge patch on /status merges conditions by type and leaves the spec alone', async t => {
  const call = await start(t)
  await call('POST', DEPLOYS, deployment('d'))
  const cond = (type: string, status: string): unknown => ({ type, status, reason: 'R', message: 'm', lastUpdateTime: '2024-01-01T00:00:00Z', lastTransitionTime: '2024-01-01T00:00:00Z' })
  let r = await call('PATCH', `${DEPLOYS}/d/status`, { status: { conditions: [cond('Available', 'True'), cond('Progressing', 'True')] } }, SMP)
  t.equal(r.status, 200, JSON.stringify(r.json))
  r = await call('PATCH', `${DEPLOYS}/d/status`, { status: { conditions: [{ type: 'Available', status: 'False' }] }, spec: { replicas: 9 } }, SMP)
  t.equal(r.status, 200)
  t.same(r.json.status.conditions.map((c: any) => `${c.type}=${c.status}`), ['Available=False', 'Progressing=True'])
  t.equal(r.json.spec.replicas, 1)
})
