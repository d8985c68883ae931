import t from 'tap'
import { body, ctx, openFixture } from '../testing.js'
import { admitServiceAccount, TOKEN_MOUNT_PATH } from './service-account-admission.js'

const pod = (name: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'busybox' }], initContainers: [{ name: 'i', image: 'busybox' }], ...extra }
})

t.test('a new pod gets its account\'s token volume in every container; without the account it is refused', async t => {
  const fx = await openFixture({ serviceAccountAdmission: true })
  t.teardown(() => fx.close())
  const pods = fx.registry.handler('', 'v1', 'pods')!
  const accounts = fx.registry.handler('', 'v1', 'serviceaccounts')!
  const refused = await pods.create(ctx(), 'default', body(pod('early', { serviceAccountName: 'builder' }))).catch(e => e)
  t.equal(refused.code, 403)
  t.equal(refused.message, 'pods "early" is forbidden: error looking up service account default/builder: serviceaccount "builder" not found')

  await accounts.create(ctx(), 'default', body({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'builder' } }))
  const created = (await pods.create(ctx(), 'default', body(pod('web', { serviceAccountName: 'builder' })))).object as any // eslint-disable-line @typescript-eslint/no-explicit-any
  const volume = created.spec.volumes.find((v: { name: string }) => v.name.startsWith('kube-api-access-'))
  t.match(volume.name, /^kube-api-access-[a-z0-9]{5}$/)
  t.same(volume.projected.sources.map((s: Record<string, unknown>) => Object.keys(s)[0]), ['serviceAccountToken', 'configMap', 'downwardAPI'])
  t.equal(volume.projected.sources[0].serviceAccountToken.expirationSeconds, 3607)
  for (const c of [...created.spec.containers, ...created.spec.initContainers]) {
    t.same(c.volumeMounts, [{ name: volume.name, readOnly: true, mountPath: TOKEN_MOUNT_PATH }], `${c.name} mounts the token`)
  }
})

t.test('automountServiceAccountToken: false on the pod or the account mounts nothing; the pod wins', async t => {
  const accounts = new Map<string, Record<string, unknown>>([['quiet', { automountServiceAccountToken: false }], ['default', {}]])
  const lookup = async (_ns: string, name: string): Promise<Record<string, unknown> | undefined> => accounts.get(name)
  const off = pod('a', { automountServiceAccountToken: false })
  await admitServiceAccount(off, 'default', { lookup })
  t.notOk((off.spec as { volumes?: unknown }).volumes, 'the pod turned it off')
  const quiet = pod('b', { serviceAccountName: 'quiet' })
  await admitServiceAccount(quiet, 'default', { lookup })
  t.notOk((quiet.spec as { volumes?: unknown }).volumes, 'the account turned it off')
  const insists = pod('c', { serviceAccountName: 'quiet', automountServiceAccountToken: true })
  await admitServiceAccount(insists, 'default', { lookup })
  t.equal((insists.spec as { volumes: unknown[] }).volumes.length, 1, 'the pod turned it back on')
  const mirror: Record<string, unknown> = { ...pod('d', { serviceAccountName: 'missing' }), metadata: { name: 'd', annotations: { 'kubernetes.io/config.mirror': 'x' } } }
  await admitServiceAccount(mirror, 'default', { lookup, attempts: 1 })
  t.notOk((mirror.spec as { volumes?: unknown }).volumes, 'mirror pods are left alone')
})

t.test('an account made while the pod waits for it is found', async t => {
  let calls = 0
  const lookup = async (): Promise<Record<string, unknown> | undefined> => (++calls >= 3 ? {} : undefined)
  const p = pod('late')
  await admitServiceAccount(p, 'default', { lookup, retryMs: 5 })
  t.equal(calls, 3)
  t.equal((p.spec as { volumes: unknown[] }).volumes.length, 1)
})
