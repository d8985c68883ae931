// Claim mappings one by one: by claim with prefixes (as the --oidc-* flags), by CEL expression, and the values refused.

import t from 'tap'
import { SignJWT } from 'jose'
import { createSandbox } from '../../../sandbox/sandbox.js'
import { inThreadExpressionEvaluator } from '../../../sandbox/expression-evaluator.js'
import { newKey, startIssuer } from '../testing/oidc-issuer.js'
import { createJwtAuthenticators } from './jwt-authenticators.js'
import type { ClaimMappings, JWTAuthenticator } from './config.js'
import { stringList } from './cel.js'

t.test('stringList converts mapping results as Kubernetes does', async (t) => {
  t.same(stringList('a'), ['a'])
  t.same(stringList(''), [])
  t.same(stringList(null), [])
  t.same(stringList(['a', '', 'b']), ['a', 'b'])
  t.throws(() => stringList([1]), { message: 'expression must return a string or a list of strings' })
  t.throws(() => stringList(5n), { message: 'expression must return a string or a list of strings' })
})

t.test('claim mappings', async (t) => {
  const issuer = await startIssuer()
  t.teardown(() => { issuer.server.closeAllConnections(); issuer.server.close() })
  const key = await newKey('k')
  issuer.keys = [key]
  const sandbox = await createSandbox()
  t.teardown(() => sandbox.dispose())
  const evaluator = inThreadExpressionEvaluator(sandbox)

  /** The user `claims` map to, or the refusal's message. */
  const mapWith = async (claimMappings: ClaimMappings, claims: Record<string, unknown>, more: Partial<JWTAuthenticator> = {}): Promise<unknown> => {
    const authn = await createJwtAuthenticators({ jwt: [{ issuer: { url: issuer.url, audiences: ['orch'], certificateAuthority: issuer.caPem }, claimMappings, ...more }] }, { evaluator })
    try {
      const token = await new SignJWT({ iss: issuer.url, aud: 'orch', exp: Math.floor(Date.now() / 1000) + 60, ...claims }).setProtectedHeader({ alg: 'RS256', kid: 'k' }).sign(key.privateKey)
      return (await authn.authenticateToken(token, []))?.user
    } catch (err) {
      return (err as Error).message
    } finally {
      await authn.close()
    }
  }

  await t.test('by claim: prefixes, string or list groups, uid', async (t) => {
    const m: ClaimMappings = { username: { claim: 'sub', prefix: 'https://idp#' }, groups: { claim: 'groups', prefix: 'idp:' }, uid: { claim: 'oid' } }
    t.same(await mapWith(m, { sub: 'u1', groups: ['a', 'b'], oid: 'x-1' }), { username: 'https://idp#u1', groups: ['idp:a', 'idp:b'], uid: 'x-1' })
    t.same(await mapWith(m, { sub: 'u1', groups: 'admins', oid: 'x-1' }), { username: 'https://idp#u1', groups: ['idp:admins'], uid: 'x-1' }, 'a single string is one group')
    t.same(await mapWith(m, { sub: 'u1', oid: 'x-1' }), { username: 'https://idp#u1', groups: [], uid: 'x-1' }, 'a missing groups claim means no groups')
    t.equal(await mapWith(m, { groups: [] , oid: 'x' }), 'oidc: parse username claims "sub": claim not present')
    t.equal(await mapWith(m, { sub: 7, oid: 'x' }), 'oidc: parse username claims "sub": json: cannot unmarshal number into Go value of type string')
    t.equal(await mapWith(m, { sub: 'u1' }), 'oidc: parse uid claim "oid": claim not present')
    t.match(await mapWith(m, { sub: 'u1', oid: 'x', groups: [1] }), /^oidc: parse groups claim "groups": /)
    t.equal(await mapWith({ username: { claim: 'constructor', prefix: '' } }, {}), 'oidc: parse username claims "constructor": claim not present', 'only the token\'s own claims count')
  })

  await t.test('the email claim must be verified when email_verified is present', async (t) => {
    const m: ClaimMappings = { username: { claim: 'email', prefix: '' } }
    t.same(await mapWith(m, { email: 'a@b.c' }), { username: 'a@b.c', groups: [] })
    t.same(await mapWith(m, { email: 'a@b.c', email_verified: true }), { username: 'a@b.c', groups: [] })
    t.equal(await mapWith(m, { email: 'a@b.c', email_verified: false }), 'oidc: email not verified')
  })

  await t.test('by expression: username, groups, uid and extra', async (t) => {
    const m: ClaimMappings = {
      username: { expression: "claims.?preferred_username.orValue(claims.sub)" },
      groups: { expression: "claims.roles.filter(r, r.startsWith('k8s-'))" },
      uid: { expression: "'uid-' + string(claims.n)" },
      extra: [
        { key: 'example.org/scopes', valueExpression: "claims.scope.split(' ')" },
        { key: 'example.org/tenant', valueExpression: 'claims.?tenant.orValue(null)' }
      ]
    }
    t.same(await mapWith(m, { sub: 's', preferred_username: 'pat', roles: ['k8s-dev', 'other'], n: 3, scope: 'read  write' }),
      { username: 'pat', groups: ['k8s-dev'], uid: 'uid-3', extra: { 'example.org/scopes': ['read', 'write'] } }, 'empty strings and null mean no value')
    t.same(await mapWith(m, { sub: 's', roles: [], n: 1, scope: 'x', tenant: 't1' }),
      { username: 's', groups: [], uid: 'uid-1', extra: { 'example.org/scopes': ['x'], 'example.org/tenant': ['t1'] } })
  })

  await t.test('expression results of the wrong type, and evaluation errors, refuse the token', async (t) => {
    t.equal(await mapWith({ username: { expression: 'claims.n' } }, { n: 1 }), 'oidc: error evaluating username claim expression: username claim expression must return a string')
    t.equal(await mapWith({ username: { expression: 'claims.sub' }, uid: { expression: 'claims.n' } }, { sub: 's', n: 1 }), 'oidc: error evaluating uid claim expression: uid claim expression must return a string')
    t.equal(await mapWith({ username: { expression: 'claims.sub' }, groups: { expression: 'claims.n' } }, { sub: 's', n: 1 }), 'oidc: error evaluating group claim expression: expression must return a string or a list of strings')
    t.equal(await mapWith({ username: { expression: 'claims.sub' }, extra: [{ key: 'example.org/x', valueExpression: 'claims.n' }] }, { sub: 's', n: 1 }),
      'oidc: error evaluating extra claim expression: claims.n: expression must return a string or a list of strings')
    t.match(await mapWith({ username: { expression: 'claims.missing' } }, { sub: 's' }), /^oidc: error evaluating username claim expression: .*missing/)
  })

  await t.test('validation rules: claims first, then the mapped user', async (t) => {
    const m: ClaimMappings = { username: { expression: "'u:' + claims.sub" }, groups: { expression: 'claims.groups' } }
    const rules: Partial<JWTAuthenticator> = {
      claimValidationRules: [{ expression: "claims.amr.exists(a, a == 'mfa')", message: 'MFA is required' }],
      userValidationRules: [{ expression: "!('system:masters' in user.groups)", message: 'may not claim system:masters' }, { expression: "user.username.size() < 12" }]
    }
    t.same(await mapWith(m, { sub: 'a', groups: ['dev'], amr: ['pwd', 'mfa'] }, rules), { username: 'u:a', groups: ['dev'] })
    t.equal(await mapWith(m, { sub: 'a', groups: [], amr: ['pwd'] }, rules), "oidc: error evaluating claim validation expression: validation expression 'claims.amr.exists(a, a == 'mfa')' failed: MFA is required")
    t.equal(await mapWith(m, { sub: 'a', groups: ['system:masters'], amr: ['mfa'] }, rules), "oidc: error evaluating user info validation rule: validation expression '!('system:masters' in user.groups)' failed: may not claim system:masters")
    t.equal(await mapWith(m, { sub: 'a-very-long-name', groups: [], amr: ['mfa'] }, rules), "oidc: error evaluating user info validation rule: validation expression 'user.username.size() < 12' failed: ")
    t.match(await mapWith(m, { sub: 'a', groups: [] }, rules), /^oidc: error evaluating claim validation expression: /, 'a rule that cannot be evaluated refuses')
  })
})
