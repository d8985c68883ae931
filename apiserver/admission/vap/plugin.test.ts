import t from 'tap'
import { openFixture, ctx, body, eventually, type Fixture } from '../../registry/testing.js'
import type { WriteAdmission } from '../../registry/admission.js'
import { createSandboxPool } from '../../../sandbox/pool.js'
import { StatusError } from '../../errors/status-error.js'
import { createFeatureGates } from '../../featuregate/featuregate.js'
import { privilegedGroup } from '../../auth/authorizer.js'
import type { Authorizer } from '../../auth/types.js'
import { createValidatingAdmissionPolicyPlugin, AUDIT_KEY, type ValidatingAdmissionPolicyPlugin } from './plugin.js'

const G = 'admissionregistration.orch.io'
/** Each of the 1000 steps scans the object's 200,000-character string: 20M units, twice the per-call budget. */
const BOMB = "[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, !object.data.s.contains('b'))))"

async function setup (t: Tap.Test, authorizer?: Authorizer): Promise<{ f: Fixture, plugin: ValidatingAdmissionPolicyPlugin }> {
  const pool = createSandboxPool({ size: 1 })
  const holder: { a?: WriteAdmission } = {}
  const f = await openFixture({ policyExpressions: pool, admission: [{ admit: async a => await holder.a?.admit(a) }] })
  const plugin = createValidatingAdmissionPolicyPlugin({ registry: f.registry, evaluator: pool, authorizer })
  holder.a = plugin.validating
  await plugin.start()
  t.teardown(async () => { plugin.stop(); await f.close(); await pool.close() })
  return { f, plugin }
}

const h = (f: Fixture, g: string, v: string, p: string) => f.registry.handler(g, v, p)!
const cm = (name: string, data: Record<string, string>, labels: Record<string, string> = {}) =>
  body({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels }, data })

function policy (name: string, spec: Record<string, unknown>) {
  return body({
    apiVersion: `${G}/v1beta1`, kind: 'ValidatingAdmissionPolicy', metadata: { name },
    spec: { matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['configmaps'] }] }, ...spec }
  })
}
function binding (name: string, policyName: string, spec: Record<string, unknown> = {}) {
  return body({ apiVersion: `${G}/v1beta1`, kind: 'ValidatingAdmissionPolicyBinding', metadata: { name }, spec: { policyName, validationActions: ['Deny'], ...spec } })
}

async function rejection (p: Promise<unknown>): Promise<StatusError> {
  try { await p } catch (err) { if (err instanceof StatusError) return err; throw err }
  throw new Error('write was admitted')
}

/** Waits until the plugin's watch has seen the policy: a probe write (fresh name each time) is refused by it. */
async function until (probe: (name: string) => Promise<unknown>): Promise<void> {
  let n = 0
  await eventually(async () => {
    try { await probe(`probe-${n++}`); return false } catch (err) { return (err as Error).message.includes('ValidatingAdmissionPolicy') }
  })
}

// Declared in tap's global namespace for the setup helper's parameter type.
declare global { namespace Tap { type Test = import('tap').Test } }

t.test('a policy with an expression that does not compile is refused, naming the field', async t => {
  const { f } = await setup(t)
  const err = await rejection(h(f, G, 'v1beta1', 'validatingadmissionpolicies').create(ctx(), '', policy('bad', {
    validations: [{ expression: 'object.data.size() >' }], variables: [{ name: 'x', expression: '1 +' }]
  })))
  t.equal(err.code, 422)
  const fields = (err.details?.causes ?? []).map(c => c.field)
  t.ok(fields.includes('spec.validations[0].expression'), JSON.stringify(err.details))
  t.ok(fields.includes('spec.variables[0].expression'))
  const b = await rejection(h(f, G, 'v1beta1', 'validatingadmissionpolicybindings').create(ctx(), '', binding('b', '', { validationActions: ['Deny', 'Deny'] })))
  t.same(b.details?.causes?.map(c => c.field).sort(), ['spec.policyName', 'spec.validationActions[1]'])
})

