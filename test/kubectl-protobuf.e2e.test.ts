// kubectl 1.33 sends `kubectl create <kind>` bodies as Kubernetes protobuf: they work against `orch up`, and a
// custom resource sent as protobuf answers 415 listing what it takes.
import t from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { tlsRequester } from './tls-client.js'
import { runKubectl, startOrch } from './orch-process.js'
import protobuf from 'protobufjs/minimal.js'
import { decodeEnvelope } from '../apiserver/endpoints/protobuf/decode.js'
import { Messages } from '../apiserver/endpoints/protobuf/messages.js'

const PB = 'application/vnd.kubernetes.protobuf'
const messages = new Messages()

const tls = tlsRequester()
const request = tls.request
t.teardown(async () => await tls.close())

const KUBECTL_133 = '/usr/lib/google-cloud-sdk/bin/kubectl.1.33'
const dir = mkdtempSync(join(tmpdir(), 'orch-kubectl-protobuf-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))

t.test('kubectl 1.33 imperative creates (protobuf bodies) work', async t => {
  const orch = await startOrch(join(dir, 'data'))
  tls.use(orch.kubeconfig)
  t.teardown(() => orch.stop())
  const k = async (...args: string[]): Promise<{ code: number, stdout: string, stderr: string }> =>
    await runKubectl(orch.kubeconfig, join(dir, 'cache'), args, { binary: KUBECTL_133 })
  const get = async (what: string, path: string): Promise<string> => (await k('get', ...what.split(' '), '-o', `jsonpath=${path}`)).stdout

  for (const args of [
    ['create', 'namespace', 'demo'],
    ['create', 'configmap', 'settings', '--from-literal=mode=fast', '-n', 'demo'],
    ['create', 'secret', 'generic', 'login', '--from-literal=password=hunter2', '-n', 'demo'],
    ['create', 'deployment', 'web', '--image=nginx:1', '--replicas=3', '-n', 'demo'],
    ['create', 'job', 'once', '--image=busybox', '-n', 'demo', '--', 'echo', 'hi'],
    ['create', 'serviceaccount', 'robot', '-n', 'demo'],
    ['create', 'service', 'clusterip', 'front', '--tcp=80:http', '-n', 'demo'],
    ['create', 'role', 'reader', '--verb=get,list', '--resource=pods', '-n', 'demo'],
    ['create', 'rolebinding', 'reader', '--role=reader', '--serviceaccount=demo:robot', '-n', 'demo'],
    ['create', 'cronjob', 'nightly', '--image=busybox', '--schedule=0 3 * * *', '-n', 'demo', '--', 'date'],
    ['create', 'poddisruptionbudget', 'web', '--selector=app=web', '--min-available=50%', '-n', 'demo'],
    ['create', 'priorityclass', 'high', '--value=1000', '--description=important'],
    ['create', 'quota', 'small', '--hard=cpu=2,pods=10', '-n', 'demo']
  ]) {
    const r = await k(...args)
    t.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`)
    t.match(r.stdout, / created/)
  }
  t.equal(await get('configmap settings -n demo', '{.data.mode}'), 'fast')
  t.equal(Buffer.from(await get('secret login -n demo', '{.data.password}'), 'base64').toString(), 'hunter2', 'bytes arrive as bytes')
  t.equal(await get('deployment web -n demo', '{.spec.replicas} {.spec.template.spec.containers[0].image}'), '3 nginx:1')
  t.match(await get('deployment web -n demo', '{.metadata.creationTimestamp}'), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/, 'the server set the creation time')
  t.equal(await get('job once -n demo', '{.spec.template.spec.containers[0].command}'), '["echo","hi"]')
  t.equal(await get('service front -n demo', '{.spec.ports[0].port} {.spec.ports[0].targetPort}'), '80 http', 'an int-or-string arrives as its string')
  t.equal(await get('pdb web -n demo', '{.spec.minAvailable}'), '50%')
  t.equal(await get('quota small -n demo', '{.spec.hard.cpu} {.spec.hard.pods}'), '2 10', 'quantities')
  t.equal(await get('deployment web -n demo', '{.spec.template.spec.containers[0].name}'), 'nginx')
  t.equal(await get('role reader -n demo', '{.rules[0].verbs}'), '["get","list"]')
  const r = await k('delete', 'configmap', 'settings', '-n', 'demo')
  t.equal(r.code, 0, r.stderr)
  // Subresources and create-only kinds answer in protobuf too: a TokenRequest, a SelfSubjectAccessReview.
  const token = await k('create', 'token', 'robot', '-n', 'demo', '-v=8')
  t.equal(token.code, 0, token.stderr)
  t.match(token.stdout, /^[\w-]+\.[\w-]+\.[\w-]+\s*$/, 'a JWT')
  t.match(token.stderr, /"Response" status="201 Created"[^>]*Content-Type: application\/vnd\.kubernetes\.protobuf/i)
  const canI = await k('auth', 'can-i', 'create', 'pods', '-n', 'demo')
  t.equal(canI.stdout.trim(), 'yes', canI.stderr)
  const again = await k('create', 'namespace', 'demo')
  t.not(again.code, 0)
  t.match(again.stderr, /namespaces "demo" already exists/, 'kubectl reads the protobuf Status of an error')
  const verbose = await k('create', 'configmap', 'traced', '-n', 'demo', '--from-literal=a=b', '-v=8')
  t.equal(verbose.code, 0, verbose.stderr)
  t.match(verbose.stderr, /"Request" verb="POST"[^>]*Content-Type: application\/vnd\.kubernetes\.protobuf/i, 'kubectl sent protobuf')
  t.match(verbose.stderr, /"Response" status="201 Created"[^>]*Content-Type: application\/vnd\.kubernetes\.protobuf/i, 'and read a protobuf answer')

  const bad = await request(`${orch.server}/api/v1/namespaces/demo/configmaps`, {
    method: 'POST', body: Buffer.from('not protobuf'), headers: { 'content-type': 'application/vnd.kubernetes.protobuf' }
  })
  t.equal(bad.statusCode, 400)
  t.match(await bad.body.json(), { kind: 'Status', reason: 'BadRequest', message: /expected prefix \[107 56 115 0\]/ })

  // A protobuf list and a protobuf watch from the real store, read by a raw decoder.
  const list = await request(`${orch.server}/apis/apps/v1/namespaces/demo/deployments`, { headers: { accept: `${PB}, application/json` } })
  t.equal(list.headers['content-type'], PB)
  t.match(decodeEnvelope(Buffer.from(await list.body.arrayBuffer()), messages), { kind: 'DeploymentList', items: [{ kind: 'Deployment', metadata: { name: 'web' }, spec: { replicas: 3 } }] })
  const ac = new AbortController()
  const watch = await request(`${orch.server}/api/v1/namespaces/demo/configmaps?watch=1&resourceVersion=0`, { headers: { accept: PB }, signal: ac.signal })
  t.equal(watch.headers['content-type'], `${PB};stream=watch`)
  const frames = readWatchFrames(watch.body, e => (e.object.metadata as { name?: string } | undefined)?.name === 'watched')
  t.equal((await k('create', 'configmap', 'watched', '-n', 'demo', '--from-literal=x=y')).code, 0)
  const events = await frames
  ac.abort()
  const seen = events.map(e => [e.type, e.object.kind, (e.object.metadata as { name: string }).name])
  t.match(seen, [], 'events arrived')
  t.ok(seen.some(e => e[2] === 'traced' && e[0] === 'ADDED'), 'the existing object arrives as ADDED')
  t.same(seen[seen.length - 1], ['ADDED', 'ConfigMap', 'watched'], 'the new object arrives after them')

  // Custom resources have no protobuf messages: 406 for protobuf alone, JSON with a fallback, 415 for a body.
  const crd = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}
`
  writeFileSync(join(dir, 'crd.yaml'), crd)
  t.equal((await k('apply', '-f', join(dir, 'crd.yaml'))).code, 0)
  t.equal((await k('wait', '--for', 'condition=established', 'crd/widgets.example.com', '--timeout=20s')).code, 0)
  const widgets = `${orch.server}/apis/example.com/v1/namespaces/demo/widgets`
  const only = await request(widgets, { headers: { accept: PB } })
  t.equal(only.statusCode, 406)
  t.match(await only.body.json(), { kind: 'Status', reason: 'NotAcceptable' })
  const fallback = await request(widgets, { headers: { accept: `${PB}, application/json` } })
  t.equal(fallback.statusCode, 200)
  t.equal(fallback.headers['content-type'], 'application/json')
  await fallback.body.dump()
  const body = await request(widgets, { method: 'POST', body: Buffer.from([0x6b, 0x38, 0x73, 0x00]), headers: { 'content-type': PB } })
  t.equal(body.statusCode, 415)
  t.match(await body.body.json(), { kind: 'Status', reason: 'UnsupportedMediaType' })
})

/** Frames of a protobuf watch up to the one `last` accepts: a 4-byte big-endian length, a WatchEvent {type 1, object 2: RawExtension {raw 1: envelope}}. */
async function readWatchFrames (body: AsyncIterable<Buffer>, last: (e: { type: string, object: Record<string, unknown> }) => boolean): Promise<Array<{ type: string, object: Record<string, unknown> }>> {
  const out: Array<{ type: string, object: Record<string, unknown> }> = []
  let buf = Buffer.alloc(0)
  for await (const chunk of body) {
    buf = Buffer.concat([buf, chunk])
    while (buf.length >= 4 && buf.length >= 4 + buf.readUInt32BE(0)) {
      const r = protobuf.Reader.create(buf.subarray(4, 4 + buf.readUInt32BE(0)))
      buf = buf.subarray(4 + buf.readUInt32BE(0))
      const event = { type: '', object: {} as Record<string, unknown> }
      while (r.pos < r.len) {
        const tag = r.uint32()
        if (tag === 10) event.type = r.string()
        else if (tag === 18) { const ext = protobuf.Reader.create(r.bytes()); if (ext.uint32() === 10) event.object = decodeEnvelope(ext.bytes(), messages) } else r.skipType(tag & 7)
      }
      out.push(event)
      if (last(event)) return out
    }
  }
  return out
}
