import t, { type Test } from 'tap'
import { createApiClient, type ApiClient, type JsonObject } from '../../apiserver/client/rest-client.js'
import { startTestApiServer } from '../../test/api-server-fixture.js'
import { createStatusManager } from './status-manager.js'
import { createApiSource } from './sources/api-source.js'
import { ANNOTATION_CONFIG_HASH, ANNOTATION_CONFIG_MIRROR, ANNOTATION_CONFIG_SOURCE, type Pod, type PodStatus } from './pod-types.js'

// One real API server (LMDB registry over HTTP) for the file.
const { port } = await startTestApiServer(t)

const logger = { info () {}, warn () {} }

function client (t: Test): ApiClient {
  const c = createApiClient({ connection: { server: `http://127.0.0.1:${port}`, insecureSkipTlsVerify: false }, qps: 0, burst: 0, contentType: 'application/json', userAgent: 'test' })
  t.teardown(() => c.close())
  return c
}

async function node (c: ApiClient, name: string): Promise<string> {
  const created = await c.create('/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name } })
  return String((created.metadata as JsonObject).uid)
}

function staticPod (name: string, nodeName: string, hash: string): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `${name}-${nodeName}`, namespace: 'default', uid: hash, annotations: { [ANNOTATION_CONFIG_SOURCE]: 'file', [ANNOTATION_CONFIG_HASH]: hash } },
    spec: { nodeName, containers: [{ name: 'main', image: 'img:1' }], restartPolicy: 'Always', terminationGracePeriodSeconds: 30 }
  }
}

const running: PodStatus = { phase: 'Running', conditions: [], hostIP: '127.0.0.1' }

async function mirror (c: ApiClient, pod: Pod): Promise<JsonObject | undefined> {
  try { return await c.get(`/api/v1/namespaces/default/pods/${pod.metadata.name}`) } catch { return undefined }
}

t.test('a static pod gets a mirror pod owned by the Node, carrying its hash and status', async t => {
  const c = client(t)
  const nodeUID = await node(c, 'sm-a')
  const sm = createStatusManager({ client: c, nodeName: 'sm-a', logger })
  const pod = staticPod('web', 'sm-a', 'hash-1')
  sm.set(pod, running)
  await sm.flush()
  const m = (await mirror(c, pod))!
  const meta = m.metadata as { annotations: Record<string, string>; ownerReferences: unknown[] }
  t.equal(meta.annotations[ANNOTATION_CONFIG_MIRROR], 'hash-1')
  t.same(meta.ownerReferences, [{ apiVersion: 'v1', kind: 'Node', name: 'sm-a', uid: nodeUID, controller: true }])
  t.equal((m.status as PodStatus).phase, 'Running')
})

t.test('a mirror pod being deleted is deleted at once and made again', async t => {
  const c = client(t)
  await node(c, 'sm-b')
  const sm = createStatusManager({ client: c, nodeName: 'sm-b', logger })
  const pod = staticPod('web', 'sm-b', 'hash-2')
  sm.set(pod, running)
  await sm.flush()
  const before = (await mirror(c, pod))!
  const oldUid = (before.metadata as JsonObject).uid
  // kubectl delete pod: graceful, so the API server only marks the bound pod (the kubelet finishes it).
  await c.delete(`/api/v1/namespaces/default/pods/${pod.metadata.name}`, { body: { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 30 } })
  const marked = await mirror(c, pod)
  t.type((marked?.metadata as JsonObject | undefined)?.deletionTimestamp, 'string', 'the mirror is terminating')
  sm.set(pod, { ...running, message: 'again' })
  await sm.flush()
  const after = (await mirror(c, pod))!
  t.not((after.metadata as JsonObject).uid, oldUid, 'a new mirror pod')
  t.equal((after.metadata as JsonObject).deletionTimestamp, undefined)
  t.equal((after.status as PodStatus).message, 'again')
})

t.test('a mirror of an older manifest is replaced', async t => {
  const c = client(t)
  await node(c, 'sm-c')
  const sm = createStatusManager({ client: c, nodeName: 'sm-c', logger })
  sm.set(staticPod('web', 'sm-c', 'old'), running)
  await sm.flush()
  const edited = staticPod('web', 'sm-c', 'new')
  sm.set(edited, running)
  await sm.flush()
  const m = (await mirror(c, edited))!
  t.equal((m.metadata as { annotations: Record<string, string> }).annotations[ANNOTATION_CONFIG_MIRROR], 'new')
})

t.test('no mirror pod is made while the Node does not exist', async t => {
  const c = client(t)
  const sm = createStatusManager({ client: c, nodeName: 'sm-missing', logger })
  const pod = staticPod('web', 'sm-missing', 'hash-3')
  sm.set(pod, running)
  await sm.flush()
  t.equal(await mirror(c, pod), undefined)
})

t.test('the API source reports mirror pods apart from the pods it runs', async t => {
  const c = client(t)
  await node(c, 'sm-d')
  const sm = createStatusManager({ client: c, nodeName: 'sm-d', logger })
  const pod = staticPod('web', 'sm-d', 'hash-4')
  sm.set(pod, running)
  await sm.flush()
  await c.create('/api/v1/namespaces/default/pods', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'plain' }, spec: { nodeName: 'sm-d', containers: [{ name: 'main', image: 'img:1' }] } })
  const seen: { pods: string[]; mirrors: string[] } = { pods: [], mirrors: [] }
  const src = createApiSource({ client: c, nodeName: 'sm-d', logger, sink: { set: (_s, pods) => { seen.pods = pods.map(p => p.metadata.name) }, mirrors: pods => { seen.mirrors = pods.map(p => p.metadata.name) } } })
  await src.refresh()
  t.same(seen.pods, ['plain'])
  t.same(seen.mirrors, [pod.metadata.name])
})
