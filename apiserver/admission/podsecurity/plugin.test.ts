// The plugin's modes, labels, exemptions, configuration, pod controllers and namespace updates.

import t from 'tap'
import { builtinDefinitions } from '../../schema/builtin/catalog.js'
import type { WriteAttributes, WriteOperation } from '../../registry/admission.js'
import type { RequestContext } from '../../registry/types.js'
import { isStatusError, type StatusError } from '../../errors/status-error.js'
import { createPodSecurityPlugin, AUDIT_ENFORCE_POLICY, AUDIT_EXEMPT, AUDIT_VIOLATIONS } from './plugin.js'
import type { Obj } from './pod-view.js'

const defs = builtinDefinitions()
const def = (group: string, kind: string): WriteAttributes['definition'] => {
  const d = defs.find(x => x.group === group && x.kind === kind)
  if (d === undefined) throw new Error(`no ${group}/${kind}`)
  return d
}

const privilegedPod = (name = 'x'): Obj => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'ns' },
  spec: { containers: [{ name: 'c', image: 'i', securityContext: { privileged: true } }] }
})
const plainPod = (name = 'x'): Obj => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'ns' }, spec: { containers: [{ name: 'c', image: 'i' }] } })

function context (username = 'alice'): RequestContext {
  return { user: { username, groups: [] }, dryRun: false, fieldValidation: 'Strict', warnings: [] }
}

function attrs (kind: string, object: Obj, o: { group?: string, op?: WriteOperation, old?: Obj, ns?: string, user?: string } = {}): WriteAttributes {
  const meta = object.metadata as { name: string }
  return {
    operation: o.op ?? 'CREATE', definition: def(o.group ?? '', kind), namespace: o.ns ?? 'ns', name: meta.name,
    subresource: '', object, oldObject: o.old, ctx: context(o.user)
  }
}

function setup (labels: Record<string, string>, config?: unknown, pods: Obj[] = []): ReturnType<typeof createPodSecurityPlugin> {
  const namespaces = new Map<string, Obj>([['ns', { metadata: { name: 'ns', labels } }]])
  return createPodSecurityPlugin({ namespaceLookup: async n => namespaces.get(n), podsInNamespace: async () => pods }, config)
}

const refusal = async (p: Promise<void>): Promise<StatusError | undefined> => p.then(() => undefined, (e: unknown) => { if (isStatusError(e)) return e; throw e })

t.test('enforce refuses with Kubernetes\' message; orch and Kubernetes labels both count', async t => {
  for (const prefix of ['pod-security.orch.io', 'pod-security.kubernetes.io']) {
    const { validating } = setup({ [`${prefix}/enforce`]: 'baseline' })
    const a = attrs('Pod', privilegedPod())
    const err = await refusal(validating.admit(a))
    t.equal(err?.code, 403, prefix)
    t.equal(err?.reason, 'Forbidden')
    t.equal(err?.message, 'pods "x" is forbidden: violates PodSecurity "baseline:latest": privileged (container "c" must not set securityContext.privileged=true)')
    t.equal(a.ctx.auditAnnotations?.[AUDIT_ENFORCE_POLICY], 'baseline:latest')
    t.same(a.ctx.warnings, [], 'warn defaults to enforce, which is not repeated as a warning')
    t.equal(await refusal(validating.admit(attrs('Pod', plainPod()))), undefined, 'a compliant pod passes')
  }
})

