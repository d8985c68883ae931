// The access reviews through the registry: validation as Kubernetes words it, and the authorizer's answer in status.
import t, { type Test } from 'tap'
import type { Attributes, Authorizer } from '../../auth/types.js'
import { isStatusError } from '../../errors/status-error.js'
import { body, ctx, openFixture } from '../testing.js'
import type { RequestContext } from '../types.js'

/** alice may list pods in "default"; deleting is denied outright; the "boom" resource makes the authorizer fail. */
const policy: Authorizer = {
  async authorize (a: Attributes) {
    if (a.resource === 'boom') throw new Error('policy store unreachable')
    if (a.verb === 'delete') return { decision: 'deny', reason: 'deletes are off' }
    if (a.user.username === 'alice' && a.verb === 'list' && a.resource === 'pods' && a.namespace === 'default') return { decision: 'allow', reason: 'alice reads pods' }
    if (!a.resourceRequest && a.path === '/healthz' && a.user.groups.includes('ops')) return { decision: 'allow', reason: '' }
    return { decision: 'noOpinion', reason: '' }
  }
}

const as = (username: string, groups: string[] = []): RequestContext => ({ ...ctx('Strict'), user: { username, groups } })

async function setup (t: Test): Promise<(plural: string, object: Record<string, unknown>, c?: RequestContext, namespace?: string) => Promise<Record<string, any>>> {
  const fx = await openFixture({ authorizer: policy })
  t.teardown(() => fx.close())
  return async (plural, object, c = ctx('Strict'), namespace = '') => {
    const creater = fx.registry.creater('authorization.orch.io', 'v1', plural)
    if (creater === undefined) throw new Error(`${plural} not served`)
    const r = await creater.create(c, namespace, body(object))
    t.equal(r.status, 201)
    return r.object
  }
}

const sar = (spec: Record<string, unknown>): Record<string, unknown> => ({ apiVersion: 'authorization.orch.io/v1', kind: 'SubjectAccessReview', spec })

t.test('a SubjectAccessReview answers allowed, denied and the reason for the user it names', async t => {
  const post = await setup(t)
  const allowed = await post('subjectaccessreviews', sar({ user: 'alice', resourceAttributes: { namespace: 'default', verb: 'list', resource: 'pods' } }))
  t.same(allowed.status, { allowed: true, reason: 'alice reads pods' })
  t.equal(allowed.kind, 'SubjectAccessReview')
  t.equal(allowed.spec.user, 'alice', 'the spec comes back')
  const denied = await post('subjectaccessreviews', sar({ user: 'alice', resourceAttributes: { namespace: 'default', verb: 'delete', resource: 'pods' } }))
  t.same(denied.status, { allowed: false, denied: true, reason: 'deletes are off' })
  const bob = await post('subjectaccessreviews', sar({ user: 'bob', resourceAttributes: { namespace: 'default', verb: 'list', resource: 'pods' } }))
  t.same(bob.status, { allowed: false }, 'no opinion is not allowed, not denied')
  const byGroup = await post('subjectaccessreviews', sar({ groups: ['ops'], nonResourceAttributes: { path: '/healthz', verb: 'get' } }))
  t.same(byGroup.status, { allowed: true }, 'non-resource attributes and groups alone')
})

t.test('an authorizer failure is the evaluationError of a review that is not allowed', async t => {
  const post = await setup(t)
  const r = await post('subjectaccessreviews', sar({ user: 'alice', resourceAttributes: { verb: 'get', resource: 'boom' } }))
  t.same(r.status, { allowed: false, evaluationError: 'policy store unreachable' })
})

