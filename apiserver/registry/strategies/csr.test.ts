// CertificateSigningRequests through the registry: validation of create, the requester recorded from the request's
// user, and what each write path (main, status, approval) may change.
import t from 'tap'
import { body, ctx, openFixture } from '../testing.js'
import { createCsr } from '../../pki/csr.js'
import { isStatusError } from '../../errors/status-error.js'
import type { RequestContext } from '../types.js'
import { signerPermission } from '../../auth/signer-permission.js'
import type { Attributes, Authorizer } from '../../auth/types.js'

const b64 = (s: string): string => Buffer.from(s).toString('base64')

async function csrObject (name: string, spec: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
  const { csrPem } = await createCsr({ commonName: 'alice', organizations: ['dev'] })
  return {
    apiVersion: 'certificates.orch.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: { name },
    spec: { request: b64(csrPem), signerName: 'orch.io/orch-apiserver-client', usages: ['client auth'], ...spec }
  }
}

const alice: RequestContext = { ...ctx(), user: { username: 'alice', uid: 'u-1', groups: ['dev', 'system:authenticated'], extra: { scopes: ['a'] } } }

async function causesOf (p: Promise<unknown>): Promise<string[]> {
  try { await p } catch (err) {
    if (!isStatusError(err)) throw err
    return (err.details?.causes ?? []).map(c => `${c.field ?? ''}: ${c.message ?? ''}`)
  }
  throw new Error('expected the write to be refused')
}

t.test('a created request records the requester from the request, not from the body, and starts without status', async t => {
  const fx = await openFixture()
  t.teardown(() => fx.close())
  const csrs = fx.registry.handler('certificates.orch.io', 'v1', 'certificatesigningrequests')!
  const obj = await csrObject('a', { username: 'mallory', groups: ['system:masters'], uid: 'x' })
  obj.status = { conditions: [{ type: 'Approved', status: 'True' }] }
  const created = (await csrs.create(alice, '', body(obj))).object as { spec: Record<string, unknown>, status?: unknown }
  t.equal(created.spec.username, 'alice')
  t.equal(created.spec.uid, 'u-1')
  t.same(created.spec.groups, ['dev', 'system:authenticated'])
  t.same(created.spec.extra, { scopes: ['a'] })
  t.same(created.status ?? {}, {})
})

t.test('create validation refuses bad requests with Kubernetes field errors', async t => {
  const fx = await openFixture()
  t.teardown(() => fx.close())
  const csrs = fx.registry.handler('certificates.orch.io', 'v1', 'certificatesigningrequests')!
  // Another subject in the signed bytes: the structure parses, the signature does not verify.
  const { csrPem: otherPem } = await createCsr({ commonName: 'bob' })
  const der = Buffer.from(otherPem.replace(/-----[A-Z ]+-----|\s/g, ''), 'base64')
  der.write('bod', der.indexOf('bob'))
  const tampered = `-----BEGIN CERTIFICATE REQUEST-----\n${der.toString('base64')}\n-----END CERTIFICATE REQUEST-----\n`
  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    ['not PEM', { request: b64('hello') }, /^spec\.request: Invalid value: \[\]byte\{0x68, .*\}: PEM block type must be CERTIFICATE REQUEST$/],
    ['a certificate instead', { request: b64('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n') }, /spec\.request: .*PEM block type must be CERTIFICATE REQUEST/],
    ['no usages', { usages: [] }, /^spec\.usages: Required value$/],
    ['unknown usage', { usages: ['client auth', 'flying'] }, /^spec\.usages\[1\]: Unsupported value: "flying": supported values: "any", "cert sign", /],
    ['duplicate usage', { usages: ['client auth', 'client auth'] }, /^spec\.usages\[1\]: Duplicate value: "client auth"$/],
    ['legacy signer', { signerName: 'orch.io/legacy-unknown' }, /^spec\.signerName: Invalid value: "orch\.io\/legacy-unknown": the legacy signerName is not allowed via this API version$/],
    ['unqualified signer', { signerName: 'my-signer' }, /^spec\.signerName: Invalid value: "my-signer": must be a fully qualified domain and path of the form 'example\.com\/signer-name'$/],
    ['one-label domain', { signerName: 'example/signer' }, /^spec\.signerName: Invalid value: "example": should be a domain with at least two segments separated by dots$/],
    ['short expiration', { expirationSeconds: 599 }, /^spec\.expirationSeconds: Invalid value: 599: may not specify a duration less than 600 seconds \(10 minutes\)$/]
  ]
  for (const [what, spec, want] of cases) {
    const causes = await causesOf(csrs.create(alice, '', body(await csrObject('bad', spec))))
    t.ok(causes.some(c => want.test(c)), `${what}: ${causes.join(' | ')}`)
  }
  const signature = await causesOf(csrs.create(alice, '', body(await csrObject('bad', { request: b64(tampered) }))))
  t.equal(signature.length, 1)
  t.match(signature[0], /^spec\.request: Invalid value: \[\]byte\{0x2d, .*\}: x509: ECDSA verification failure$/, 'a request whose signature does not verify')
  const missing = await causesOf(csrs.create(alice, '', body(await csrObject('bad', { signerName: undefined }))))
  t.same(missing, ['spec.signerName: Required value'])
})

