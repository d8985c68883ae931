// Service-account tokens: signed claims, times, audiences, issuers, and the objects a token is bound to.
import t, { type Test } from 'tap'
import { decodeJwt, decodeProtectedHeader } from 'jose'
import { createServiceAccountTokens, type ServiceAccountTokens } from './service-account-tokens.js'
import { serviceAccountKeys } from './testing.js'
import { AuthenticationError } from './types.js'
import { openFixture, ctx, body } from '../registry/testing.js'
import { registryUidLookup } from '../registry/object-uids.js'
import type { OrchRegistry } from '../registry/registry.js'

const ISSUER = 'https://orch.test'
const T0 = Date.parse('2026-03-01T00:00:00Z')

async function world (t: Test): Promise<{ registry: OrchRegistry; clock: { now: number }; tokens: ServiceAccountTokens; uid: (r: string, name: string) => Promise<string> }> {
  const fx = await openFixture()
  t.teardown(() => fx.close())
  const clock = { now: T0 }
  const tokens = createServiceAccountTokens({ ...serviceAccountKeys(), issuers: [ISSUER], lookup: registryUidLookup(() => fx.registry, () => clock.now), now: () => clock.now })
  const uid = async (resource: string, name: string): Promise<string> => {
    const kind = resource === 'pods' ? 'Pod' : resource === 'secrets' ? 'Secret' : 'ServiceAccount'
    const spec = kind === 'Pod' ? { spec: { containers: [{ name: 'c', image: 'busybox' }] } } : {}
    const r = await fx.registry.handler('', 'v1', resource)!.create(ctx(), 'default', body({ apiVersion: 'v1', kind, metadata: { name }, ...spec }))
    return String((r.object.metadata as Record<string, unknown>).uid)
  }
  return { registry: fx.registry, clock, tokens, uid }
}

t.test('an issued token carries Kubernetes-shaped claims and authenticates as its service account', async t => {
  const w = await world(t)
  const saUid = await w.uid('serviceaccounts', 'builder')
  const podUid = await w.uid('pods', 'runner')
  const { token, expiresAt } = await w.tokens.issue({ namespace: 'default', serviceAccount: { name: 'builder', uid: saUid }, audiences: ['x'], expirationSeconds: 600, boundObject: { kind: 'Pod', name: 'runner', uid: podUid }, now: T0 })
  t.equal(expiresAt, T0 + 600_000)
  const claims = decodeJwt(token)
  t.match(claims, { iss: ISSUER, sub: 'system:serviceaccount:default:builder', aud: ['x'], iat: T0 / 1000, nbf: T0 / 1000, exp: T0 / 1000 + 600 })
  t.same(claims['orch.io'], { namespace: 'default', serviceaccount: { name: 'builder', uid: saUid }, pod: { name: 'runner', uid: podUid } })
  t.equal(decodeProtectedHeader(token).alg, 'ES256')
  const r = await w.tokens.authenticateToken(token, ['x', 'y'])
  t.same(r, {
    user: {
      username: 'system:serviceaccount:default:builder', uid: saUid, groups: ['system:serviceaccounts', 'system:serviceaccounts:default', 'system:authenticated'],
      extra: { 'authentication.orch.io/pod-name': ['runner'], 'authentication.orch.io/pod-uid': [podUid] }
    },
    audiences: ['x']
  })
})

t.test('a token is refused outside its audiences, after it expires (with a minute of leeway) and before it is valid', async t => {
  const w = await world(t)
  const saUid = await w.uid('serviceaccounts', 'builder')
  const { token } = await w.tokens.issue({ namespace: 'default', serviceAccount: { name: 'builder', uid: saUid }, audiences: ['x'], expirationSeconds: 600, now: T0 })
  await t.rejects(w.tokens.authenticateToken(token, ['api', 'other']),
    new AuthenticationError('token audiences ["x"] is invalid for the target audiences ["api" "other"]'))
  w.clock.now = T0 + 630_000
  t.ok(await w.tokens.authenticateToken(token, ['x']), 'within the leeway')
  w.clock.now = T0 + 661_000
  await t.rejects(w.tokens.authenticateToken(token, ['x']), new AuthenticationError('service account token has expired'))
  w.clock.now = T0 - 120_000
  await t.rejects(w.tokens.authenticateToken(token, ['x']), new AuthenticationError('service account token is not valid yet'))
})

