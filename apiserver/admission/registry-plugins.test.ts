import t from 'tap'
import { body, ctx, openFixture } from '../registry/testing.js'
import { buildAdmission } from './build.js'
import { enabledPlugins } from './plugins.js'
import type { Registry } from '../registry/types.js'
import { pod } from './testing.js'
import { createCsr } from '../pki/csr.js'

const registryOptions = (disable: string[]): { disabledAdmission: string[] } => {
  const built = buildAdmission({ registry: (): Registry => { throw new Error('unused') }, options: { plugins: enabledPlugins([], disable), configs: new Map() } })
  return { disabledAdmission: built.registryOptions.disabledAdmission }
}

t.test('by default the built-in steps run: priority 0 and the 300 s tolerations; a terminating namespace refuses content', async t => {
  const fx = await openFixture(registryOptions([]))
  t.teardown(() => fx.close())
  const made = await fx.registry.handler('', 'v1', 'pods')!.create(ctx(), 'default', body(pod('a')))
  const spec = (made.object as any).spec
  t.equal(spec.priority, 0)
  t.equal(spec.tolerations.length, 2)
  const missing = await fx.registry.handler('', 'v1', 'configmaps')!.create(ctx(), 'nowhere', body({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } })).catch(e => e)
  t.equal(missing.code, 404)
  await fx.registry.handler('scheduling.orch.io', 'v1', 'priorityclasses')!.create(ctx(), '', body({ apiVersion: 'scheduling.orch.io/v1', kind: 'PriorityClass', metadata: { name: 'high' }, value: 1000 }))
  const high = await fx.registry.handler('', 'v1', 'pods')!.create(ctx(), 'default', body(pod('b', {}, { priorityClassName: 'high' })))
  t.equal((high.object as any).spec.priority, 1000)
  const unknown = await fx.registry.handler('', 'v1', 'pods')!.create(ctx(), 'default', body(pod('c', {}, { priorityClassName: 'nope' }))).catch(e => e)
  t.equal(unknown.message, 'pods "c" is forbidden: no PriorityClass with name nope was found')
})

t.test('disabling Priority, DefaultTolerationSeconds and NamespaceLifecycle turns each off', async t => {
  const fx = await openFixture(registryOptions(['Priority', 'DefaultTolerationSeconds', 'NamespaceLifecycle']))
  t.teardown(() => fx.close())
  const made = await fx.registry.handler('', 'v1', 'pods')!.create(ctx(), 'default', body(pod('a', {}, { priorityClassName: 'nonexistent' })))
  const spec = (made.object as any).spec
  t.equal(spec.priority, undefined, 'no priority computed, and an unknown class is not refused')
  t.equal(spec.tolerations, undefined)
  const cm = await fx.registry.handler('', 'v1', 'configmaps')!.create(ctx(), 'nowhere', body({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } }))
  t.equal((cm.object as any).metadata.namespace, 'nowhere', 'without NamespaceLifecycle a missing namespace does not refuse')
})

t.test('NodeRestriction and ServiceAccount follow the enabled set', async t => {
  const off = buildAdmission({ registry: (): Registry => { throw new Error('unused') }, options: { plugins: enabledPlugins([], ['ServiceAccount']), configs: new Map() } })
  t.equal(off.registryOptions.serviceAccountAdmission, false)
  t.equal(off.nodeRestriction, false, 'NodeRestriction is off by default in v1.29')
  const on = buildAdmission({ registry: (): Registry => { throw new Error('unused') }, options: { plugins: enabledPlugins(['NodeRestriction'], []), configs: new Map() } })
  t.equal(on.registryOptions.serviceAccountAdmission, true)
  t.equal(on.nodeRestriction, true)
  t.same(on.registryOptions.disabledAdmission, [])
})

t.test('disabling CertificateSubjectRestriction lets a system:masters request through the API server client signer', async t => {
  const { csrPem } = await createCsr({ commonName: 'eve', organizations: ['system:masters'] })
  const csr = {
    apiVersion: 'certificates.orch.io/v1', kind: 'CertificateSigningRequest', metadata: { name: 'eve' },
    spec: { request: Buffer.from(csrPem).toString('base64'), signerName: 'orch.io/orch-apiserver-client', usages: ['client auth'] }
  }
  const on = await openFixture(registryOptions([]))
  t.teardown(() => on.close())
  await t.rejects(on.registry.handler('certificates.orch.io', 'v1', 'certificatesigningrequests')!.create(ctx(), '', body(csr)), { code: 403 })
  const off = await openFixture(registryOptions(['CertificateSubjectRestriction']))
  t.teardown(() => off.close())
  await t.resolves(off.registry.handler('certificates.orch.io', 'v1', 'certificatesigningrequests')!.create(ctx(), '', body(csr)))
})
