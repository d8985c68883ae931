// Generic store object rules on a real LMDB store: names, metadata, conflicts, finalizers, subresources, dry-run, validation.
import t from 'tap'
import { body, ctx, openFixture, type Fixture } from './testing.js'
import type { ResourceHandler } from './types.js'
import { isStatusError } from '../errors/status-error.js'

let fx: Fixture
let cms: ResourceHandler
let pods: ResourceHandler
let deps: ResourceHandler
t.before(async () => {
  fx = await openFixture()
  cms = fx.registry.handler('', 'v1', 'configmaps')!
  pods = fx.registry.handler('', 'v1', 'pods')!
  deps = fx.registry.handler('apps', 'v1', 'deployments')!
})
t.teardown(async () => { await fx.close() })

const cm = (name: string, extra: Record<string, unknown> = {}): Record<string, unknown> =>
  ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { a: '1' }, ...extra })
const dep = (name: string, replicas = 1): Record<string, unknown> => ({
  apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name },
  spec: { replicas, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } } }
})

async function statusOf (p: Promise<unknown>): Promise<{ code: number, reason: string, message: string, causes?: unknown[] }> {
  try { await p } catch (err) {
    if (isStatusError(err)) return { code: err.code, reason: err.reason, message: err.message, causes: err.details?.causes }
    throw err
  }
  throw new Error('expected a StatusError')
}

t.test('create sets uid, creationTimestamp, resourceVersion and generation; bytes carry the resourceVersion', async t => {
  const res = await cms.create(ctx(), 'default', body(cm('c1')))
  const meta = res.object.metadata as Record<string, any>
  t.match(meta.uid, /^[0-9a-f-]{36}$/)
  t.match(meta.creationTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)
  t.equal(meta.namespace, 'default')
  t.equal(meta.generation, undefined, 'a ConfigMap has no generation, as in Kubernetes')
  t.equal(meta.resourceVersion, String(fx.store.currentRevision()))
  const fromBytes = JSON.parse(res.bytes.toString())
  t.equal(fromBytes.metadata.resourceVersion, meta.resourceVersion)
  const got = await cms.get(ctx(), 'default', 'c1', {}) as { bytes: Buffer }
  t.same(got.bytes, res.bytes, 'get serves the stored bytes')
})

t.test('generateName creates distinct names with a 5-character suffix', async t => {
  const a = await cms.create(ctx(), 'default', body({ ...cm(''), metadata: { generateName: 'gen-' } }))
  const b = await cms.create(ctx(), 'default', body({ ...cm(''), metadata: { generateName: 'gen-' } }))
  const na = (a.object.metadata as any).name; const nb = (b.object.metadata as any).name
  t.match(na, /^gen-[a-z0-9]{5}$/)
  t.not(na, nb)
})

t.test('a second create with the same name is 409 AlreadyExists; the name is reusable after delete', async t => {
  await cms.create(ctx(), 'default', body(cm('dup')))
  const e = await statusOf(cms.create(ctx(), 'default', body(cm('dup'))))
  t.equal(e.code, 409); t.equal(e.reason, 'AlreadyExists'); t.equal(e.message, 'configmaps "dup" already exists')
  const del = await cms.delete(ctx(), 'default', 'dup', {})
  t.ok(del.deleted)
  const again = await cms.create(ctx(), 'default', body(cm('dup')))
  t.equal((again.object.metadata as any).name, 'dup')
})

t.test('type meta and namespace mismatches are 400', async t => {
  let e = await statusOf(cms.create(ctx(), 'default', body({ ...cm('x'), kind: 'Secret' })))
  t.equal(e.code, 400)
  e = await statusOf(cms.create(ctx(), 'default', body({ ...cm('x'), apiVersion: 'apps/v1' })))
  t.equal(e.code, 400)
  e = await statusOf(cms.create(ctx(), 'default', body({ ...cm('x'), metadata: { name: 'x', namespace: 'other' } })))
  t.equal(e.code, 400)
  t.equal(e.message, 'the namespace of the provided object does not match the namespace sent on the request')
})

