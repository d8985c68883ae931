// JWT authenticators against an OIDC issuer served by this test over HTTPS: discovery, JWKS, CEL mappings, refusals, key rotation.

import t from 'tap'
import { SignJWT } from 'jose'
import { createCa } from '../../pki/certs.js'
import { newKey, startIssuer, type SigningKey } from '../testing/oidc-issuer.js'
import { createSandboxPool } from '../../../sandbox/pool.js'
import { createJwtAuthenticators } from './jwt-authenticators.js'
import { InvalidConfigurationError } from '../config/errors.js'
import type { JWTAuthenticator } from './config.js'

t.test('OIDC issuer over HTTPS', async (t) => {
  const issuer = await startIssuer()
  t.teardown(() => { issuer.server.closeAllConnections(); issuer.server.close() })
  const pool = createSandboxPool({ size: 1 })
  t.teardown(() => pool.close())
  const first = await newKey('k1')
  issuer.keys = [first]
  let clock = Date.now()
  const config: JWTAuthenticator = {
    issuer: { url: issuer.url, audiences: ['orch', 'orch-2'], certificateAuthority: issuer.caPem },
    claimValidationRules: [{ claim: 'hd', requiredValue: 'example.org' }, { expression: 'claims.email_verified == true', message: 'email must be verified' }],
    claimMappings: {
      username: { expression: "'oidc:' + claims.email" },
      groups: { expression: "claims.roles.map(r, 'role:' + r)" },
      uid: { claim: 'sub' },
      extra: [{ key: 'example.org/team', valueExpression: 'claims.team' }, { key: 'example.org/none', valueExpression: "''" }]
    },
    userValidationRules: [{ expression: "!user.username.startsWith('oidc:system')", message: 'system names are reserved' }]
  }
  const authn = await createJwtAuthenticators({ jwt: [config] }, { evaluator: pool, now: () => clock })
  t.teardown(() => authn.close())

  const claims = { sub: 'u-1', email: 'alice@example.org', email_verified: true, hd: 'example.org', roles: ['dev', 'ops'], team: 'blue' }
  const sign = async (over: Record<string, unknown> = {}, key: SigningKey = first, kid = key.kid): Promise<string> => {
    const now = Math.floor(clock / 1000)
    return await new SignJWT({ iss: issuer.url, aud: 'orch', iat: now, exp: now + 300, ...claims, ...over }).setProtectedHeader({ alg: 'RS256', kid }).sign(key.privateKey)
  }
  const refusal = async (token: string): Promise<string> => {
    try { await authn.authenticateToken(token, ['api']); return 'accepted' } catch (err) { return (err as Error).message }
  }

  await t.test('a valid token maps to the user of the CEL claim mappings', async (t) => {
    const r = await authn.authenticateToken(await sign(), ['api'])
    t.same(r, { user: { username: 'oidc:alice@example.org', groups: ['role:dev', 'role:ops'], uid: 'u-1', extra: { 'example.org/team': ['blue'] } }, audiences: ['api'] })
    t.equal(issuer.jwksFetches(), 1, 'the key set was fetched once, on first need')
    await authn.authenticateToken(await sign({ aud: ['x', 'orch-2'] }), ['api'])
    t.equal(issuer.jwksFetches(), 1, 'and is cached')
  })

  await t.test('a token of another issuer is not this authenticator\'s', async (t) => {
    t.equal(await authn.authenticateToken(await sign({ iss: 'https://elsewhere' }), ['api']), undefined)
    t.equal(await authn.authenticateToken('not-a-jwt', ['api']), undefined)
  })

  await t.test('wrong audience, expiry, not-before and a bad signature are refused', async (t) => {
    t.equal(await refusal(await sign({ aud: 'other' })), 'oidc: verify token: oidc: expected audience in ["orch" "orch-2"] got ["other"]')
    const past = Math.floor(clock / 1000) - 3600
    t.equal(await refusal(await sign({ exp: past })), `oidc: verify token: oidc: token is expired (Token Expiry: ${new Date(past * 1000).toISOString().replace('.000Z', 'Z')})`)
    t.match(await refusal(await sign({ exp: Math.floor(clock / 1000) - 5 })), 'accepted', 'a few seconds past exp are within the leeway')
    t.match(await refusal(await sign({ nbf: Math.floor(clock / 1000) + 3600 })), /before the nbf \(not before\) time/)
    const forged = await newKey('k1')
    t.equal(await refusal(await sign({}, forged)), 'oidc: verify token: failed to verify signature: failed to verify id token signature')
    const [h, p] = (await sign()).split('.')
    t.match(await refusal(`${h}.${p}.AAAA`), /failed to verify signature/)
    t.match(await refusal(await new SignJWT({ ...claims, iss: issuer.url, aud: 'orch', exp: Math.floor(clock / 1000) + 60 }).setProtectedHeader({ alg: 'HS256' }).sign(new Uint8Array(32))),
      /id token signed with unsupported algorithm/)
  })

  await t.test('claim validation rules and user validation rules refuse with their messages', async (t) => {
    t.equal(await refusal(await sign({ email_verified: false })), "oidc: error evaluating claim validation expression: validation expression 'claims.email_verified == true' failed: email must be verified")
    t.equal(await refusal(await sign({ hd: 'evil.org' })), 'oidc: required claim hd value does not match. Got = evil.org, want = example.org')
    t.equal(await refusal(await sign({ hd: undefined })), 'oidc: required claim hd not present in ID token')
    t.equal(await refusal(await sign({ email: 'system:admin' })), "oidc: error evaluating user info validation rule: validation expression '!user.username.startsWith('oidc:system')' failed: system names are reserved")
    t.match(await refusal(await sign({ roles: 'not-a-list' })), /^oidc: error evaluating group claim expression: /)
    t.match(await refusal(await sign({ email: undefined })), /^oidc: error evaluating username claim expression: /)
  })

  await t.test('a rotated key is picked up on its unknown kid, at most once per refresh interval', async (t) => {
    const second = await newKey('k2')
    issuer.keys = [second]
    const before = issuer.jwksFetches()
    clock += 11_000
    const r = await authn.authenticateToken(await sign({}, second), ['api'])
    t.equal(r?.user.username, 'oidc:alice@example.org')
    t.equal(issuer.jwksFetches(), before + 1, 'one fetch for the new kid')
    t.match(await refusal(await sign({}, first)), /failed to verify signature/, 'the retired key no longer verifies')
    t.equal(issuer.jwksFetches(), before + 1, 'an unknown key right after a fetch does not fetch again')
    const third = await newKey('k3')
    issuer.keys = [second, third]
    t.match(await refusal(await sign({}, third)), /failed to verify signature/, 'within the interval the new key is not known yet')
    clock += 11_000
    t.equal((await authn.authenticateToken(await sign({}, third), ['api']))?.user.uid, 'u-1', 'after the interval it is')
  })
})

