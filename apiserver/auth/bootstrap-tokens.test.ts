// Bootstrap tokens against real Secrets in a registry: who a valid token is, and every way a token is refused.
import t from 'tap'
import { openFixture, ctx, body } from '../registry/testing.js'
import { bootstrapTokenAuthenticator, registrySecretLookup, tokenGroups } from './bootstrap-tokens.js'
import { bootstrapTokenSecret } from '../cli/token.js'

const NOW = Date.parse('2026-06-01T12:00:00Z')

t.test('a bootstrap token authenticates as system:bootstrap:<id> in system:bootstrappers and its extra groups', async t => {
  const fx = await openFixture()
  t.teardown(() => fx.close())
  const secrets = fx.registry.handler('', 'v1', 'secrets')!
  const put = async (id: string, secret: string, o: Parameters<typeof bootstrapTokenSecret>[2], data: Record<string, string> = {}): Promise<void> => {
    const obj = bootstrapTokenSecret(id, secret, o)
    obj.stringData = { ...(obj.stringData as Record<string, string>), ...data }
    await secrets.create(ctx(), 'kube-system', body(obj))
  }
  await put('abcdef', '0123456789abcdef', { expiresAt: new Date(NOW + 3600_000), groups: ['system:bootstrappers:orch:default-node-token'] })
  await put('expire', '0123456789abcdef', { expiresAt: new Date(NOW - 1000), groups: [] })
  await put('nouse1', '0123456789abcdef', { groups: [] }, { 'usage-bootstrap-authentication': 'false' })
  await put('badgrp', '0123456789abcdef', { groups: ['admins'] })
  await put('noexpi', '0123456789abcdef', { groups: [] })
  await secrets.create(ctx(), 'kube-system', body({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'bootstrap-token-opaque' }, stringData: { 'token-id': 'opaque', 'token-secret': '0123456789abcdef', 'usage-bootstrap-authentication': 'true' } }))
  const rejected: string[] = []
  const auth = bootstrapTokenAuthenticator(registrySecretLookup(fx.registry), () => NOW, why => rejected.push(why))

  t.same(await auth.authenticateToken('abcdef.0123456789abcdef', []), {
    user: { username: 'system:bootstrap:abcdef', groups: ['system:bootstrappers', 'system:bootstrappers:orch:default-node-token'] }
  })
  t.same((await auth.authenticateToken('noexpi.0123456789abcdef', []))?.user.groups, ['system:bootstrappers'], 'no expiration: valid')
  const refused: Array<[string, string | undefined]> = [
    ['abcdef.0123456789abcdee', 'Bootstrap secret kube-system/bootstrap-token-abcdef has invalid value for key token-secret.'],
    ['expire.0123456789abcdef', 'Bootstrap secret kube-system/bootstrap-token-expire has expired.'],
    ['nouse1.0123456789abcdef', 'Bootstrap secret kube-system/bootstrap-token-nouse1 not marked usage-bootstrap-authentication=true.'],
    ['badgrp.0123456789abcdef', 'Bootstrap secret kube-system/bootstrap-token-badgrp has invalid value for key auth-extra-groups: bootstrap group "admins" is invalid (must match \\Asystem:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]\\z).'],
    ['opaque.0123456789abcdef', 'Bootstrap secret kube-system/bootstrap-token-opaque has invalid type, expected bootstrap.kubernetes.io/token.'],
    ['zzzzzz.0123456789abcdef', undefined],
    ['not-a-bootstrap-token', undefined]
  ]
  for (const [token, why] of refused) {
    rejected.length = 0
    t.equal(await auth.authenticateToken(token, []), undefined, token)
    t.same(rejected, why === undefined ? [] : [why], token)
  }
})

t.test('token groups are validated, deduplicated and sorted', async t => {
  const secret = (groups: string): Record<string, unknown> => ({ data: { 'auth-extra-groups': Buffer.from(groups).toString('base64') } })
  t.same(tokenGroups(secret('system:bootstrappers:b,system:bootstrappers:a,system:bootstrappers:a')), ['system:bootstrappers', 'system:bootstrappers:a', 'system:bootstrappers:b'])
  t.throws(() => tokenGroups(secret('system:bootstrappers:')), /bootstrap group "system:bootstrappers:" is invalid/)
})