t.test('invalid objects are 422 naming each field; a wrongly typed field of a built-in kind is a 400 decode error', async t => {
  const e = await statusOf(cms.create(ctx(), 'default', body({ ...cm('Bad_Name'), metadata: { name: 'Bad_Name', labels: { 'a b': 'x' } } })))
  t.equal(e.code, 422); t.equal(e.reason, 'Invalid')
  const fields = (e.causes as Array<{ field: string }>).map(c => c.field)
  t.ok(fields.includes('metadata.name')); t.ok(fields.includes('metadata.labels'))
  const e2 = await statusOf(cms.create(ctx(), 'default', body({ ...cm('typ'), data: { a: 5 } })))
  t.equal(e2.code, 400)
  t.equal(e2.message, 'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field data[a] of type string')
})

t.test('fieldValidation: Ignore drops, Warn warns, Strict rejects naming every unknown and duplicate field', async t => {
  const withUnknown = { ...cm('fv1'), spec: { foo: 1 }, bogus: true }
  const ig = ctx('Ignore')
  const r1 = await cms.create(ig, 'default', body(withUnknown, ['data.a']))
  t.same(ig.warnings, [])
  t.notOk('bogus' in r1.object, 'unknown field pruned')
  const warn = ctx('Warn')
  await cms.create(warn, 'default', body({ ...withUnknown, metadata: { name: 'fv2' } }, ['data.a']))
  t.same(warn.warnings, ['unknown field "spec"', 'unknown field "bogus"', 'duplicate field "data.a"'])
  const e = await statusOf(cms.create(ctx('Strict'), 'default', body({ ...withUnknown, metadata: { name: 'fv3' } }, ['data.a'])))
  t.equal(e.code, 400)
  t.equal(e.message, 'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "spec", unknown field "bogus", duplicate field "data.a"')
  const e2 = await statusOf(cms.create(ctx('Strict'), 'default', body({ ...cm('fv4'), bogus: 1, data: { a: 5 } })))
  t.equal(e2.code, 400, 'unknown plus a type error reports only the fatal type error')
  t.notMatch(e2.message, /bogus/)
})

t.test('dry-run create and delete store nothing', async t => {
  const before = fx.store.currentRevision()
  const res = await cms.create(ctx('Strict', true), 'default', body(cm('dry')))
  t.equal((res.object.metadata as any).name, 'dry')
  t.equal(fx.store.currentRevision(), before)
  t.equal((await statusOf(cms.get(ctx(), 'default', 'dry', {}))).code, 404)
  await cms.create(ctx(), 'default', body(cm('dry2')))
  const rev = fx.store.currentRevision()
  const del = await cms.delete(ctx('Strict', true), 'default', 'dry2', {})
  t.ok(del.deleted)
  t.equal(fx.store.currentRevision(), rev)
  await cms.get(ctx(), 'default', 'dry2', {})
})

t.test('update with a stale resourceVersion is 409; without one it is unconditional', async t => {
  const c = await cms.create(ctx(), 'default', body(cm('upd')))
  const rv1 = (c.object.metadata as any).resourceVersion
  const u1 = await cms.update(ctx(), 'default', 'upd', body({ ...c.object, data: { a: '2' } }))
  t.not((u1.object.metadata as any).resourceVersion, rv1)
  t.equal(u1.created, false)
  const e = await statusOf(cms.update(ctx(), 'default', 'upd', body({ ...c.object, data: { a: '3' } })))
  t.equal(e.code, 409); t.equal(e.reason, 'Conflict')
  t.equal(e.message, 'Operation cannot be fulfilled on configmaps "upd": the object has been modified; please apply your changes to the latest version and try again')
  const noRv = structuredClone(c.object) as any
  delete noRv.metadata.resourceVersion
  noRv.data = { a: '4' }
  const u2 = await cms.update(ctx(), 'default', 'upd', body(noRv))
  t.same(u2.object.data, { a: '4' })
  t.equal((u2.object.metadata as any).uid, (c.object.metadata as any).uid)
  t.equal((u2.object.metadata as any).creationTimestamp, (c.object.metadata as any).creationTimestamp)
})

t.test('update cannot change uid; a no-op update keeps the resourceVersion', async t => {
  const c = await cms.create(ctx(), 'default', body(cm('imm')))
  const e = await statusOf(cms.update(ctx(), 'default', 'imm', body({ ...c.object, metadata: { ...(c.object.metadata as object), uid: 'other' } })))
  t.equal(e.code, 422)
  const same = await cms.update(ctx(), 'default', 'imm', body(c.object))
  t.equal((same.object.metadata as any).resourceVersion, (c.object.metadata as any).resourceVersion)
})