t.test('SubjectAccessReview validation is worded as kube-apiserver words it', async t => {
  const post = await setup(t)
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['no subject', sar({ resourceAttributes: { verb: 'get', resource: 'pods' } }),
      'SubjectAccessReview.authorization.orch.io "" is invalid: spec.user: Invalid value: "": at least one of user or group must be specified'],
    ['no attributes', sar({ user: 'alice' }),
      'SubjectAccessReview.authorization.orch.io "" is invalid: spec.resourceAttributes: Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified'],
    ['both attributes', sar({ user: 'alice', resourceAttributes: { verb: 'get' }, nonResourceAttributes: { verb: 'get', path: '/x' } }),
      'SubjectAccessReview.authorization.orch.io "" is invalid: spec.nonResourceAttributes: Invalid value: {"verb":"get","path":"/x"}: cannot be specified in combination with resourceAttributes'],
    ['named', { ...sar({ user: 'alice', resourceAttributes: { verb: 'get' } }), metadata: { name: 'x' } },
      'SubjectAccessReview.authorization.orch.io "" is invalid: metadata: Invalid value: {"name":"x"}: must be empty']
  ]
  for (const [what, object, message] of cases) {
    await t.rejects(post('subjectaccessreviews', object), { code: 422, reason: 'Invalid', message }, what)
  }
  const err = await post('subjectaccessreviews', sar({ user: 'alice' })).catch(e => e)
  t.ok(isStatusError(err))
  t.same(err.details.causes, [{ reason: 'FieldValueInvalid', field: 'spec.resourceAttributes', message: 'Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified' }])
  const cleared = await post('subjectaccessreviews', { ...sar({ user: 'alice', resourceAttributes: { verb: 'get' } }), metadata: { creationTimestamp: null } })
  t.same(cleared.status, { allowed: false }, 'the empty metadata kubectl sends is empty')
})

t.test('a SelfSubjectAccessReview asks about the requesting user, whatever the spec says', async t => {
  const post = await setup(t)
  const review = { apiVersion: 'authorization.orch.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: { namespace: 'default', verb: 'list', resource: 'pods' } } }
  t.same((await post('selfsubjectaccessreviews', review, as('alice'))).status, { allowed: true, reason: 'alice reads pods' })
  t.same((await post('selfsubjectaccessreviews', review, as('bob'))).status, { allowed: false })
  await t.rejects(post('selfsubjectaccessreviews', { ...review, spec: {} }, as('alice')), { code: 422 }, 'attributes are required')
  await t.rejects(post('selfsubjectaccessreviews', { ...review, spec: { ...review.spec, user: 'alice' } }, as('bob')),
    { code: 400, message: 'SelfSubjectAccessReview in version "v1" cannot be handled as a SelfSubjectAccessReview: strict decoding error: unknown field "spec.user"' },
    'a self review names no user')
})

t.test('a LocalSubjectAccessReview is namespaced and its attributes must name the same namespace', async t => {
  const post = await setup(t)
  const local = (ns: string): Record<string, unknown> => ({ apiVersion: 'authorization.orch.io/v1', kind: 'LocalSubjectAccessReview', spec: { user: 'alice', resourceAttributes: { namespace: ns, verb: 'list', resource: 'pods' } } })
  const r = await post('localsubjectaccessreviews', local('default'), ctx(), 'default')
  t.same(r.status, { allowed: true, reason: 'alice reads pods' })
  t.equal(r.metadata.namespace, 'default', 'the namespace of the URL is filled in')
  await t.rejects(post('localsubjectaccessreviews', local('other'), ctx(), 'default'), {
    code: 422,
    message: 'LocalSubjectAccessReview.authorization.orch.io "" is invalid: spec.resourceAttributes.namespace: Invalid value: "other": must match metadata.namespace'
  })
  await t.rejects(post('localsubjectaccessreviews', { ...local('default'), metadata: { namespace: 'kube-system' } }, ctx(), 'default'),
    { code: 400, message: 'the namespace of the provided object does not match the namespace sent on the request' })
  await t.rejects(post('localsubjectaccessreviews', { apiVersion: 'authorization.orch.io/v1', kind: 'LocalSubjectAccessReview', spec: { user: 'alice', nonResourceAttributes: { path: '/x', verb: 'get' } } }, ctx(), 'default'),
    { code: 422, message: 'LocalSubjectAccessReview.authorization.orch.io "" is invalid: spec.nonResourceAttributes: Invalid value: {"path":"/x","verb":"get"}: disallowed on this kind of request' })
})
