// TokenReview through the registry, over the API server's real authenticator with a static token file.
import t, { type Test } from 'tap'
import { createAuthenticator } from '../../auth/authenticator.js'
import { parseTokenFile, staticTokens } from '../../auth/token-file.js'
import { body, ctx, openFixture } from '../testing.js'

const API = ['https://orch.test']
const review = (spec: Record<string, unknown>): Record<string, unknown> => ({ apiVersion: 'authentication.orch.io/v1', kind: 'TokenReview', spec })

async function setup (t: Test, withAuthenticator = true): Promise<(spec: Record<string, unknown>) => Promise<Record<string, any>>> {
  const authenticator = createAuthenticator({
    request: [], tokens: [staticTokens(parseTokenFile('s3cret,carol,42,"dev,ops"\n'))], apiAudiences: API, anonymous: true
  })
  const fx = await openFixture(withAuthenticator ? { authenticator, apiAudiences: API } : { apiAudiences: API })
  t.teardown(() => fx.close())
  return async spec => {
    const r = await fx.registry.creater('authentication.orch.io', 'v1', 'tokenreviews')!.create(ctx(), '', body(review(spec)))
    t.equal(r.status, 201)
    return r.object
  }
}

t.test('a good token is authenticated as its user, for the API audiences by default', async t => {
  const post = await setup(t)
  const r = await post({ token: 's3cret' })
  t.same(r.status, { authenticated: true, user: { username: 'carol', uid: '42', groups: ['dev', 'ops', 'system:authenticated'] }, audiences: API })
  t.same(r.spec, { token: 's3cret' }, 'the review comes back with its spec')
  t.equal(r.apiVersion, 'authentication.orch.io/v1')
})

t.test('a token nobody takes is not authenticated and the error says why', async t => {
  const post = await setup(t)
  const r = await post({ token: 'nope' })
  t.same(r.status, { user: {}, error: 'invalid bearer token' })
})

t.test('a token of an audience-agnostic authenticator is good only for the API audiences', async t => {
  const post = await setup(t)
  const r = await post({ token: 's3cret', audiences: ['vault'] })
  t.same(r.status, { user: {}, error: "token audiences don't match" })
  t.same(r.spec, {}, 'answered bare, as kube-apiserver does')
  const both = await post({ token: 's3cret', audiences: ['vault', API[0]] })
  t.same(both.status.audiences, API)
})

t.test('a review without a token is a bad request', async t => {
  const post = await setup(t)
  await t.rejects(post({}), { code: 400, message: 'token is required for TokenReview in authentication' })
  await t.rejects(post({ token: 7 }), { code: 400, message: /TokenReview in version "v1" cannot be handled as a TokenReview: json: cannot unmarshal number into Go struct field/ })
})

t.test('without an authenticator the review comes back unanswered', async t => {
  const post = await setup(t, false)
  const r = await post({ token: 's3cret' })
  t.equal(r.status, undefined)
  t.same(r.spec, { token: 's3cret' })
})