t.test('Deny refuses with the messageExpression, variables and the request; other writes pass', async t => {
  const { f } = await setup(t)
  await h(f, G, 'v1beta1', 'validatingadmissionpolicies').create(ctx(), '', policy('max-keys', {
    variables: [{ name: 'n', expression: 'size(object.data)' }],
    validations: [{ expression: 'variables.n <= 2', messageExpression: "'too many keys: ' + string(variables.n) + ' by ' + request.userInfo.username" }]
  }))
  await h(f, G, 'v1beta1', 'validatingadmissionpolicybindings').create(ctx(), '', binding('max-keys-b', 'max-keys'))
  const cms = h(f, '', 'v1', 'configmaps')
  await until(name => cms.create(ctx(), 'default', cm(name, { a: '1', b: '2', c: '3' })))
  const err = await rejection(cms.create(ctx(), 'default', cm('big', { a: '1', b: '2', c: '3' })))
  t.equal(err.code, 422)
  t.equal(err.reason, 'Invalid')
  t.equal(err.message, "configmaps \"big\" is forbidden: ValidatingAdmissionPolicy 'max-keys' with binding 'max-keys-b' denied request: too many keys: 3 by tester")
  await cms.create(ctx(), 'default', cm('small', { a: '1' }))
  await h(f, '', 'v1', 'secrets').create(ctx(), 'default', body({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, stringData: { a: '1', b: '2', c: '3' } }))
})

t.test('Warn and Audit admit the write with a warning and the audit annotation', async t => {
  const { f } = await setup(t)
  await h(f, G, 'v1beta1', 'validatingadmissionpolicies').create(ctx(), '', policy('named', {
    validations: [{ expression: "object.metadata.name.startsWith('ok-')", message: 'names start with ok-', reason: 'Forbidden' }],
    auditAnnotations: [{ key: 'seen', valueExpression: "'name ' + object.metadata.name" }]
  }))
  await h(f, G, 'v1beta1', 'validatingadmissionpolicybindings').create(ctx(), '', binding('named-b', 'named', { validationActions: ['Warn', 'Audit'] }))
  const cms = h(f, '', 'v1', 'configmaps')
  await eventually(async () => { const c = ctx(); await cms.create(c, 'default', cm(`w${Date.now()}`, {})); return c.warnings.length > 0 })
  const c = ctx()
  await cms.create(c, 'default', cm('plain', {}))
  t.same(c.warnings, ["Validation failed for ValidatingAdmissionPolicy 'named' with binding 'named-b': names start with ok-"])
  t.same(JSON.parse(c.auditAnnotations![AUDIT_KEY]), [{ message: 'names start with ok-', policy: 'named', binding: 'named-b', expressionIndex: 0, validationActions: ['Warn', 'Audit'] }])
  t.equal(c.auditAnnotations!['named/seen'], 'name plain')
  const ok = ctx()
  await cms.create(ok, 'default', cm('ok-1', {}))
  t.same(ok.warnings, [])
})

t.test('params come from the ConfigMap the binding names; a missing one follows parameterNotFoundAction', async t => {
  const { f } = await setup(t)
  const cms = h(f, '', 'v1', 'configmaps')
  await cms.create(ctx(), 'default', cm('limits', { max: '1' }))
  await h(f, G, 'v1beta1', 'validatingadmissionpolicies').create(ctx(), '', policy('p', {
    paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
    matchConstraints: { resourceRules: [{ apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['deployments'] }] },
    validations: [{ expression: 'object.spec.replicas <= int(params.data.max)', messageExpression: "'replicas above ' + params.data.max" }]
  }))
  await h(f, G, 'v1beta1', 'validatingadmissionpolicybindings').create(ctx(), '', binding('p-b', 'p', { paramRef: { name: 'limits', parameterNotFoundAction: 'Deny' } }))
  const deploy = (name: string, ns: string, replicas: number) => body({
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name },
    spec: { replicas, selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'i' }] } } }
  })
  const deployments = h(f, 'apps', 'v1', 'deployments')
  await until(name => deployments.create(ctx(), 'default', deploy(name, 'default', 5)))
  const err = await rejection(deployments.create(ctx(), 'default', deploy('big', 'default', 2)))
  t.match(err.message, /denied request: replicas above 1$/)
  await deployments.create(ctx(), 'default', deploy('one', 'default', 1))
  await h(f, '', 'v1', 'namespaces').create(ctx(), '', body({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'other' } }))
  const missing = await rejection(deployments.create(ctx(), 'other', deploy('one', 'other', 1)))
  t.match(missing.message, /no params found for policy binding with `Deny` parameterNotFoundAction/)
})

t.test('a cost bomb is stopped by the budget and the policy fails closed', async t => {
  const { f } = await setup(t)
  await h(f, G, 'v1beta1', 'validatingadmissionpolicies').create(ctx(), '', policy('bomb', {
    validations: [{ expression: BOMB }]
  }))
  await h(f, G, 'v1beta1', 'validatingadmissionpolicybindings').create(ctx(), '', binding('bomb-b', 'bomb'))
  const cms = h(f, '', 'v1', 'configmaps')
  await until(name => cms.create(ctx(), 'default', cm(name, { s: 'a'.repeat(200_000) })))
  const err = await rejection(cms.create(ctx(), 'default', cm('x', { s: 'a'.repeat(200_000) })))
  t.match(err.message, /ValidatingAdmissionPolicy 'bomb' with binding 'bomb-b' denied request: expression '.*' resulted in error: operation cancelled: actual cost limit exceeded$/)
})