t.test('enforce-version pins the policy and is named in the message', async t => {
  const { validating } = setup({ 'pod-security.orch.io/enforce': 'restricted', 'pod-security.orch.io/enforce-version': 'v1.22' })
  const pod = plainPod()
  ;(pod.spec as { containers: Obj[] }).containers[0].securityContext = { runAsUser: 0, runAsNonRoot: true, allowPrivilegeEscalation: false, seccompProfile: { type: 'RuntimeDefault' }, capabilities: { drop: ['ALL'] } }
  t.equal(await refusal(validating.admit(attrs('Pod', pod))), undefined, 'runAsUser=0 is allowed before v1.23')
  const err = await refusal(validating.admit(attrs('Pod', privilegedPod())))
  t.match(err?.message, /^pods "x" is forbidden: violates PodSecurity "restricted:v1.22": privileged \(/)
})

t.test('warn adds a warning and audit an audit annotation, without refusing', async t => {
  const { validating } = setup({ 'pod-security.orch.io/warn': 'baseline', 'pod-security.orch.io/audit': 'restricted', 'pod-security.orch.io/audit-version': 'v1.29' })
  const a = attrs('Pod', privilegedPod())
  await validating.admit(a)
  t.same(a.ctx.warnings, ['would violate PodSecurity "baseline:latest": privileged (container "c" must not set securityContext.privileged=true)'])
  t.match(a.ctx.auditAnnotations?.[AUDIT_VIOLATIONS], /^would violate PodSecurity "restricted:v1.29": privileged \(.*\), allowPrivilegeEscalation != false/)
  t.equal(a.ctx.auditAnnotations?.[AUDIT_ENFORCE_POLICY], 'privileged:latest')
})

t.test('a refused pod also gets the warning of a different warn policy', async t => {
  const { validating } = setup({ 'pod-security.orch.io/enforce': 'baseline', 'pod-security.orch.io/warn': 'restricted' })
  const a = attrs('Pod', privilegedPod())
  t.equal((await refusal(validating.admit(a)))?.code, 403)
  t.match(a.ctx.warnings, [/^would violate PodSecurity "restricted:latest": privileged/])
})

t.test('exemptions by namespace, user and runtime class come from the configuration', async t => {
  for (const apiVersion of ['pod-security.admission.config.k8s.io/v1', 'pod-security.admission.config.orch.io/v1']) {
    const config = { apiVersion, kind: 'PodSecurityConfiguration', exemptions: { usernames: ['root-bot'], runtimeClasses: ['kata'], namespaces: ['sys'] } }
    const { validating } = setup({ 'pod-security.orch.io/enforce': 'restricted' }, config)
    const byUser = attrs('Pod', privilegedPod(), { user: 'root-bot' })
    await validating.admit(byUser)
    t.equal(byUser.ctx.auditAnnotations?.[AUDIT_EXEMPT], 'user', apiVersion)
    const kata = privilegedPod()
    ;(kata.spec as Obj).runtimeClassName = 'kata'
    const byClass = attrs('Pod', kata)
    await validating.admit(byClass)
    t.equal(byClass.ctx.auditAnnotations?.[AUDIT_EXEMPT], 'runtimeClass')
    const inSys = attrs('Pod', privilegedPod(), { ns: 'sys' })
    await validating.admit(inSys)
    t.equal(inSys.ctx.auditAnnotations?.[AUDIT_EXEMPT], 'namespace')
    t.equal((await refusal(validating.admit(attrs('Pod', privilegedPod()))))?.code, 403, 'anyone else is refused')
  }
})

t.test('configured defaults apply to namespaces without labels; labels override them', async t => {
  const config = { apiVersion: 'pod-security.admission.config.k8s.io/v1', kind: 'PodSecurityConfiguration', defaults: { enforce: 'baseline', 'enforce-version': 'v1.28' } }
  t.match((await refusal(setup({}, config).validating.admit(attrs('Pod', privilegedPod()))))?.message, /violates PodSecurity "baseline:v1.28"/)
  t.equal(await refusal(setup({ 'pod-security.orch.io/enforce': 'privileged' }, config).validating.admit(attrs('Pod', privilegedPod()))), undefined)
  t.throws(() => setup({}, { apiVersion: 'pod-security.admission.config.k8s.io/v1', defaults: { enforce: 'strict' } }), /defaults.enforce: Invalid value: "strict"/)
  t.throws(() => setup({}, { apiVersion: 'v9', kind: 'PodSecurityConfiguration' }), /apiVersion: Unsupported value/)
})

t.test('pod updates are checked only when the spec or security annotations change', async t => {
  const { validating } = setup({ 'pod-security.orch.io/enforce': 'baseline' })
  const old = privilegedPod()
  const relabelled = privilegedPod()
  ;(relabelled.metadata as Obj).labels = { a: 'b' }
  t.equal(await refusal(validating.admit(attrs('Pod', relabelled, { op: 'UPDATE', old }))), undefined, 'metadata-only update of a running pod passes')
  const reimaged = privilegedPod()
  ;(reimaged.spec as { containers: Obj[] }).containers[0].image = 'j'
  t.equal((await refusal(validating.admit(attrs('Pod', reimaged, { op: 'UPDATE', old }))))?.code, 403)
  const status = attrs('Pod', privilegedPod())
  status.subresource = 'status'
  t.equal(await refusal(validating.admit(status)), undefined, 'status writes are not checked')
})

t.test('pod controllers get warnings and audit annotations on their template, never a refusal', async t => {
  const { validating } = setup({ 'pod-security.orch.io/enforce': 'restricted' })
  const template = { metadata: { labels: { app: 'a' } }, spec: (privilegedPod().spec as Obj) }
  const workloads: Array<[string, string, Obj]> = [
    ['apps', 'Deployment', { spec: { template } }], ['apps', 'ReplicaSet', { spec: { template } }],
    ['apps', 'StatefulSet', { spec: { template } }], ['apps', 'DaemonSet', { spec: { template } }],
    ['batch', 'Job', { spec: { template } }], ['batch', 'CronJob', { spec: { jobTemplate: { spec: { template } } } }],
    ['', 'ReplicationController', { spec: { template } }], ['', 'PodTemplate', { template }]
  ]
  for (const [group, kind, rest] of workloads) {
    const a = attrs(kind, { metadata: { name: 'w', namespace: 'ns' }, ...rest }, { group })
    await validating.admit(a)
    t.match(a.ctx.warnings, [/^would violate PodSecurity "restricted:latest": privileged \(container "c" must not set securityContext.privileged=true\), allowPrivilegeEscalation/], kind)
  }
  const audited = setup({ 'pod-security.kubernetes.io/audit': 'baseline' })
  const a = attrs('Deployment', { metadata: { name: 'w', namespace: 'ns' }, spec: { template } }, { group: 'apps' })
  await audited.validating.admit(a)
  t.match(a.ctx.auditAnnotations?.[AUDIT_VIOLATIONS], /^would violate PodSecurity "baseline:latest": privileged/)
  t.same(a.ctx.warnings, [])
})

t.test('invalid namespace label values are refused', async t => {
  const { validating } = setup({})
  const ns = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bad', labels: { 'pod-security.orch.io/enforce': 'strict', 'pod-security.kubernetes.io/warn-version': '1.29' } } }
  const err = await refusal(validating.admit({ ...attrs('Namespace', ns), namespace: '' }))
  t.equal(err?.code, 422)
  t.equal(err?.message, 'Namespace "bad" is invalid: [metadata.labels[pod-security.orch.io/enforce]: Invalid value: "strict": must be one of privileged, baseline, restricted, ' +
    'metadata.labels[pod-security.kubernetes.io/warn-version]: Invalid value: "1.29": must be "latest" or "v1.x"]')
  const good = { ...ns, metadata: { name: 'good', labels: { 'pod-security.orch.io/enforce': 'restricted', 'pod-security.orch.io/enforce-version': 'v1.25' } } }
  t.equal(await refusal(validating.admit({ ...attrs('Namespace', good), namespace: '' })), undefined)
})

t.test('a stricter enforce label on a namespace warns about the pods already in it', async t => {
  const ok = plainPod('fine')
  ;(ok.spec as { containers: Obj[] }).containers[0].securityContext = { runAsNonRoot: true, allowPrivilegeEscalation: false, seccompProfile: { type: 'RuntimeDefault' }, capabilities: { drop: ['ALL'] } }
  const { validating } = setup({}, undefined, [privilegedPod('p1'), privilegedPod('p2'), plainPod('plain'), ok])
  const old = { metadata: { name: 'ns', labels: {} } }
  const now = { metadata: { name: 'ns', labels: { 'pod-security.orch.io/enforce': 'restricted' } } }
  const a = { ...attrs('Namespace', now, { op: 'UPDATE', old }), namespace: '' }
  await validating.admit(a)
  t.same(a.ctx.warnings, [
    'existing pods in namespace "ns" violate the new PodSecurity enforce level "restricted:latest"',
    'p1 (and 1 other pod): privileged, allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile',
    'plain: allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile'
  ])
  const same = { ...attrs('Namespace', now, { op: 'UPDATE', old: now }), namespace: '' }
  await validating.admit(same)
  t.same(same.ctx.warnings, [], 'no evaluation when the enforce policy is unchanged')
})

t.test('labelling an exempt namespace warns that its policy is ignored', async t => {
  const config = { apiVersion: 'pod-security.admission.config.k8s.io/v1', kind: 'PodSecurityConfiguration', exemptions: { namespaces: ['kube-system'] } }
  const { validating } = setup({}, config, [privilegedPod('p')])
  const ns = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kube-system', labels: { 'pod-security.kubernetes.io/enforce': 'baseline' } } }
  const a = { ...attrs('Namespace', ns, { op: 'UPDATE', old: { metadata: { name: 'kube-system' } } }), namespace: '' }
  await validating.admit(a)
  t.same(a.ctx.warnings, ['namespace "kube-system" is exempt from Pod Security, and the policy (enforce=baseline:latest) will be ignored'])
  const plain = { ...attrs('Namespace', { metadata: { name: 'kube-system' } }), namespace: '' }
  await validating.admit(plain)
  t.same(plain.ctx.warnings, [], 'no labels, no warning')
})

t.test('a namespace update still succeeds when its pods cannot be listed', async t => {
  const plugin = createPodSecurityPlugin({ namespaceLookup: async () => undefined, podsInNamespace: async () => { throw new Error('storage down') } })
  const now = { metadata: { name: 'ns', labels: { 'pod-security.orch.io/enforce': 'baseline' } } }
  const a = { ...attrs('Namespace', now, { op: 'UPDATE', old: { metadata: { name: 'ns' } } }), namespace: '' }
  await plugin.validating.admit(a)
  t.same(a.ctx.warnings, ['failed to list pods while checking new PodSecurity enforce level'])
})