t.test('approval changes only the conditions; Approved and Denied exclude each other and cannot be removed', async t => {
  const fx = await openFixture()
  t.teardown(() => fx.close())
  const csrs = fx.registry.handler('certificates.orch.io', 'v1', 'certificatesigningrequests')!
  const created = (await csrs.create(alice, '', body(await csrObject('a')))).object
  const approved = (await csrs.update(ctx(), '', 'a', body({
    ...created,
    spec: { ...(created.spec as object), usages: ['server auth'] },
    status: { certificate: b64('x'), conditions: [{ type: 'Approved', status: 'True', reason: 'KubectlApprove' }] }
  }), 'approval')).object as Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any
  t.same(approved.spec.usages, ['client auth'], 'the spec stays')
  t.equal(approved.status.certificate, undefined, 'a certificate cannot come through approval')
  t.equal(approved.status.conditions[0].type, 'Approved')
  t.match(approved.status.conditions[0].lastUpdateTime, /Z$/, 'timestamps are filled in')
  t.match(approved.status.conditions[0].lastTransitionTime, /Z$/)
  const both = await causesOf(csrs.update(ctx(), '', 'a', body({
    ...approved, status: { conditions: [...approved.status.conditions, { type: 'Denied', status: 'True' }] }
  }), 'approval'))
  t.same(both, ['status.conditions[1].type: Invalid value: "Denied": Approved and Denied conditions are mutually exclusive'])
  const removed = await causesOf(csrs.update(ctx(), '', 'a', body({ ...approved, status: { conditions: [] } }), 'approval'))
  t.same(removed, ['status.conditions: Forbidden: updates may not remove a condition of type "Approved"'])
})

t.test('status writes set the certificate once and only on an approved request, and cannot approve', async t => {
  const fx = await openFixture()
  t.teardown(() => fx.close())
  const csrs = fx.registry.handler('certificates.orch.io', 'v1', 'certificatesigningrequests')!
  const created = (await csrs.create(alice, '', body(await csrObject('a')))).object
  const viaStatus = (await csrs.update(ctx(), '', 'a', body({ ...created, status: { conditions: [{ type: 'Approved', status: 'True' }] } }), 'status')).object
  t.same((viaStatus.status as { conditions?: unknown[] } | undefined)?.conditions ?? [], [], '/status cannot approve')
  const certPem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n'
  const unapproved = await causesOf(csrs.update(ctx(), '', 'a', body({ ...viaStatus, status: { certificate: b64(certPem) } }), 'status'))
  t.same(unapproved, ['status.certificate: Forbidden: updates may not set certificate content unless the request is approved'])
  const approved = (await csrs.update(ctx(), '', 'a', body({ ...viaStatus, status: { conditions: [{ type: 'Approved', status: 'True' }] } }), 'approval')).object as Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any
  const notPem = await causesOf(csrs.update(ctx(), '', 'a', body({ ...approved, status: { ...approved.status, certificate: b64('junk') } }), 'status'))
  t.same(notPem, ['status.certificate: Invalid value: "<certificate data>": must contain at least one CERTIFICATE PEM block'])
  const issued = (await csrs.update(ctx(), '', 'a', body({ ...approved, status: { ...approved.status, certificate: b64(certPem) } }), 'status')).object as Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any
  t.equal(issued.status.certificate, b64(certPem))
  const again = await causesOf(csrs.update(ctx(), '', 'a', body({ ...issued, status: { ...issued.status, certificate: b64(certPem + certPem) } }), 'status'))
  t.same(again, ['status.certificate: Forbidden: updates may not modify existing certificate content'])
  const main = (await csrs.update(ctx(), '', 'a', body({ ...issued, metadata: { ...issued.metadata, labels: { a: 'b' } }, status: {} }))).object as Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any
  t.equal(main.status.certificate, b64(certPem), 'a main write keeps the status')
  t.same(main.metadata.labels, { a: 'b' })
})