t.test('with the ValidatingAdmissionPolicy gate off (its default) policies are not enforced', async t => {
  const pool = createSandboxPool({ size: 1 })
  const holder: { a?: WriteAdmission } = {}
  const f = await openFixture({ policyExpressions: pool, admission: [{ admit: async a => await holder.a?.admit(a) }] })
  t.teardown(async () => { await f.close(); await pool.close() })
  const off = createValidatingAdmissionPolicyPlugin({ registry: f.registry, evaluator: pool, featureGates: createFeatureGates({}) })
  holder.a = off.validating
  await off.start()
  await h(f, G, 'v1beta1', 'validatingadmissionpolicies').create(ctx(), '', policy('never', { validations: [{ expression: 'false' }] }))
  await h(f, G, 'v1beta1', 'validatingadmissionpolicybindings').create(ctx(), '', binding('never-b', 'never'))
  await new Promise(resolve => setTimeout(resolve, 200))
  await h(f, '', 'v1', 'configmaps').create(ctx(), 'default', cm('admitted', {}))
  const on = createValidatingAdmissionPolicyPlugin({ registry: f.registry, evaluator: pool, featureGates: createFeatureGates({ ValidatingAdmissionPolicy: true }) })
  holder.a = on.validating
  await on.start()
  t.teardown(() => on.stop())
  const err = await rejection(h(f, '', 'v1', 'configmaps').create(ctx(), 'default', cm('refused', {})))
  t.equal(err.message, "configmaps \"refused\" is forbidden: ValidatingAdmissionPolicy 'never' with binding 'never-b' denied request: failed expression: false")
})

t.test('UPDATE sees oldObject; DELETE sees the stored object as oldObject and object null', async t => {
  const { f } = await setup(t)
  await h(f, G, 'v1beta1', 'validatingadmissionpolicies').create(ctx(), '', body({
    apiVersion: `${G}/v1beta1`, kind: 'ValidatingAdmissionPolicy', metadata: { name: 'frozen' },
    spec: {
      matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['UPDATE', 'DELETE'], resources: ['configmaps'] }] },
      matchConditions: [{ name: 'frozen-only', expression: "has(oldObject.metadata.labels) && 'frozen' in oldObject.metadata.labels && oldObject.metadata.labels['frozen'] == 'true'" }],
      validations: [
        { expression: "request.operation != 'UPDATE' || object.data == oldObject.data", message: 'data is frozen' },
        { expression: "request.operation != 'DELETE' || object == null", message: 'delete sees no object' },
        { expression: "request.operation != 'DELETE'", messageExpression: "'cannot delete ' + oldObject.metadata.name" }
      ]
    }
  }))
  await h(f, G, 'v1beta1', 'validatingadmissionpolicybindings').create(ctx(), '', binding('frozen-b', 'frozen'))
  const cms = h(f, '', 'v1', 'configmaps')
  await cms.create(ctx(), 'default', cm('ice', { v: '1' }, { frozen: 'true' }))
  await cms.create(ctx(), 'default', cm('water', { v: '1' }))
  const update = (name: string, labels: Record<string, string>) => cms.update(ctx(), 'default', name, cm(name, { v: '2' }, labels))
  await until(async () => await update('ice', { frozen: 'true' }))
  const err = await rejection(update('ice', { frozen: 'true' }))
  t.match(err.message, /denied request: data is frozen$/)
  await update('water', {})
  const del = await rejection(cms.delete(ctx(), 'default', 'ice', {}))
  t.match(del.message, /denied request: cannot delete ice$/)
  await cms.delete(ctx(), 'default', 'water', {})
})

t.test('authorizer checks are decided by the injected Authorizer for the requesting user', async t => {
  // system:masters is allowed everything, anyone else nothing (the server's privileged-group authorizer).
  const { f } = await setup(t, privilegedGroup)
  await h(f, G, 'v1beta1', 'validatingadmissionpolicies').create(ctx(), '', policy('may-list', {
    validations: [{
      expression: "authorizer.group('').resource('secrets').namespace(object.metadata.namespace).check('list').allowed() || authorizer.path('/healthz').check('get').allowed()",
      messageExpression: "'user ' + request.userInfo.username + ' may not list secrets: ' + authorizer.group('').resource('secrets').namespace(object.metadata.namespace).check('list').reason()"
    }]
  }))
  await h(f, G, 'v1beta1', 'validatingadmissionpolicybindings').create(ctx(), '', binding('may-list-b', 'may-list'))
  const cms = h(f, '', 'v1', 'configmaps')
  await until(name => cms.create(ctx(), 'default', cm(name, {})))
  const err = await rejection(cms.create(ctx(), 'default', cm('x', {})))
  t.match(err.message, /denied request: user tester may not list secrets: $/)
  const admin = { ...ctx(), user: { username: 'root', groups: ['system:masters'] } }
  await cms.create(admin, 'default', cm('y', {}))
})

