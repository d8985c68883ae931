import t from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DEFAULT_ON_PLUGINS, enabledPlugins, PLUGIN_ORDER } from './plugins.js'
import { loadAdmissionConfig } from './config.js'
import { buildAdmission } from './build.js'
import { parseAdmissionFlags } from '../cli/admission-flags.js'
import { UsageError } from '../cli/args.js'
import type { Registry } from '../registry/types.js'

t.test('the enabled set is the v1.29 defaults plus enabled minus disabled, in the fixed order', async t => {
  t.same(enabledPlugins([], []), PLUGIN_ORDER.filter(p => DEFAULT_ON_PLUGINS.includes(p)))
  const got = enabledPlugins(['AlwaysPullImages', 'NodeRestriction'], ['ResourceQuota', 'LimitRanger'])
  t.ok(got.indexOf('NodeRestriction') < got.indexOf('AlwaysPullImages') && got.indexOf('AlwaysPullImages') < got.indexOf('PodSecurity'))
  t.notOk(got.includes('ResourceQuota'))
  t.notOk(got.includes('LimitRanger'))
  t.equal(got[0], 'NamespaceLifecycle')
})

t.test('unknown and overlapping names are refused as kube-apiserver words it', async t => {
  t.throws(() => enabledPlugins(['Nope'], []), { message: 'enable-admission-plugins plugin "Nope" is unknown' })
  t.throws(() => enabledPlugins([], ['Nope']), { message: 'disable-admission-plugins plugin "Nope" is unknown' })
  t.throws(() => enabledPlugins(['AlwaysPullImages'], ['AlwaysPullImages']), { message: '[AlwaysPullImages] in enable-admission-plugins and disable-admission-plugins overlapped' })
  await t.rejects(parseAdmissionFlags({ 'enable-admission-plugins': 'Foo' }), UsageError)
})

t.test('the AdmissionConfiguration file gives configuration inline or by path, strictly decoded', async t => {
  const dir = mkdtempSync(join(tmpdir(), 'adm-config-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  writeFileSync(join(dir, 'quota.yaml'), 'apiVersion: apiserver.config.k8s.io/v1\nkind: ResourceQuotaConfiguration\nlimitedResources: []\n')
  const file = join(dir, 'admission.yaml')
  writeFileSync(file, [
    'apiVersion: apiserver.config.k8s.io/v1', 'kind: AdmissionConfiguration', 'plugins:',
    '- name: ResourceQuota', '  path: quota.yaml',
    '- name: PodSecurity', '  configuration:', '    defaults: {enforce: baseline}'
  ].join('\n'))
  const configs = await loadAdmissionConfig(file)
  t.same(configs.get('ResourceQuota'), { apiVersion: 'apiserver.config.k8s.io/v1', kind: 'ResourceQuotaConfiguration', limitedResources: [] })
  t.same(configs.get('PodSecurity'), { defaults: { enforce: 'baseline' } })
  const opts = await parseAdmissionFlags({ 'admission-control-config-file': file, 'disable-admission-plugins': 'ResourceQuota' })
  t.notOk(opts.plugins.includes('ResourceQuota'))
  t.ok(opts.configs.has('PodSecurity'))

  writeFileSync(file, 'apiVersion: apiserver.orch.io/v1alpha1\nkind: AdmissionConfiguration\nplugins:\n- name: Bogus\n')
  await t.rejects(loadAdmissionConfig(file), { message: /admission plugin "Bogus" is not registered/ })
  writeFileSync(file, 'apiVersion: apiserver.config.k8s.io/v1alpha1\nkind: AdmissionConfiguration\nplugins:\n- name: LimitRanger\n  extra: 1\n')
  await t.rejects(loadAdmissionConfig(file), { message: /strict decoding error: unknown field "plugins\[0\]\.extra"/ })
  writeFileSync(file, 'apiVersion: v1\nkind: AdmissionConfiguration\n')
  await t.rejects(loadAdmissionConfig(file), { message: /no kind "AdmissionConfiguration" is registered for version "v1"/ })
})

t.test('buildAdmission builds enabled plugins in order, hands factories their configuration, skips disabled ones', async t => {
  const seen: unknown[] = []
  const registry = (): Registry => { throw new Error('not used while building') }
  const built = buildAdmission({
    registry,
    options: { plugins: enabledPlugins(['AlwaysPullImages'], ['LimitRanger']), configs: new Map([['PodSecurity', { level: 'baseline' }]]) },
    pluginFactories: {
      PodSecurity: (_deps, config) => { seen.push(config); return { validating: { async admit () {} } } }
    }
  })
  t.same(seen, [{ level: 'baseline' }])
  t.ok(built.active.includes('PodSecurity'))
  t.ok(built.active.includes('ResourceQuota'))
  t.notOk(built.active.includes('LimitRanger'))
  t.ok(built.unimplemented.includes('ClusterTrustBundleAttest'))
  for (const p of ['DefaultStorageClass', 'PersistentVolumeClaimResize', 'DefaultIngressClass']) {
    t.ok(built.active.includes(p), `${p} is built`)
    t.notOk(built.unimplemented.includes(p))
  }
  t.equal(built.registryOptions.serviceAccountAdmission, true)
  t.ok(built.active.indexOf('AlwaysPullImages') < built.active.indexOf('PodSecurity'))
  t.throws(() => buildAdmission({ registry, options: { plugins: ['PodSecurity'], configs: new Map() }, pluginFactories: { PodSecurity: () => { throw new Error('bad level') } } }),
    { message: 'couldn\'t init admission plugin "PodSecurity": bad level' })
})