t.test('the signing key verifies its own tokens; further keys verify tokens of a retired signing key', async t => {
  const w = await world(t)
  const saUid = await w.uid('serviceaccounts', 'builder')
  const old = serviceAccountKeys()
  const lookup = registryUidLookup(() => w.registry, () => T0)
  const retired = createServiceAccountTokens({ signingKeyPem: old.signingKeyPem, verifyKeyPems: [], issuers: [ISSUER], lookup, now: () => T0 })
  const current = createServiceAccountTokens({ ...serviceAccountKeys(), verifyKeyPems: old.verifyKeyPems, issuers: [ISSUER], lookup, now: () => T0 })
  const claims = { namespace: 'default', serviceAccount: { name: 'builder', uid: saUid }, audiences: ['x'], expirationSeconds: 600, now: T0 }
  t.ok(await retired.authenticateToken((await retired.issue(claims)).token, ['x']), 'verifyKeyPems may be empty')
  t.ok(await current.authenticateToken((await retired.issue(claims)).token, ['x']), 'a token of the retired key')
  t.ok(await current.authenticateToken((await current.issue(claims)).token, ['x']))
  t.equal(decodeProtectedHeader((await current.issue(claims)).token).typ, 'JWT')
})

t.test('tokens of other issuers are left to other authenticators; a forged signature is refused', async t => {
  const w = await world(t)
  const saUid = await w.uid('serviceaccounts', 'builder')
  const other = createServiceAccountTokens({ ...serviceAccountKeys(), issuers: ['https://elsewhere'], lookup: async () => saUid, now: () => T0 })
  const foreign = await other.issue({ namespace: 'default', serviceAccount: { name: 'builder', uid: saUid }, audiences: ['x'], expirationSeconds: 600, now: T0 })
  t.equal(await w.tokens.authenticateToken(foreign.token, ['x']), undefined, 'another issuer')
  t.equal(await w.tokens.authenticateToken('not-a-jwt', ['x']), undefined, 'not a JWT')
  const forger = createServiceAccountTokens({ ...serviceAccountKeys(), issuers: [ISSUER], lookup: async () => saUid, now: () => T0 })
  const forged = await forger.issue({ namespace: 'default', serviceAccount: { name: 'builder', uid: saUid }, audiences: ['x'], expirationSeconds: 600, now: T0 })
  await t.rejects(w.tokens.authenticateToken(forged.token, ['x']), { name: 'AuthenticationError' })
})

t.test('a token stops authenticating when its account or bound object is deleted or recreated', async t => {
  const w = await world(t)
  const saUid = await w.uid('serviceaccounts', 'builder')
  const secretUid = await w.uid('secrets', 'ticket')
  const issue = async (bound?: { kind: 'Secret'; name: string; uid: string }): Promise<string> =>
    (await w.tokens.issue({ namespace: 'default', serviceAccount: { name: 'builder', uid: saUid }, audiences: ['x'], expirationSeconds: 3600, boundObject: bound, now: T0 })).token
  const bound = await issue({ kind: 'Secret', name: 'ticket', uid: secretUid })
  t.ok(await w.tokens.authenticateToken(bound, ['x']))
  await w.registry.handler('', 'v1', 'secrets')!.delete(ctx(), 'default', 'ticket', {})
  await t.rejects(w.tokens.authenticateToken(bound, ['x']), new AuthenticationError('secret default/ticket has been deleted'))
  const recreated = await w.uid('secrets', 'ticket')
  await t.rejects(w.tokens.authenticateToken(bound, ['x']), new AuthenticationError(`secret UID (${recreated}) does not match claim (${secretUid})`))
  const plain = await issue()
  await w.registry.handler('', 'v1', 'serviceaccounts')!.delete(ctx(), 'default', 'builder', {})
  await t.rejects(w.tokens.authenticateToken(plain, ['x']), new AuthenticationError('service account default/builder has been deleted'))
  const newUid = await w.uid('serviceaccounts', 'builder')
  await t.rejects(w.tokens.authenticateToken(plain, ['x']), new AuthenticationError(`service account UID (${newUid}) does not match claim (${saUid})`))
})
