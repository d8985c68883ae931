// Server-side apply and managed fields through the registry on the real LMDB store.

import t, { type Test } from 'tap'
import { isStatusError, type StatusError } from '../../errors/status-error.js'
import type { RequestContext, ResourceHandler } from '../types.js'
import { body, ctx, openFixture, type Fixture } from '../testing.js'

const as = (fieldManager: string, extra: Partial<RequestContext> = {}): RequestContext => ({ ...ctx(), fieldManager, ...extra })

function deployment (replicas: number, image = 'nginx:1', labels: Record<string, string> = { app: 'web' }): Record<string, unknown> {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'default', labels },
    spec: {
      replicas,
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image, ports: [{ containerPort: 80 }] }] } }
    }
  }
}

interface Entry { manager: string, operation: string, apiVersion: string, time: string, fieldsType: string, fieldsV1: any, subresource?: string }
const entries = (obj: Record<string, unknown>): Entry[] => ((obj.metadata as any).managedFields ?? []) as Entry[]

async function rejected (p: Promise<unknown>): Promise<StatusError> {
  try {
    await p
  } catch (err) {
    if (isStatusError(err)) return err
    throw err
  }
  throw new Error('expected a StatusError')
}

async function setup (t: Test): Promise<{ fx: Fixture, deploys: ResourceHandler }> {
  const fx = await openFixture()
  t.teardown(() => fx.close())
  return { fx, deploys: fx.registry.handler('apps', 'v1', 'deployments')! }
}