t.test('update of a missing object is 404, except kinds that allow create on update', async t => {
  t.equal((await statusOf(cms.update(ctx(), 'default', 'nope', body(cm('nope'))))).code, 404)
  const leases = fx.registry.handler('coordination.orch.io', 'v1', 'leases')!
  const r = await leases.update(ctx(), 'default', 'l1', body({ apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name: 'l1' }, spec: { holderIdentity: 'me' } }))
  t.equal(r.created, true)
})

t.test('status subresource: main update ignores status, status update ignores spec; generation follows spec', async t => {
  const d = await deps.create(ctx(), 'default', body({ ...dep('d1'), status: { replicas: 9 } }))
  t.equal(d.object.status, undefined, 'status dropped on create')
  const withStatus = await deps.update(ctx(), 'default', 'd1', body({ ...d.object, spec: { ...(d.object.spec as object), replicas: 5 }, status: { replicas: 3 } }), 'status')
  t.equal((withStatus.object.spec as any).replicas, 1, 'spec unchanged by a status write')
  t.equal((withStatus.object.status as any).replicas, 3)
  t.equal((withStatus.object.metadata as any).generation, 1)
  const main = await deps.update(ctx(), 'default', 'd1', body({ ...withStatus.object, spec: { ...(withStatus.object.spec as object), replicas: 2 }, status: { replicas: 100 } }))
  t.equal((main.object.spec as any).replicas, 2)
  t.equal((main.object.status as any).replicas, 3, 'status unchanged by a main write')
  t.equal((main.object.metadata as any).generation, 2)
})

t.test('scale subresource reads and writes spec.replicas', async t => {
  await deps.create(ctx(), 'default', body(dep('sc1', 2)))
  const s = JSON.parse((await deps.get(ctx(), 'default', 'sc1', {}, 'scale') as Buffer).toString())
  t.equal(s.kind, 'Scale'); t.equal(s.spec.replicas, 2); t.equal(s.status.selector, 'app=sc1')
  const u = await deps.update(ctx(), 'default', 'sc1', body({ ...s, spec: { replicas: 4 } }), 'scale')
  t.equal((u.object.spec as any).replicas, 4)
  const d = (await deps.get(ctx(), 'default', 'sc1', {}) as any).object
  t.equal(d.spec.replicas, 4)
})

t.test('finalizers: delete marks, removing the last finalizer removes; no new finalizers while deleting', async t => {
  const c = await cms.create(ctx(), 'default', body({ ...cm('fin'), metadata: { name: 'fin', finalizers: ['example.com/x'] } }))
  const d = await cms.delete(ctx(), 'default', 'fin', {})
  t.equal(d.deleted, false)
  const m = d.object.metadata as any
  t.ok(m.deletionTimestamp); t.equal(m.deletionGracePeriodSeconds, 0)
  const cur = (await cms.get(ctx(), 'default', 'fin', {}) as any).object
  const e = await statusOf(cms.update(ctx(), 'default', 'fin', body({ ...cur, metadata: { ...cur.metadata, finalizers: ['example.com/x', 'new/y'] } })))
  t.equal(e.code, 422); t.match(e.message, /no new finalizers can be added/)
  const again = await cms.delete(ctx(), 'default', 'fin', {})
  t.equal(again.deleted, false, 'a second delete keeps waiting')
  await cms.update(ctx(), 'default', 'fin', body({ ...cur, metadata: { ...cur.metadata, finalizers: [] } }))
  t.equal((await statusOf(cms.get(ctx(), 'default', 'fin', {}))).code, 404)
  void c
})

t.test('delete preconditions mismatch is 409 with the Kubernetes message', async t => {
  const c = await cms.create(ctx(), 'default', body(cm('pre')))
  let e = await statusOf(cms.delete(ctx(), 'default', 'pre', { preconditions: { uid: 'x' } }))
  t.equal(e.code, 409)
  t.equal(e.message, `Operation cannot be fulfilled on configmaps "pre": Precondition failed: UID in precondition: x, UID in object meta: ${(c.object.metadata as any).uid}`)
  e = await statusOf(cms.delete(ctx(), 'default', 'pre', { preconditions: { resourceVersion: '1' } }))
  t.equal(e.code, 409); t.match(e.message, /ResourceVersion in precondition: 1/)
  t.ok((await cms.delete(ctx(), 'default', 'pre', { preconditions: { uid: (c.object.metadata as any).uid } })).deleted)
})