t.test('no system:masters client certificates through the API server client signer (CertificateSubjectRestriction)', async t => {
  const fx = await openFixture()
  t.teardown(() => fx.close())
  const { csrPem } = await createCsr({ commonName: 'eve', organizations: ['system:masters'] })
  const obj = { ...(await csrObject('eve')), spec: { request: b64(csrPem), signerName: 'orch.io/orch-apiserver-client', usages: ['client auth'] } }
  for (const group of ['certificates.orch.io', 'certificates.k8s.io']) {
    const csrs = fx.registry.handler(group, 'v1', 'certificatesigningrequests')!
    await t.rejects(csrs.create(alice, '', body({ ...obj, apiVersion: `${group}/v1` })), {
      code: 403, message: `certificatesigningrequests.${group} "eve" is forbidden: use of orch.io/orch-apiserver-client signer with system:masters group is not allowed`
    })
  }
  const other = fx.registry.handler('certificates.orch.io', 'v1', 'certificatesigningrequests')!
  await t.resolves(other.create(alice, '', body({ ...obj, spec: { ...obj.spec, signerName: 'example.com/masters' } })), 'other signers decide for themselves')
})

t.test('with a signer permission, approving needs approve and issuing needs sign on the signer (or its domain wildcard)', async t => {
  const asked: string[] = []
  const authorizer: Authorizer = {
    async authorize (a: Attributes) {
      asked.push(`${a.user.username} ${a.verb} ${a.apiGroup}/${a.resource} ${a.name}`)
      const ok = (a.user.username === 'approver' && a.verb === 'approve' && a.name === 'orch.io/*') ||
        (a.user.username === 'signer' && a.verb === 'sign' && a.name === 'orch.io/orch-apiserver-client')
      return { decision: ok ? 'allow' : 'noOpinion', reason: '' }
    }
  }
  const fx = await openFixture({ signerPermission: signerPermission(authorizer) })
  t.teardown(() => fx.close())
  const csrs = fx.registry.handler('certificates.k8s.io', 'v1', 'certificatesigningrequests')!
  const who = (username: string): RequestContext => ({ ...ctx(), user: { username, groups: [] } })
  const created = (await csrs.create(alice, '', body({ ...(await csrObject('a')), apiVersion: 'certificates.k8s.io/v1' }))).object
  const approve = { ...created, status: { conditions: [{ type: 'Approved', status: 'True' }] } }
  await t.rejects(csrs.update(who('alice'), '', 'a', body(approve), 'approval'), {
    code: 403, message: 'certificatesigningrequests.certificates.k8s.io "a" is forbidden: user not permitted to approve requests with signerName "orch.io/orch-apiserver-client"'
  })
  t.same(asked.splice(0), ['alice approve certificates.k8s.io/signers orch.io/orch-apiserver-client', 'alice approve certificates.k8s.io/signers orch.io/*'])
  const approved = (await csrs.update(who('approver'), '', 'a', body(approve), 'approval')).object as Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any
  const cert = { ...approved, status: { ...approved.status, certificate: b64('-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n') } }
  await t.rejects(csrs.update(who('approver'), '', 'a', body(cert), 'status'), { code: 403, message: /user not permitted to sign requests with signerName "orch\.io\/orch-apiserver-client"$/ })
  const issued = (await csrs.update(who('signer'), '', 'a', body(cert), 'status')).object as Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any
  t.ok(issued.status.certificate, 'the signer may issue')
  asked.length = 0
  await csrs.update(who('nobody'), '', 'a', body({ ...issued, metadata: { ...issued.metadata, labels: { x: 'y' } } }))
  t.same(asked, [], 'other writes ask nothing')
})
