// PodSecurity in the registry's admission chain, reading namespaces and pods through the registry itself.

import t from 'tap'
import { body, ctx, openFixture } from '../../registry/testing.js'
import type { Registry } from '../../registry/types.js'
import { isStatusError } from '../../errors/status-error.js'
import { createPodSecurityPlugin } from './plugin.js'
import { registryPodSecurityDeps } from './registry-deps.js'

const pod = (name: string, securityContext: Record<string, unknown> = {}): Record<string, unknown> => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'busybox', securityContext }] }
})

t.test('restricted refuses a privileged pod with Kubernetes\' message; namespace label changes warn about existing pods', async t => {
  let registry: Registry | undefined
  const plugin = createPodSecurityPlugin(registryPodSecurityDeps(() => registry!))
  const fx = await openFixture({ admission: [plugin.validating] })
  registry = fx.registry
  t.teardown(() => fx.close())
  const namespaces = fx.registry.handler('', 'v1', 'namespaces')!
  const pods = fx.registry.handler('', 'v1', 'pods')!

  await namespaces.create(ctx(), '', body({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'secure', labels: { 'pod-security.orch.io/enforce': 'restricted' } } }))
  const c = ctx()
  const err = await pods.create(c, 'secure', body(pod('x', { privileged: true }))).catch((e: unknown) => e)
  t.ok(isStatusError(err))
  if (!isStatusError(err)) return
  t.equal(err.code, 403)
  t.equal(err.message, 'pods "x" is forbidden: violates PodSecurity "restricted:latest": ' +
    'privileged (container "c" must not set securityContext.privileged=true), ' +
    'allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), ' +
    'unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), ' +
    'runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), ' +
    'seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")')
  t.same(c.auditAnnotations, { 'pod-security.kubernetes.io/enforce-policy': 'restricted:latest' })

  const compliant = { allowPrivilegeEscalation: false, runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' }, capabilities: { drop: ['ALL'] } }
  const made = await pods.create(ctx(), 'secure', body(pod('ok', compliant)))
  t.equal((made.object.metadata as { name: string }).name, 'ok', 'a restricted-compliant pod is stored')

  await namespaces.create(ctx(), '', body({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'open' } }))
  await pods.create(ctx(), 'open', body(pod('root', { privileged: true })))
  const relabel = ctx()
  await namespaces.patch(relabel, '', 'open', cur => ({ ...cur, metadata: { ...(cur.metadata as object), labels: { 'pod-security.kubernetes.io/enforce': 'baseline' } } }))
  t.same(relabel.warnings, [
    'existing pods in namespace "open" violate the new PodSecurity enforce level "baseline:latest"',
    'root: privileged'
  ])

  const bad = await namespaces.create(ctx(), '', body({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bad', labels: { 'pod-security.orch.io/warn': 'nope' } } })).catch((e: unknown) => e)
  t.equal(isStatusError(bad) ? bad.code : 0, 422, 'an invalid level label is refused')

  const deploy = ctx()
  await fx.registry.handler('apps', 'v1', 'deployments')!.create(deploy, 'secure', body({
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' },
    spec: { selector: { matchLabels: { app: 'd' } }, template: { metadata: { labels: { app: 'd' } }, spec: pod('t', { privileged: true }).spec } }
  }))
  t.match(deploy.warnings, [/^would violate PodSecurity "restricted:latest": privileged/], 'a deployment is stored with a warning')
})