t.test('propagationPolicy Orphan and Foreground add their finalizers', async t => {
  await cms.create(ctx(), 'default', body(cm('orph')))
  const o = await cms.delete(ctx(), 'default', 'orph', { propagationPolicy: 'Orphan' })
  t.equal(o.deleted, false); t.same((o.object.metadata as any).finalizers, ['orphan'])
  await cms.create(ctx(), 'default', body(cm('fg')))
  const f = await cms.delete(ctx(), 'default', 'fg', { propagationPolicy: 'Foreground' })
  t.same((f.object.metadata as any).finalizers, ['foregroundDeletion'])
  await cms.create(ctx(), 'default', body(cm('bg')))
  t.ok((await cms.delete(ctx(), 'default', 'bg', { propagationPolicy: 'Background' })).deleted)
})

t.test('pods: defaults, graceful deletion on a node, immediate deletion when unscheduled', async t => {
  const spec = { containers: [{ name: 'a', image: 'nginx' }, { name: 'b', image: 'nginx:1.25' }] }
  const p = await pods.create(ctx(), 'default', body({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p1' }, spec }))
  const ps = p.object.spec as any
  t.equal(ps.containers[0].imagePullPolicy, 'Always'); t.equal(ps.containers[1].imagePullPolicy, 'IfNotPresent')
  t.equal((p.object.status as any).phase, 'Pending')
  t.ok((await pods.delete(ctx(), 'default', 'p1', {})).deleted, 'no node: removed at once')
  await pods.create(ctx(), 'default', body({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p2' }, spec: { ...spec, nodeName: 'n1' } }))
  const g = await pods.delete(ctx(), 'default', 'p2', {})
  t.equal(g.deleted, false); t.equal((g.object.metadata as any).deletionGracePeriodSeconds, 30)
  t.ok((await pods.delete(ctx(), 'default', 'p2', { gracePeriodSeconds: 0 })).deleted, 'the node agent confirms with grace 0')
})

t.test('get with a too new resourceVersion answers 504 after a short wait', async t => {
  await cms.create(ctx(), 'default', body(cm('future')))
  const e = await statusOf(cms.get(ctx(), 'default', 'future', { resourceVersion: String(fx.store.currentRevision() + 100) }))
  t.equal(e.code, 504); t.match(e.message, /Too large resource version/)
})

t.test('deleteCollection deletes the selected objects and returns them', async t => {
  for (const n of ['dc1', 'dc2', 'dc3']) await cms.create(ctx(), 'default', body({ ...cm(n), metadata: { name: n, labels: { batch: n === 'dc3' ? 'no' : 'yes' } } }))
  const res = await cms.deleteCollection(ctx(), 'default', { labelSelector: 'batch=yes' }, {})
  t.same(res.items.map(b => JSON.parse(b.toString()).metadata.name), ['dc1', 'dc2'])
  const left = await cms.list(ctx(), 'default', { labelSelector: 'batch' })
  t.same(left.items.map(b => JSON.parse(b.toString()).metadata.name), ['dc3'])
})

t.test('dry-run update returns the would-be object and stores nothing', async t => {
  const c = await cms.create(ctx(), 'default', body(cm('dryu')))
  const rev = fx.store.currentRevision()
  const u = await cms.update(ctx('Strict', true), 'default', 'dryu', body({ ...c.object, data: { a: 'changed' } }))
  t.same(u.object.data, { a: 'changed' })
  t.equal(fx.store.currentRevision(), rev)
  t.same((await cms.get(ctx(), 'default', 'dryu', {}) as any).object.data, { a: '1' })
})

t.test('an update that removes the last finalizer of a pod in graceful deletion keeps it until grace 0', async t => {
  const spec = { nodeName: 'n1', containers: [{ name: 'a', image: 'x:1' }] }
  await pods.create(ctx(), 'default', body({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'gp', finalizers: ['x/y'] }, spec }))
  const d = await pods.delete(ctx(), 'default', 'gp', { gracePeriodSeconds: 10 })
  t.equal(d.deleted, false)
  const cur = d.object as any
  await pods.update(ctx(), 'default', 'gp', body({ ...cur, metadata: { ...cur.metadata, finalizers: [] } }))
  await pods.get(ctx(), 'default', 'gp', {})
  t.ok((await pods.delete(ctx(), 'default', 'gp', { gracePeriodSeconds: 0 })).deleted)
})