t.test('an issuer whose certificate is not trusted by certificateAuthority is not reached', async (t) => {
  const issuer = await startIssuer()
  t.teardown(() => { issuer.server.closeAllConnections(); issuer.server.close() })
  const key = await newKey('k1')
  issuer.keys = [key]
  const other = await createCa('someone-else')
  const pool = createSandboxPool({ size: 1 })
  t.teardown(() => pool.close())
  const authn = await createJwtAuthenticators({ jwt: [{ issuer: { url: issuer.url, audiences: ['orch'], certificateAuthority: other.certPem }, claimMappings: { username: { claim: 'sub', prefix: '' } } }] }, { evaluator: pool })
  t.teardown(() => authn.close())
  const token = await new SignJWT({ iss: issuer.url, aud: 'orch', sub: 'bob', exp: Math.floor(Date.now() / 1000) + 60 }).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).sign(key.privateKey)
  await t.rejects(authn.authenticateToken(token, []), { message: /^oidc: verify token: oidc: authenticator not initialized: / })
  t.equal(issuer.jwksFetches(), 0)
  t.match((await authn.prefetch())[0], /^jwt\[0\] https:\/\/127\.0\.0\.1:\d+: /)
})

t.test('bad CEL expressions fail the start with the field named', async (t) => {
  const pool = createSandboxPool({ size: 1 })
  t.teardown(() => pool.close())
  const bad: JWTAuthenticator = {
    issuer: { url: 'https://issuer.example', audiences: ['orch'] },
    claimValidationRules: [{ expression: "claims.hd + 'x'", message: 'm' }],
    claimMappings: { username: { expression: 'claims.sub +' }, extra: [{ key: 'example.org/x', valueExpression: 'nope.x' }] },
    userValidationRules: [{ expression: 'user.nosuchfield == "a"' }]
  }
  const err = await createJwtAuthenticators({ jwt: [bad] }, { evaluator: pool }).catch((e: unknown) => e)
  t.ok(err instanceof InvalidConfigurationError)
  const msg = (err as Error).message
  t.match(msg, /^invalid authentication configuration: \[/)
  t.match(msg, 'jwt[0].claimValidationRules[0].expression: Invalid value: "claims.hd + \'x\'": must evaluate to bool')
  t.match(msg, /jwt\[0\]\.claimMappings\.username\.expression: Invalid value: "claims\.sub \+": compilation failed: ERROR: <input>:1:/)
  t.match(msg, /jwt\[0\]\.claimMappings\.extra\[0\]\.valueExpression: Invalid value: "nope\.x": compilation failed: ERROR: <input>:1:1: undeclared reference to 'nope'/)
  t.match(msg, /jwt\[0\]\.userValidationRules\[0\]\.expression: Invalid value: "user\.nosuchfield == \\"a\\"": compilation failed: /)
})
