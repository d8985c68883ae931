// serviceaccounts/token through the registry: defaults, limits, bound objects, and what the issued token is good for.
import t, { type Test } from 'tap'
import { decodeJwt } from 'jose'
import { createServiceAccountTokens } from '../../auth/service-account-tokens.js'
import { serviceAccountKeys } from '../../auth/testing.js'
import { registryUidLookup } from '../object-uids.js'
import { body, ctx, openFixture } from '../testing.js'
import type { OrchRegistry } from '../registry.js'
import type { RequestContext } from '../types.js'

const API = ['https://orch.test']
const T0 = Date.parse('2026-03-01T00:00:00Z')

interface World {
  registry: OrchRegistry
  request(name: string, spec: Record<string, unknown>, c?: RequestContext): Promise<Record<string, any>>
  make(resource: string, name: string, extra?: Record<string, unknown>): Promise<string>
  authenticate(token: string, audiences: string[]): Promise<unknown>
}

async function world (t: Test, maxTokenExpirationSeconds?: number): Promise<World> {
  let registry: OrchRegistry | undefined
  const tokens = createServiceAccountTokens({ ...serviceAccountKeys(), issuers: ['https://orch.test'], lookup: registryUidLookup(() => registry!, () => T0), now: () => T0 })
  const fx = await openFixture({ tokenIssuer: tokens, apiAudiences: API, maxTokenExpirationSeconds, clock: { now: () => T0 } })
  registry = fx.registry
  t.teardown(() => fx.close())
  return {
    registry: fx.registry,
    async request (name, spec, c = ctx()) {
      const sub = fx.registry.subresource('', 'v1', 'serviceaccounts', 'token')!
      const r = await sub.create(c, 'default', name, body({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec }))
      t.equal(r.status, 201)
      return r.object
    },
    async make (resource, name, extra = {}) {
      const kind = { pods: 'Pod', secrets: 'Secret', serviceaccounts: 'ServiceAccount' }[resource]!
      const r = await fx.registry.handler('', 'v1', resource)!.create(ctx(), 'default', body({ apiVersion: 'v1', kind, metadata: { name }, ...extra }))
      return String((r.object.metadata as Record<string, unknown>).uid)
    },
    authenticate: async (token, audiences) => await tokens.authenticateToken(token, audiences)
  }
}

const podSpec = (serviceAccountName?: string): Record<string, unknown> => ({ spec: { ...(serviceAccountName === undefined ? {} : { serviceAccountName }), containers: [{ name: 'c', image: 'busybox' }] } })

t.test('a TokenRequest defaults to the API audiences and an hour, and answers the token and its expiry', async t => {
  const w = await world(t)
  const saUid = await w.make('serviceaccounts', 'default')
  const r = await w.request('default', {})
  t.equal(r.apiVersion, 'authentication.k8s.io/v1')
  t.equal(r.kind, 'TokenRequest')
  t.same(r.metadata, { name: 'default', namespace: 'default', creationTimestamp: '2026-03-01T00:00:00Z' })
  t.same(r.spec, { audiences: API, expirationSeconds: 3600 })
  t.equal(r.status.expirationTimestamp, '2026-03-01T01:00:00Z')
  t.match(decodeJwt(r.status.token), { sub: 'system:serviceaccount:default:default', aud: API, exp: T0 / 1000 + 3600 })
  t.match(await w.authenticate(r.status.token, API), { user: { username: 'system:serviceaccount:default:default', uid: saUid } })
})

t.test('expirationSeconds must be at least 10 minutes and is capped by the maximum with a warning', async t => {
  const w = await world(t, 7200)
  await w.make('serviceaccounts', 'default')
  await t.rejects(w.request('default', { expirationSeconds: 300 }), {
    code: 422, message: 'TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid value: 300: may not specify a duration less than 10 minutes'
  })
  const c = ctx()
  const r = await w.request('default', { audiences: ['x'], expirationSeconds: 86400 }, c)
  t.equal(r.spec.expirationSeconds, 7200)
  t.equal(r.status.expirationTimestamp, '2026-03-01T02:00:00Z')
  t.same(c.warnings, ['requested expiration of 86400 seconds shortened to 7200 seconds'])
})

t.test('a token for a missing service account is 404', async t => {
  const w = await world(t)
  await t.rejects(w.request('ghost', {}), { code: 404, message: 'serviceaccounts "ghost" not found' })
})

t.test('a token bound to a pod names it and stops working when the pod is gone', async t => {
  const w = await world(t)
  await w.make('serviceaccounts', 'default')
  await w.make('serviceaccounts', 'robot')
  const podUid = await w.make('pods', 'web', podSpec())
  const r = await w.request('default', { audiences: ['x'], boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'web' } })
  t.match(decodeJwt(r.status.token)['orch.io'], { pod: { name: 'web', uid: podUid } })
  t.ok(await w.authenticate(r.status.token, ['x']))
  await t.rejects(w.request('robot', { boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'web' } }),
    { code: 400, message: 'cannot bind token for serviceaccount "robot" to pod running with different serviceaccount name.' })
  await t.rejects(w.request('default', { boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'web', uid: 'stale' } }), {
    code: 409,
    message: 'Operation cannot be fulfilled on Pod "web": the UID in the bound object reference (stale) does not match the UID in record. The object might have been deleted and then recreated'
  })
  await t.rejects(w.request('default', { boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'nope' } }), { code: 404, message: 'pods "nope" not found' })
  await t.rejects(w.request('default', { boundObjectRef: { kind: 'Deployment', apiVersion: 'apps/v1', name: 'web' } }),
    { code: 400, message: 'cannot bind token to object of type apps/v1, Kind=Deployment' })
  await w.registry.handler('', 'v1', 'pods')!.delete(ctx(), 'default', 'web', { gracePeriodSeconds: 0 })
  await t.rejects(w.authenticate(r.status.token, ['x']), { name: 'AuthenticationError', message: 'pod default/web has been deleted' })
})

t.test('a token bound to a secret is checked against the secret', async t => {
  const w = await world(t)
  await w.make('serviceaccounts', 'default')
  const secretUid = await w.make('secrets', 'ticket')
  const r = await w.request('default', { audiences: ['x'], boundObjectRef: { kind: 'Secret', apiVersion: 'v1', name: 'ticket', uid: secretUid } })
  t.match(decodeJwt(r.status.token)['orch.io'], { secret: { name: 'ticket', uid: secretUid } })
  t.same(r.spec.boundObjectRef, { kind: 'Secret', apiVersion: 'v1', name: 'ticket', uid: secretUid })
  t.ok(await w.authenticate(r.status.token, ['x']))
})
