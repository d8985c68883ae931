import t from 'tap'
import { body, ctx } from '../../registry/testing.js'
import { admissionFixture } from '../testing.js'
import type { Fixture } from '../../registry/testing.js'

/** A clock the test moves, so creation timestamps (whole seconds) differ. */
const clock = (): { now: () => number, tick: () => void } => {
  let t = Date.parse('2026-01-01T00:00:00Z')
  return { now: () => t, tick: () => { t += 5000 } }
}

const storageClass = (name: string, annotations: Record<string, string> = {}, extra: Record<string, unknown> = {}): Record<string, unknown> =>
  ({ apiVersion: 'storage.orch.io/v1', kind: 'StorageClass', metadata: { name, annotations }, provisioner: 'orch.io/hostpath', ...extra })

const claim = (name: string, spec: Record<string, unknown> = {}, annotations: Record<string, string> = {}): Record<string, unknown> => ({
  apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name, annotations },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, ...spec }
})

async function makeClass (fx: Fixture, obj: Record<string, unknown>): Promise<void> {
  await fx.registry.handler('storage.orch.io', 'v1', 'storageclasses')!.create(ctx(), '', body(obj))
}

t.test('DefaultStorageClass gives a claim naming no class the default class, and leaves named or "" classes alone', async t => {
  const fx = await admissionFixture(['DefaultStorageClass'])
  t.teardown(() => fx.close())
  const pvcs = fx.registry.handler('', 'v1', 'persistentvolumeclaims')!
  const before = await pvcs.create(ctx(), 'default', body(claim('none-yet')))
  t.equal((before.object as any).spec.storageClassName, undefined, 'no default class: nothing set')
  await makeClass(fx, storageClass('plain'))
  await makeClass(fx, storageClass('fast', { 'storageclass.kubernetes.io/is-default-class': 'true' }))
  const made = await pvcs.create(ctx(), 'default', body(claim('a')))
  t.equal((made.object as any).spec.storageClassName, 'fast')
  const named = await pvcs.create(ctx(), 'default', body(claim('b', { storageClassName: 'plain' })))
  t.equal((named.object as any).spec.storageClassName, 'plain')
  const empty = await pvcs.create(ctx(), 'default', body(claim('c', { storageClassName: '' })))
  t.equal((empty.object as any).spec.storageClassName, '', 'an empty name asks for no class')
  const beta = await pvcs.create(ctx(), 'default', body(claim('d', {}, { 'volume.beta.kubernetes.io/storage-class': 'plain' })))
  t.equal((beta.object as any).spec.storageClassName, undefined, 'the beta annotation names a class')
  const dry = await pvcs.create(ctx('Strict', true), 'default', body(claim('e')))
  t.equal((dry.object as any).spec.storageClassName, 'fast', 'a dry-run is defaulted too')
})

t.test('DefaultStorageClass picks the newest of several defaults, then the first by name; orch spelling counts', async t => {
  const c = clock()
  const fx = await admissionFixture(['DefaultStorageClass'], {}, { clock: c })
  t.teardown(() => fx.close())
  const pvcs = fx.registry.handler('', 'v1', 'persistentvolumeclaims')!
  await makeClass(fx, storageClass('old', { 'storageclass.kubernetes.io/is-default-class': 'true' }))
  c.tick()
  await makeClass(fx, storageClass('zeta', { 'storageclass.orch.io/is-default-class': 'true' }))
  await makeClass(fx, storageClass('beta', { 'storageclass.beta.kubernetes.io/is-default-class': 'true' }))
  await makeClass(fx, storageClass('not', { 'storageclass.kubernetes.io/is-default-class': 'false' }))
  const made = await pvcs.create(ctx(), 'default', body(claim('a')))
  t.equal((made.object as any).spec.storageClassName, 'beta', 'same second: first by name')
  c.tick()
  await makeClass(fx, storageClass('newest', { 'storageclass.orch.io/is-default-class': 'true' }))
  const next = await pvcs.create(ctx(), 'default', body(claim('b')))
  t.equal((next.object as any).spec.storageClassName, 'newest')
})

t.test('PersistentVolumeClaimResize lets a bound claim grow only when its class allows expansion', async t => {
  const fx = await admissionFixture(['PersistentVolumeClaimResize'])
  t.teardown(() => fx.close())
  await makeClass(fx, storageClass('grows', {}, { allowVolumeExpansion: true }))
  await makeClass(fx, storageClass('fixed', {}, { allowVolumeExpansion: false }))
  await makeClass(fx, storageClass('unsaid'))
  const pvcs = fx.registry.handler('', 'v1', 'persistentvolumeclaims')!
  const bound = async (name: string, spec: Record<string, unknown>): Promise<Record<string, any>> => {
    const made = await pvcs.create(ctx(), 'default', body(claim(name, spec)))
    const obj = made.object as Record<string, any>
    obj.status = { phase: 'Bound', capacity: { storage: '1Gi' } }
    return (await pvcs.update(ctx(), 'default', name, body(obj), 'status')).object as Record<string, any>
  }
  const grow = async (obj: Record<string, any>, size: string): Promise<unknown> => {
    const next = structuredClone(obj)
    next.spec.resources.requests.storage = size
    return await pvcs.update(ctx(), 'default', String(obj.metadata.name), body(next)).catch(e => e)
  }
  const ok = await grow(await bound('a', { storageClassName: 'grows' }), '2Gi') as any
  t.equal(ok.object.spec.resources.requests.storage, '2Gi')
  const message = 'only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize'
  for (const [name, spec] of [['b', { storageClassName: 'fixed' }], ['c', { storageClassName: 'unsaid' }], ['d', { storageClassName: 'gone' }], ['e', { storageClassName: '' }]] as const) {
    const err = await grow(await bound(name, spec), '2Gi') as any
    t.equal(err.code, 403, `class ${spec.storageClassName}`)
    t.equal(err.reason, 'Forbidden')
    t.equal(err.message, `persistentvolumeclaims "${name}" is forbidden: ${message}`)
  }
  const pending = (await pvcs.create(ctx(), 'default', body(claim('g', { storageClassName: 'grows' })))).object as Record<string, any>
  const unbound = await grow(pending, '2Gi') as any
  t.equal(unbound.code, 403)
  t.equal(unbound.message, 'persistentvolumeclaims "g" is forbidden: Only bound persistent volume claims can be expanded')
  const same = await grow(await bound('f', { storageClassName: 'fixed' }), '1024Mi') as any
  t.equal(same.object?.spec.resources.requests.storage, '1024Mi', 'the same size is no resize')
})
