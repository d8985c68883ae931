import t from 'tap'
import { createPublicKey, generateKeyPairSync } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import { createAuthenticator } from './authenticator.js'
import { createServiceAccountTokens } from './service-account-tokens.js'
import { parseTokenFile, staticTokens } from './token-file.js'

const key = (): string => generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'pem', type: 'pkcs8' }).toString()

const publicOf = (pem: string): string => createPublicKey(pem).export({ format: 'pem', type: 'spki' }).toString()

const ISSUER = 'https://kubernetes.default.svc.cluster.local'
const request = (headers: Record<string, string> = {}): IncomingMessage => ({ headers, socket: {} }) as unknown as IncomingMessage

t.test('the token file: CSV with quoted groups, malformed lines named', async t => {
  const tokens = parseTokenFile('tok1,alice,uid-1,"dev,ops"\n\ntok2,bob,uid-2\n', 'tokens.csv')
  t.same(tokens.get('tok1')?.user, { username: 'alice', uid: 'uid-1', groups: ['dev', 'ops'] })
  t.same(tokens.get('tok2')?.user, { username: 'bob', uid: 'uid-2', groups: [] })
  t.throws(() => parseTokenFile('only,two\n', 'tokens.csv'), /must have at least 3 columns .* on line 1/)
})

t.test('service-account tokens: issued, verified, refused for another audience, once expired, or when the account is gone', async t => {
  const signing = key()
  const objects = new Map<string, string>([['serviceaccounts/default/builder', 'sa-uid'], ['pods/default/web', 'pod-uid']])
  let now = Date.parse('2026-11-25T09:00:00Z')
  const sa = createServiceAccountTokens({ signingKeyPem: signing, verifyKeyPems: [publicOf(signing)], issuers: [ISSUER], now: () => now,
    lookup: async (resource, ns, name) => objects.get(`${resource}/${ns}/${name}`) })
  const { token, expiresAt } = await sa.issue({ namespace: 'default', serviceAccount: { name: 'builder', uid: 'sa-uid' }, audiences: ['api'], expirationSeconds: 600, boundObject: { kind: 'Pod', name: 'web', uid: 'pod-uid' }, now })
  t.equal(expiresAt, now + 600_000)
  const ok = await sa.authenticateToken(token, ['api'])
  t.equal(ok?.user.username, 'system:serviceaccount:default:builder')
  t.same(ok?.user.groups, ['system:serviceaccounts', 'system:serviceaccounts:default', 'system:authenticated'])
  t.same(ok?.user.extra?.['authentication.orch.io/pod-name'], ['web'])
  await t.rejects(sa.authenticateToken(token, ['other']), /token audiences \["api"\] is invalid for the target audiences \["other"\]/)
  objects.set('pods/default/web', 'new-pod-uid')
  await t.rejects(sa.authenticateToken(token, ['api']), /pod UID \(new-pod-uid\) does not match claim \(pod-uid\)/, 'a recreated pod invalidates the token')
  objects.set('pods/default/web', 'pod-uid')
  objects.delete('serviceaccounts/default/builder')
  await t.rejects(sa.authenticateToken(token, ['api']), /service account default\/builder has been deleted/)
  objects.set('serviceaccounts/default/builder', 'sa-uid')
  now += 661_000 // past the minute of leeway Kubernetes allows
  await t.rejects(sa.authenticateToken(token, ['api']), /has expired/)
  const stranger = createServiceAccountTokens({ signingKeyPem: key(), verifyKeyPems: [], issuers: [ISSUER], now: () => Date.now(), lookup: async () => 'x' })
  const forged = await stranger.issue({ namespace: 'default', serviceAccount: { name: 'builder', uid: 'sa-uid' }, audiences: ['api'], expirationSeconds: 600, now: Date.now() })
  await t.rejects(sa.authenticateToken(forged.token, ['api']), /invalid bearer token/, 'a token signed by another key is refused')
  t.equal(await sa.authenticateToken('not-a-jwt', ['api']), undefined, 'a token that is no JWT is left to other authenticators')
})

t.test('the chain: a known token authenticates, an unknown one is refused, no credentials are anonymous only when allowed', async t => {
  const tokens = staticTokens(parseTokenFile('tok1,alice,uid-1,dev\n'))
  const open = createAuthenticator({ request: [], tokens: [tokens], apiAudiences: ['api'], anonymous: true })
  t.same((await open.authenticate(request({ authorization: 'Bearer tok1' }))).user, { username: 'alice', uid: 'uid-1', groups: ['dev', 'system:authenticated'] })
  await t.rejects(open.authenticate(request({ authorization: 'Bearer bogus' })), /invalid bearer token/, 'a bad token is never anonymous')
  t.same((await open.authenticate(request())).user, { username: 'system:anonymous', groups: ['system:unauthenticated'] })
  const closed = createAuthenticator({ request: [], tokens: [tokens], apiAudiences: ['api'], anonymous: false })
  await t.rejects(closed.authenticate(request()), /no credentials were presented/)
})