t.test('an apply creates the object with one Apply entry in Kubernetes spelling', async t => {
  const { deploys } = await setup(t)
  const res = await deploys.apply(as('alice'), 'default', 'web', deployment(2), false)
  t.equal(res.created, true)
  const [e, ...rest] = entries(res.object)
  t.same(rest, [])
  t.match(e, { manager: 'alice', operation: 'Apply', apiVersion: 'apps/v1', fieldsType: 'FieldsV1' })
  t.match(e.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)
  t.same(Object.keys(e), ['manager', 'operation', 'apiVersion', 'time', 'fieldsType', 'fieldsV1'], 'field order of ManagedFieldsEntry')
  t.same(e.fieldsV1['f:metadata'], { 'f:labels': { 'f:app': {} } }, 'system metadata is not owned')
  const containers = e.fieldsV1['f:spec']['f:template']['f:spec']['f:containers']
  t.same(containers, {
    'k:{"name":"app"}': {
      '.': {},
      'f:image': {},
      'f:name': {},
      'f:ports': { 'k:{"containerPort":80,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {} } }
    }
  }, 'keyed items with defaulted keys and "." for owned items')
  t.equal((res.object.spec as any).template.spec.containers[0].ports[0].protocol, 'TCP', 'defaults applied after merging')
})

t.test('applying the same configuration again writes nothing', async t => {
  const { fx, deploys } = await setup(t)
  const first = await deploys.apply(as('alice'), 'default', 'web', deployment(2), false)
  const revision = fx.store.currentRevision()
  const again = await deploys.apply(as('alice'), 'default', 'web', deployment(2), false)
  t.equal(again.created, false)
  t.equal(fx.store.currentRevision(), revision, 'no write')
  t.same(again.bytes, first.bytes, 'the stored bytes answered')
  const third = await deploys.apply(as('alice'), 'default', 'web', deployment(2), false)
  t.same(third.bytes, first.bytes, 'a repeat of a known no-op is answered from the store')
  t.equal(fx.store.currentRevision(), revision)
  const changed = await deploys.apply(as('alice'), 'default', 'web', deployment(3), false)
  t.equal((changed.object.spec as any).replicas, 3, 'a different configuration is merged again')
})

t.test('a different value of a field another manager owns conflicts; force takes it over', async t => {
  const { deploys } = await setup(t)
  await deploys.apply(as('alice'), 'default', 'web', deployment(2), false)
  const err = await rejected(deploys.apply(as('bob'), 'default', 'web', deployment(5), false))
  t.equal(err.code, 409)
  t.equal(err.reason, 'Conflict')
  t.equal(err.message, 'Apply failed with 1 conflict: conflict with "alice": .spec.replicas')
  t.same(err.details?.causes, [{ reason: 'FieldManagerConflict', message: 'conflict with "alice"', field: '.spec.replicas' }])
  const forced = await deploys.apply(as('bob'), 'default', 'web', deployment(5), true)
  t.equal((forced.object.spec as any).replicas, 5)
  const alice = entries(forced.object).find(e => e.manager === 'alice')!
  const bob = entries(forced.object).find(e => e.manager === 'bob')!
  t.notOk(alice.fieldsV1['f:spec']['f:replicas'], 'alice lost .spec.replicas')
  t.same(bob.fieldsV1['f:spec']['f:replicas'], {}, 'bob owns it')
  t.ok(bob.fieldsV1['f:spec']['f:template'], 'and shares what it set to equal values')
})

t.test('equal values are shared; a field dropped by its only owner is removed, a shared one stays', async t => {
  const { deploys } = await setup(t)
  await deploys.apply(as('alice'), 'default', 'web', deployment(2, 'nginx:1', { app: 'web', tier: 'front' }), false)
  await deploys.apply(as('carol'), 'default', 'web', deployment(2, 'nginx:1', { app: 'web' }), false)
  const res = await deploys.apply(as('alice'), 'default', 'web', { ...deployment(2), metadata: { name: 'web', namespace: 'default' } }, false)
  t.same((res.object.metadata as any).labels, { app: 'web' }, 'tier (alice only) removed, app (shared with carol) kept')
})

t.test('non-apply writes record Update entries, and an apply then conflicts with them', async t => {
  const { deploys } = await setup(t)
  const created = await deploys.create(as('', { userAgent: 'kubectl/v1.29.0 (linux/amd64) kubernetes/abc' }), 'default', body(deployment(1)))
  t.match(entries(created.object), [{ manager: 'kubectl', operation: 'Update', apiVersion: 'apps/v1' }], 'manager from the User-Agent')
  t.ok(entries(created.object)[0].fieldsV1['f:spec']['f:template']['f:spec']['f:containers']['k:{"name":"app"}']['f:terminationMessagePolicy'],
    'an update owns the defaults it stored')
  const scaled = await deploys.patch(as('kubectl-scale'), 'default', 'web', cur => ({ ...cur, spec: { ...(cur.spec as object), replicas: 3 } }))
  const scale = entries(scaled.object).find(e => e.manager === 'kubectl-scale')!
  t.same(scale.fieldsV1, { 'f:spec': { 'f:replicas': {} } })
  t.notOk(entries(scaled.object).find(e => e.manager === 'kubectl')!.fieldsV1['f:spec']['f:replicas'], 'ownership moved')
  const err = await rejected(deploys.apply(as('alice'), 'default', 'web', deployment(4), false))
  t.equal(err.message, 'Apply failed with 1 conflict: conflict with "kubectl-scale" using apps/v1: .spec.replicas')
})

t.test('a list of one empty entry resets managed fields; an empty list keeps them', async t => {
  const { deploys } = await setup(t)
  await deploys.apply(as('alice'), 'default', 'web', deployment(2), false)
  const kept = await deploys.patch(as('x'), 'default', 'web', cur => ({ ...cur, metadata: { ...(cur.metadata as object), managedFields: [] } }))
  t.equal(entries(kept.object).length, 1)
  const reset = await deploys.patch(as('x'), 'default', 'web', cur => ({ ...cur, metadata: { ...(cur.metadata as object), managedFields: [{}] } }))
  t.same(entries(reset.object), [])
})

t.test('at most ten Update managers: the oldest merge into ancient-changes', async t => {
  const { deploys } = await setup(t)
  await deploys.apply(as('alice'), 'default', 'web', deployment(2), false)
  let last
  for (let i = 0; i < 12; i++) {
    last = await deploys.patch(as(`m${i}`), 'default', 'web', cur => {
      const meta = cur.metadata as any
      return { ...cur, metadata: { ...meta, labels: { ...meta.labels, [`l${i}`]: 'x' } } }
    })
  }
  const updates = entries(last!.object).filter(e => e.operation === 'Update')
  t.equal(updates.length, 10)
  t.ok(updates.some(e => e.manager === 'ancient-changes'))
  t.equal(entries(last!.object)[0].operation, 'Apply', 'Apply entries first')
})

t.test('refused configurations answer 400 and change nothing', async t => {
  const { fx, deploys } = await setup(t)
  await deploys.apply(as('alice'), 'default', 'web', deployment(2), false)
  const revision = fx.store.currentRevision()
  const withManaged = deployment(2)
  ;(withManaged.metadata as any).managedFields = [{ manager: 'x', operation: 'Apply' }]
  t.match(await rejected(deploys.apply(as('alice'), 'default', 'web', withManaged, false)), { code: 400, message: 'metadata.managedFields must be nil' })
  t.match(await rejected(deploys.apply(as('alice'), 'default', 'web', { ...deployment(2), apiVersion: 'apps/v2' }, false)),
    { code: 400, message: 'Incorrect version specified in apply patch. Specified patch version: apps/v2, expected: apps/v1' })
  t.match(await rejected(deploys.apply(as('alice'), 'default', 'web', { ...deployment(2), kind: 'ReplicaSet' }, false)), { code: 400 })
  const unknown = deployment(2)
  ;(unknown.spec as any).replicaz = 1
  t.match(await rejected(deploys.apply(as('alice'), 'default', 'web', unknown, false)),
    { code: 400, message: 'failed to create typed patch object (default/web; apps/v1, Kind=Deployment): .spec.replicaz: field not declared in schema' })
  t.match(await rejected(deploys.apply(as('alice'), 'default', 'other', deployment(2), false)), { code: 400 })
  t.equal(fx.store.currentRevision(), revision)
})

t.test('dry-run applies write nothing; a stale resourceVersion is a conflict', async t => {
  const { fx, deploys } = await setup(t)
  const before = fx.store.currentRevision()
  const dry = await deploys.apply(as('alice', { dryRun: true }), 'default', 'web', deployment(2), false)
  t.equal((dry.object.spec as any).replicas, 2)
  t.equal(fx.store.currentRevision(), before, 'nothing written')
  const made = await deploys.apply(as('alice'), 'default', 'web', deployment(2), false)
  const stale = deployment(3)
  ;(stale.metadata as any).resourceVersion = String(Number((made.object.metadata as any).resourceVersion) - 1)
  t.match(await rejected(deploys.apply(as('alice'), 'default', 'web', stale, false)), { code: 409 })
})

t.test('status applies are recorded with subresource status and own only status', async t => {
  const { deploys } = await setup(t)
  await deploys.apply(as('alice'), 'default', 'web', deployment(2), false)
  const res = await deploys.apply(as('ctrl'), 'default', 'web',
    { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'default' }, spec: { replicas: 9 }, status: { replicas: 2 } }, false, 'status')
  t.equal((res.object.spec as any).replicas, 2, 'spec untouched through /status')
  t.equal((res.object.status as any).replicas, 2)
  t.match(entries(res.object).find(e => e.manager === 'ctrl'), { operation: 'Apply', subresource: 'status', fieldsV1: { 'f:status': { 'f:replicas': {} } } })
  t.notOk(entries(res.object).find(e => e.manager === 'ctrl')!.fieldsV1['f:spec'])
})

t.test('a Scale applied through /scale sets replicas with an entry for subresource scale', async t => {
  const { deploys } = await setup(t)
  await deploys.apply(as('alice'), 'default', 'web', deployment(2), false)
  const scale = { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'web', namespace: 'default' }, spec: { replicas: 4 } }
  const err = await rejected(deploys.apply(as('hpa'), 'default', 'web', scale, false, 'scale'))
  t.equal(err.message, 'Apply failed with 1 conflict: conflict with "alice": .spec.replicas')
  const res = await deploys.apply(as('hpa'), 'default', 'web', scale, true, 'scale')
  t.match(res.object, { kind: 'Scale', spec: { replicas: 4 } })
  const got = await deploys.get(as('x'), 'default', 'web', {}) as { object: Record<string, unknown> }
  t.equal((got.object.spec as any).replicas, 4)
  t.match(entries(got.object).find(e => e.manager === 'hpa'), { operation: 'Apply', subresource: 'scale', fieldsV1: { 'f:spec': { 'f:replicas': {} } } })
  t.match(await rejected(deploys.apply(as('hpa'), 'default', 'ghost', scale, false, 'scale')), { code: 404 })
})