t.test('a policy with a CONNECT rule on pods/exec sees the PodExecOptions and can refuse the exec', async t => {
  const { f } = await setup(t)
  await h(f, G, 'v1beta1', 'validatingadmissionpolicies').create(ctx(), '', body({
    apiVersion: `${G}/v1beta1`, kind: 'ValidatingAdmissionPolicy', metadata: { name: 'no-shell' },
    spec: {
      matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CONNECT'], resources: ['pods/exec'] }] },
      validations: [{
        expression: "!(object.command[0] in ['sh', 'bash'])",
        messageExpression: "'no shell in ' + request.name + ' (' + object.kind + ', ' + request.operation + ' ' + request.resource.resource + '/' + request.subResource + ')'"
      }]
    }
  }))
  await h(f, G, 'v1beta1', 'validatingadmissionpolicybindings').create(ctx(), '', binding('no-shell-b', 'no-shell'))
  const exec = (command: string[]) => f.registry.admitConnect(ctx(), { group: '', version: 'v1', resource: 'pods', subresource: 'exec', namespace: 'default', name: 'web' },
    { kind: 'PodExecOptions', apiVersion: 'v1', stdout: true, command })
  await until(name => f.registry.admitConnect(ctx(), { group: '', version: 'v1', resource: 'pods', subresource: 'exec', namespace: 'default', name },
    { kind: 'PodExecOptions', apiVersion: 'v1', command: ['sh'] }))
  const err = await rejection(exec(['sh', '-c', 'id']))
  t.equal(err.code, 422)
  t.equal(err.message, "pods \"web\" is forbidden: ValidatingAdmissionPolicy 'no-shell' with binding 'no-shell-b' denied request: no shell in web (PodExecOptions, CONNECT pods/exec)")
  await exec(['ls'])
  await f.registry.admitConnect(ctx(), { group: '', version: 'v1', resource: 'pods', subresource: 'attach', namespace: 'default', name: 'web' },
    { kind: 'PodAttachOptions', apiVersion: 'v1', stdout: true })
})

t.test('namespaceObject and the binding\'s namespaceSelector follow the namespace\'s labels as they change', async t => {
  const { f } = await setup(t)
  const nss = h(f, '', 'v1', 'namespaces')
  await nss.create(ctx(), '', body({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team', labels: { tier: 'open' } } }))
  await h(f, G, 'v1beta1', 'validatingadmissionpolicies').create(ctx(), '', policy('frozen', {
    validations: [{ expression: "namespaceObject.metadata.labels.tier != 'frozen'", messageExpression: "'namespace ' + namespaceObject.metadata.name + ' is frozen'" }]
  }))
  await h(f, G, 'v1beta1', 'validatingadmissionpolicybindings').create(ctx(), '', binding('frozen-b', 'frozen', {
    matchResources: { namespaceSelector: { matchExpressions: [{ key: 'tier', operator: 'In', values: ['open', 'frozen'] }] } }
  }))
  const cms = h(f, '', 'v1', 'configmaps')
  const relabel = async (tier: string | undefined): Promise<void> => {
    await nss.patch(ctx(), '', 'team', cur => ({ ...cur, metadata: { ...(cur.metadata as object), labels: tier === undefined ? {} : { tier } } }))
  }
  const verdict = async (name: string): Promise<string> => {
    try { await cms.create(ctx('Strict', true), 'team', cm(name, {})); return 'admitted' } catch (err) { return (err as Error).message }
  }
  t.equal(await verdict('a'), 'admitted')
  await relabel('frozen')
  // The namespace reaches admission through the registry's namespace watch, a moment after the write.
  await eventually(async () => await verdict('b') !== 'admitted')
  t.match(await verdict('c'), /denied request: namespace team is frozen$/)
  t.same(f.registry.knownNamespace('team'), (await nss.get(ctx(), '', 'team', {}) as { object: unknown }).object, 'the watched namespace is the stored one')
  await relabel(undefined)
  // No longer selected by the binding: admitted, and namespaceObject.metadata.labels.tier is never read.
  await eventually(async () => await verdict('d') === 'admitted')
  t.equal(f.registry.knownNamespace('nowhere'), undefined)
})
